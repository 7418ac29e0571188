"""Shared test helpers for the SymbolLKG pipeline tests (no tests here).

`HashEmbedder` is a tiny deterministic bag-of-words embedder: texts sharing normalised
words get a high cosine, so retrieval tests exercise the real vector path without a model.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

import numpy as np

from kgreason.lkg.ids import lkg_name_key


class HashEmbedder:
    name = "test-hash"

    def __init__(self, dim: int = 256):
        self.dim = dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in lkg_name_key(t).split():
                h = int.from_bytes(hashlib.blake2b(w.encode(), digest_size=4).digest(), "little")
                out[i, h % self.dim] += 1.0
            n = np.linalg.norm(out[i])
            if n:
                out[i] /= n
        return out


def js(obj: object) -> str:
    return json.dumps(obj)


#: Figure 2 of the paper: the scholarship example, as an extraction LLM would return it.
SCHOLARSHIP_CONTEXT = (
    'To qualify for the "Future Leaders Scholarship", applicants must be enrolled in a STEM '
    "major and hold a GPA >= 3.8. Alice is a STEM major with a 3.9 GPA. She recently "
    'published a paper. Bob studies Arts (GPA 3.5). The "Arts Nova Award" requires a portfolio.'
)
SCHOLARSHIP_QUESTION = "Is Alice eligible for the Future Leaders Scholarship?"
SCHOLARSHIP_EXTRACTION = {
    "entities": [
        {"name": "Alice", "type": "Person"},
        {"name": "Bob", "type": "Person"},
        {"name": "Future Leaders Scholarship", "type": "Scholarship"},
        {"name": "Arts Nova Award", "type": "Award"},
        {"name": "paper", "type": "Publication"},
        {"name": "portfolio", "type": "Document"},
    ],
    "concepts": [
        {"name": "STEM major", "type": "Concept"},
        {"name": "GPA", "type": "Concept"},
        {"name": "Arts", "type": "Concept"},
        {"name": "Applicant", "type": "Concept"},
    ],
    "relationships": [
        {
            "source": "Alice",
            "relation": "IS_A",
            "target": "STEM major",
            "raw_text": "Alice is a STEM major with a 3.9 GPA.",
        },
        {
            "source": "Alice",
            "relation": "HAS_GPA",
            "target": "GPA",
            "raw_text": "Alice is a STEM major with a 3.9 GPA.",
        },
        {
            "source": "Alice",
            "relation": "PUBLISHED",
            "target": "paper",
            "raw_text": "She recently published a paper.",
        },
        {
            "source": "Bob",
            "relation": "STUDIES",
            "target": "Arts",
            "raw_text": "Bob studies Arts (GPA 3.5).",
        },
        {
            "source": "Arts Nova Award",
            "relation": "REQUIRES",
            "target": "portfolio",
            "raw_text": 'The "Arts Nova Award" requires a portfolio.',
        },
    ],
    "rules": [
        {
            "expression": "forall x (Major(x, STEM) & GPA(x) >= 3.8 -> Eligible(x, FLScholarship))",
            "raw_text": 'To qualify for the "Future Leaders Scholarship", applicants must be '
            "enrolled in a STEM major and hold a GPA >= 3.8.",
            "description": "Eligibility for the Future Leaders Scholarship",
            "related_entities": ["Future Leaders Scholarship", "STEM major", "GPA", "Applicant"],
        },
        {
            "expression": "Requires(ArtsNovaAward, Portfolio)",
            "raw_text": 'The "Arts Nova Award" requires a portfolio.',
            "description": "The Arts Nova Award requires a portfolio",
            "related_entities": ["Arts Nova Award", "portfolio"],
        },
    ],
    "constraints": [
        {
            "constraint_type": "Arithmetic",
            "expression": "GPA(x) >= 3.8",
            "raw_text": "hold a GPA >= 3.8",
            "description": "Minimum GPA 3.8 for the scholarship",
            "related_entities": ["GPA", "Future Leaders Scholarship"],
        },
    ],
}


#: Figure 1: the Jamie / Top Innovator case; the right answer is Unknown.
JAMIE_CONTEXT = (
    'In the 2024 Science Fair, exactly one student from the "GreenHouse Club" won the '
    '"Top Innovator" prize. The fair had 500 attendees. The RedRobotics Club also presented '
    'projects. Jamie is a registered student in the "GreenHouse Club" and presented a project.'
)
JAMIE_QUESTION = 'Did Jamie win the "Top Innovator" prize?'
JAMIE_EXTRACTION = {
    "entities": [
        {"name": "Jamie", "type": "Person"},
        {"name": "GreenHouse Club", "type": "Club"},
        {"name": "RedRobotics Club", "type": "Club"},
        {"name": "Top Innovator", "type": "Prize"},
        {"name": "Science Fair 2024", "type": "Event"},
    ],
    "concepts": [{"name": "Student", "type": "Concept"}],
    "relationships": [
        {
            "source": "Jamie",
            "relation": "MEMBER_OF",
            "target": "GreenHouse Club",
            "raw_text": 'Jamie is a registered student in the "GreenHouse Club" and presented a project.',
        },
        {
            "source": "Jamie",
            "relation": "IS_A",
            "target": "Student",
            "raw_text": 'Jamie is a registered student in the "GreenHouse Club" and presented a project.',
        },
    ],
    "rules": [],
    "constraints": [
        {
            "constraint_type": "Arithmetic",
            "expression": "ExistsUnique x (Member(x, GreenHouseClub) & Won(x, TopInnovator))",
            "raw_text": 'In the 2024 Science Fair, exactly one student from the "GreenHouse Club" '
            'won the "Top Innovator" prize.',
            "description": "Exactly one GreenHouse Club student won the Top Innovator prize",
            "related_entities": ["GreenHouse Club", "Top Innovator", "Student"],
        },
    ],
}
JAMIE_FOL = """Predicates:
Member(x, y) ::: x is a member of club y
Won(x, y) ::: x won prize y
Premises:
∃x (Member(x, greenhouse) ∧ Won(x, topinnovator) ∧ ∀y (Member(y, greenhouse) ∧ Won(y, topinnovator) → y = x)) ::: Exactly one student from the GreenHouse Club won the Top Innovator prize.
Member(jamie, greenhouse) ::: Jamie is a registered student in the GreenHouse Club.
Conclusion:
Won(jamie, topinnovator) ::: Jamie won the Top Innovator prize.
"""

#: Figure 2 as Z3 programs: a broken first draft (undeclared symbol) and its repair.
SCHOLARSHIP_SMT_BROKEN = """(declare-const alice_gpa Real)
(declare-const alice_stem Bool)
(declare-const alice_eligible Bool)
(assert (= alice_gpa 3.9))
(assert alice_stem)
(assert (=> (and alice_stem (>= alice_gpa 3.8)) alice_eligible))
(assert (= bob_gpa 3.5))
(define-fun goal () Bool alice_eligible)
"""
SCHOLARSHIP_SMT = """(declare-const alice_gpa Real)
(declare-const alice_stem Bool)
(declare-const alice_eligible Bool)
(declare-const bob_gpa Real)
(declare-const bob_stem Bool)
(declare-const bob_eligible Bool)
(assert (= alice_gpa 3.9))
(assert alice_stem)
(assert (= bob_gpa 3.5))
(assert (not bob_stem))
(assert (= alice_eligible (and alice_stem (>= alice_gpa 3.8))))
(assert (= bob_eligible (and bob_stem (>= bob_gpa 3.8))))
(define-fun goal () Bool alice_eligible)
(check-sat)
"""

#: Appendix B: AR-LSAT ar_lsat_199106_2-G_2_8 (offices and computers).
ARLSAT_ID = "ar_lsat_199106_2-G_2_8"
ARLSAT_CONTEXT = (
    "A small software firm has four offices, numbered 1, 2, 3, and 4. Each of its offices has "
    "exactly one computer and exactly one printer. Each of these eight machines was bought in "
    "either 1987, 1988, or 1989. The eight machines were bought in a manner consistent with the "
    "following conditions: The computer in each office was bought either in an earlier year "
    "than or in the same year as the printer in that office. The computer in office 2 and the "
    "printer in office 1 were bought in the same year. The computer in office 3 and the printer "
    "in office 4 were bought in the same year. The computer in office 2 and the computer in "
    "office 3 were bought in different years. The computer in office 1 and the printer in "
    "office 3 were bought in 1988."
)
ARLSAT_QUESTION = (
    "If the computer in office 3 was bought in an earlier year than the printer in office 3 "
    "was, then which one of the following statements could be true?"
)
ARLSAT_OPTIONS = [
    "A) The computer in office 2 was bought in 1987.",
    "B) The computer in office 2 was bought in 1988.",
    "C) The computer in office 4 was bought in 1988.",
    "D) The printer in office 4 was bought in 1988.",
    "E) The printer in office 4 was bought in 1989.",
]
_MACHINES = [f"{m} {i}" for m in ("Computer", "Printer") for i in range(1, 5)]
ARLSAT_EXTRACTION = {
    "entities": [
        {"name": "SmallSoftwareFirm", "type": "Organization"},
        *({"name": f"Office {i}", "type": "Office"} for i in range(1, 5)),
        *({"name": m, "type": m.split()[0]} for m in _MACHINES),
        *({"name": f"Year{y}", "type": "Year"} for y in (1987, 1988, 1989)),
    ],
    "concepts": [{"name": c, "type": "Concept"} for c in ("Computer", "Printer", "Office")],
    "relationships": [
        {
            "source": "Small Software Firm",
            "target": "Office 1",
            "relation": "HAS",
            "raw_text": "A small software firm has four offices, numbered 1, 2, 3, and 4.",
        },
        *(
            {
                "source": f"Computer{i}",
                "target": "Computer",
                "relation": "IS_A",
                "raw_text": "Each of its offices has exactly one computer and exactly one printer.",
            }
            for i in range(1, 5)
        ),
    ],
    "rules": [
        {
            "expression": " AND ".join(
                f"Year(Computer_{i}) <= Year(Printer_{i})" for i in range(1, 5)
            ),
            "raw_text": "The computer in each office was bought either in an earlier year than or "
            "in the same year as the printer in that office.",
            "description": "Each computer was bought no later than the printer in its office.",
            "related_entities": [
                "Computer1",
                "Computer 2",
                "Computer 3",
                "Computer 4",
                "Printer 1",
                "Printer 2",
                "Printer 3",
                "Printer 4",
            ],
        },
        {
            "expression": "Year(Computer_2) == Year(Printer_1)",
            "raw_text": "The computer in office 2 and the printer in office 1 were bought in the same year.",
            "description": "The computer in office 2 and the printer in office 1 were bought in the same year.",
            "related_entities": ["Computer 2", "Printer 1"],
        },
        {
            "expression": "Year(Computer_3) == Year(Printer_4)",
            "raw_text": "The computer in office 3 and the printer in office 4 were bought in the same year.",
            "description": "The computer in office 3 and the printer in office 4 were bought in the same year.",
            "related_entities": ["Computer 3", "Printer 4"],
        },
        {
            "expression": "Year(Computer_2) != Year(Computer_3)",
            "raw_text": "The computer in office 2 and the computer in office 3 were bought in different years.",
            "description": "Computers 2 and 3 were bought in different years.",
            "related_entities": ["Computer 2", "Computer 3"],
        },
    ],
    "constraints": [
        {
            "type": "AllDifferent",
            "expression": "AllDifferent(Computer, Year1987, Year1988, Year1989) AND "
            "AllDifferent(Printer, Year1987, Year1988, Year1989)",
            "raw_text": "Each of these eight machines was bought in either 1987, 1988, or 1989.",
            "description": "Every machine was bought in 1987, 1988 or 1989.",
            "related_entities": ["Computer", "Printer", "Year1987", "Year1988", "Year1989"],
        },
        {
            "type": "Arithmetic",
            "expression": "Year(Computer_1) == 1988 AND Year(Printer_3) == 1988",
            "raw_text": "The computer in office 1 and the printer in office 3 were bought in 1988.",
            "description": "Computer 1 and printer 3 were bought in 1988.",
            "related_entities": ["Computer 1", "Printer 3", "Year1988"],
        },
    ],
}
ARLSAT_SMT = """; mode: could_be_true
(declare-const c1 Int) (declare-const c2 Int) (declare-const c3 Int) (declare-const c4 Int)
(declare-const p1 Int) (declare-const p2 Int) (declare-const p3 Int) (declare-const p4 Int)
(assert (and (<= 1987 c1 1989) (<= 1987 c2 1989) (<= 1987 c3 1989) (<= 1987 c4 1989)))
(assert (and (<= 1987 p1 1989) (<= 1987 p2 1989) (<= 1987 p3 1989) (<= 1987 p4 1989)))
(assert (and (<= c1 p1) (<= c2 p2) (<= c3 p3) (<= c4 p4)))
(assert (= c2 p1))
(assert (= c3 p4))
(assert (distinct c2 c3))
(assert (and (= c1 1988) (= p3 1988)))
; the question's hypothesis
(assert (< c3 p3))
(define-fun option_A () Bool (= c2 1987))
(define-fun option_B () Bool (= c2 1988))
(define-fun option_C () Bool (= c4 1988))
(define-fun option_D () Bool (= p4 1988))
(define-fun option_E () Bool (= p4 1989))
(check-sat)
(get-model)
"""

#: A ProntoQA-style Horn problem (closed world, options True/False).
HORN_CONTEXT = (
    "Every yumpus is a dumpus. Each dumpus is a wumpus. Wumpuses are not sour. Max is a yumpus."
)
HORN_QUESTION = "Is the following statement true or false? Max is sour."
HORN_OPTIONS = ["A) True", "B) False"]
HORN_PROGRAM = """Predicates:
Yumpus($x, bool) ::: Does x belong to Yumpus?
Dumpus($x, bool) ::: Does x belong to Dumpus?
Wumpus($x, bool) ::: Does x belong to Wumpus?
Sour($x, bool) ::: Is x sour?
Facts:
Yumpus(Max, True) ::: Max is a yumpus.
Rules:
Yumpus($x, True) >>> Dumpus($x, True) ::: Every yumpus is a dumpus.
Dumpus($x, True) >>> Wumpus($x, True) ::: Each dumpus is a wumpus.
Wumpus($x, True) >>> Sour($x, False) ::: Wumpuses are not sour.
Query:
Sour(Max, True) ::: Max is sour.
"""
HORN_EXTRACTION = {
    "entities": [{"name": "Max", "type": "Creature"}],
    "concepts": [{"name": n} for n in ("Yumpus", "Dumpus", "Wumpus")],
    "relationships": [
        {"source": "Max", "relation": "IS_A", "target": "Yumpus", "raw_text": "Max is a yumpus."}
    ],
    "rules": [
        {
            "expression": "Yumpus(x) -> Dumpus(x)",
            "raw_text": "Every yumpus is a dumpus.",
            "related_entities": ["Yumpus", "Dumpus"],
        },
        {
            "expression": "Dumpus(x) -> Wumpus(x)",
            "raw_text": "Each dumpus is a wumpus.",
            "related_entities": ["Dumpus", "Wumpus"],
        },
        {
            "expression": "Wumpus(x) -> not Sour(x)",
            "raw_text": "Wumpuses are not sour.",
            "related_entities": ["Wumpus"],
        },
    ],
}


def fenced(program: str, lang: str = "") -> str:
    return f"Here is the program.\n```{lang}\n{program}```\n"
