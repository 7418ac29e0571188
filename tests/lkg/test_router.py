import pytest

from kgreason.lkg.options import options_kind, split_option
from kgreason.lkg.retrieval import RetrievedSubgraph
from kgreason.lkg.router import features, parse_route, route, structural_route
from kgreason.lkg.types import Node
from kgreason.llm.parse import ParseError
from kgreason.llm.testing import ScriptedLLM


def _sub(*nodes: tuple[str, str, str]) -> RetrievedSubgraph:
    """nodes: (kind, type, raw_text)"""
    return RetrievedSubgraph(
        query="q",
        nodes=[
            Node(id=f"i{i}", kind=k, name=t[:20], type=ty, raw_text=t)  # type: ignore[arg-type]
            for i, (k, ty, t) in enumerate(nodes)
        ],
    )


ARLSAT = _sub(
    ("constraint", "Ordering", "The computer in each office was bought in an earlier year."),
    (
        "constraint",
        "AllDifferent",
        "Each of these eight machines was bought in 1987, 1988 or 1989.",
    ),
    ("entity", "Machine", "Computer 1"),
)
HORN = _sub(("rule", "Rule", "If someone is big then they are red."), ("entity", "Animal", "Max"))
FOL = _sub(("rule", "Rule", "Either Bonnie attends or she is inactive."))


def test_option_helpers():
    assert split_option("A) True") == ("A", "True")
    assert split_option("(c) The computer in office 2") == ("C", "The computer in office 2")
    assert options_kind(["A) True", "B) False", "C) Uncertain"]) == "tfu"
    assert options_kind(["A) True", "B) False"]) == "tf"
    assert options_kind(["A) The computer in office 2 was bought in 1987."]) == "statements"
    assert options_kind(None) == "none"


@pytest.mark.parametrize(
    ("sub", "question", "options", "expected"),
    [
        (ARLSAT, "Which one could be true?", ["A) x is 1", "B) y is 2"], "z3"),
        (ARLSAT, "Is the statement true or false?", None, "z3"),
        (
            HORN,
            "Is the following statement true or false? Max is red.",
            ["A) True", "B) False"],
            "horn",
        ),
        (HORN, "Is it true, false, or unknown? Max is red.", None, "prover9"),
        (FOL, "Is the following statement true or false?", None, "prover9"),
        (
            _sub(("rule", "Rule", "If a student has a GPA over 3.8 they qualify.")),
            "Does Al qualify?",
            None,
            "z3",
        ),
        (_sub(), "Did Jamie win?", None, "prover9"),
    ],
)
def test_structural_router(sub, question, options, expected):
    r, reason = structural_route(features(sub, question, options))
    assert r == expected, reason


def test_features_count_structure():
    f = features(ARLSAT, "Which one could be true?", ["A) x", "B) y"])
    assert f.constraint_types == {"Ordering": 1, "AllDifferent": 1}
    assert f.numbers_present and f.entity_count == 1 and f.rule_count == 0


async def test_no_llm_means_structural():
    d = await route(None, HORN, "Is it true or false?", ["A) True", "B) False"])
    assert (d.route, d.source, d.llm_choice) == ("horn", "structural", None)


async def test_llm_choice_with_disagreement_recorded():
    llm = ScriptedLLM({"route": ["PROVER9"]})
    d = await route(llm, HORN, "Is it true or false?", ["A) True", "B) False"])
    assert (d.route, d.source, d.structural, d.disagreement) == ("prover9", "llm", "horn", True)
    prompt = llm.calls[0].messages[0]["content"]
    assert "Rules Found (Count): 1" in prompt and "If someone is big" in prompt


async def test_llm_agreeing_and_pyke_maps_to_horn():
    d = await route(ScriptedLLM({"route": ["Answer: PYKE"]}), HORN, "True or false?", None)
    assert (d.route, d.disagreement) == ("horn", False)


async def test_statement_options_force_z3():
    d = await route(
        ScriptedLLM({"route": ["PYKE"]}), ARLSAT, "Which could be true?", ["A) a", "B) b"]
    )
    assert (d.route, d.source, d.llm_choice) == ("z3", "override", "horn")


async def test_malformed_route_reply_falls_back():
    llm = ScriptedLLM({"route": ["I think Z3 or maybe PROVER9", "hmm"]})
    d = await route(llm, HORN, "True or false?", None)
    assert (d.route, d.source) == ("horn", "llm_fallback")
    assert "route" in d.note and len(llm.calls) == 2


def test_parse_route():
    assert parse_route(" z3\n") == "z3"
    with pytest.raises(ParseError):
        parse_route("Z3 PROVER9")
    with pytest.raises(ParseError):
        parse_route("clingo")
