"""Question analysis (section 4.1): one LLM call returning the split questions and the LLM
indicator; the topic-entity order and the predicted depth D_predict are read off the indicator.

The indicator is a chain alternating node and relation (`"A" - r1 - x - r2 - answer(y)`), so
the distance between two nodes is half the difference of their positions. D_predict is the
largest distance between the answer and a topic entity, as the paper defines it. Reading it
from the chain (rather than asking the model for a number) keeps depth and order consistent
with the chain the model wrote.

Replies are read in our prompt's JSON or in the form the paper shows (Table 9, Figure 3):
`LLM indicator: ...` and `split_question 1: ...` lines, chains with en dashes, unspaced
dashes, `X (answer)`, several answer nodes, arrows glued to relations, or no answer node at
all (`read_indicator` says where the answer is then).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kgreason.kg.ranking import normalize_name
from kgreason.llm.base import ChatLLM
from kgreason.llm.parse import ParseError, extract_json
from kgreason.llm.schema import load_stage_schema
from kgreason.pog.llm_common import call_stage, topics_field
from kgreason.pog.settings import PoGSettings
from kgreason.pog.types import QuestionAnalysis, TopicEntity

#: " - ", " -> ", "->", "<-" between chain items. A match may start only where a run of
#: whitespace starts (or at a non-space): one starting inside a run would also start at
#: the run's beginning, which is tried first, and without the guard the regex rescanned
#: the rest of a long run from each of its characters (quadratic on many spaces)
_SEP = re.compile(r"(?:(?<!\s)|(?!\s))(?:\s+[-\u2013\u2014]+>?\s+|\s*->\s*|\s*<-\s*)")
#: dashes with space on one side only, or glued to a quote or bracket, as PoG Table 9 writes
#: them (`(answer)- shares borders with-” Germany ”`); a dash between two letters
#: ("Saint-Denis") is part of a name. Each alternative starts only where its run starts.
_DASH = r"\-\u2013\u2014"
_GLUED = re.compile(
    rf"(?<=[)\]\"\u201c\u201d])\s*+[{_DASH}]++>?\s*+"
    rf"|(?<![{_DASH}\s])[{_DASH}]++>?\s*+(?=[\"\u201c\u201d(\[])"
    rf"|(?<![{_DASH}\s])[{_DASH}]++>?\s++"
    rf"|(?<!\s)\s++[{_DASH}]++>?(?=[^\s{_DASH}])"
)
#: Figure 3's arrows glued to the relation they name: `Nijmegen ←serves airport ←own ...`
_ARROW = re.compile(r"<-++|(?<!-)-++>|[\u2190\u2192\u27f5\u27f6]")
_PREFIX_ARROW = re.compile(r"(?:^|(?<=\s))(?:<-++|-++>|[\u2190\u2192\u27f5\u27f6])(?=[^\s<>-])")
_SPACED_DASH = re.compile(rf"\s[{_DASH}]++>?\s")
#: an answer node: `answer(X)`, `answer: X`, `X (answer)`, `[answer] X`
_ANSWER = re.compile(r"^answer\b|\banswer\s*+[(\[:]|[(\[]\s*+answer\s*+[)\]]", re.I)
_WRAPPED = re.compile(r"^\s*answer\s*(?:\((.*)\)|:(.*))\s*$", re.I | re.S)
_MARK = re.compile(r"[(\[]\s*answer\s*[)\]]", re.I)
#: how a chain cut just after a separator ends (tested on the right-stripped text)
_SEP_ENDS = ("-", "\u2013", "\u2014", ">", "\u2190", "\u2192", "\u27f5", "\u27f6")
_QUOTES = "\"'\u201c\u201d\u2018\u2019 "
_STRIP = "\"'\u201c\u201d\u2018\u2019{}[]() "

REMINDER = (
    'Reply with a JSON object only: {"split_questions": [...], "indicator": "...", '
    '"topic_order": [...]}; the indicator alternates nodes and relations separated by " - " '
    "and contains answer(...) once."
)


@dataclass(frozen=True)
class IndicatorReading:
    #: indices into the topic list, in the order the chain mentions them
    order: list[int]
    #: node distance from the answer to each topic (same indexing as the topic list)
    distances: dict[int, int]
    #: the answer node(s) as the chain writes them, without the answer marker
    answer_nodes: tuple[str, ...] = ()
    #: no node was marked as the answer: it was inferred (see `read_indicator`)
    answer_inferred: bool = False

    @property
    def depth(self) -> int:
        return max(self.distances.values(), default=1) or 1


def _node_text(item: str) -> str:
    """The node without its answer marker and quotes: `answer(” Continent ”)` -> `Continent`."""
    m = _WRAPPED.match(item)
    inner = next((g for g in m.groups() if g is not None), "") if m else _MARK.sub(" ", item)
    return inner.strip(_STRIP).strip()


def _clean(item: str) -> str:
    return normalize_name(_node_text(item))


def _chain_items(indicator: str) -> tuple[list[str], bool]:
    """(items, prefix-arrow form). Alternating form: node, relation, node, ... split at dashes
    and arrows. Prefix-arrow form (Figure 3): each item after the first is a relation glued to
    its arrow and the node after it (two words at least), so every item is one hop."""
    text = indicator.strip()
    arrows = _ARROW.findall(text)
    if (
        arrows
        and len(_PREFIX_ARROW.findall(text)) == len(arrows)
        and not _SPACED_DASH.search(_ARROW.sub(" ", text))
    ):
        segments = [s.strip() for s in _ARROW.split(text) if s.strip()]
        if all(len(s.split()) > 1 for s in segments[1:]):  # each is "relation node"
            return segments, True
    items = [p.strip() for s in _SEP.split(text) for p in _GLUED.split(s)]
    return [s for s in items if s], False


def read_indicator(indicator: str, topic_names: Sequence[str]) -> IndicatorReading:
    """Topic order and answer distances in an indicator chain. Topics the chain does not
    mention keep their given order, after the others, and count as one hop from the answer
    (the least the chain can claim).

    The answer node is the item marked `answer(X)`, `X (answer)` (Table 9, example 2) or
    `answer (X)` (Figure 3). With several (Table 9, example 3 wraps two topic entities), a
    topic's distance is to the nearest: the reading does not depend on which end the model
    started from, and D_predict stays the smallest depth any marked place allows, since
    exploration only goes deeper than D_predict and would never see a shorter path.
    With no marked node (Table 9, example 1: `" Lou Seal " - mascot for - team - last won -
    World Series - when`), the answer is inferred: the node (items on the topic's parity)
    farthest from every topic entity, the later one on a tie: the end of the chain away from
    the topics, where Table 9 and Figure 1 put it. A trailing item on a relation's place
    ("when") is a question word on the last node, not a node. A chain whose nodes are all
    topic entities leaves no place for the answer, and a chain ending in a separator was cut
    (token limit): both are ParseErrors (re-asked)."""
    if indicator.rstrip().endswith(_SEP_ENDS):
        raise ParseError("the indicator ends with a separator: it looks cut short")
    items, prefix = _chain_items(indicator)
    if not items:
        raise ParseError("the indicator is empty")
    step = 2 if prefix else 1  # prefix form: item k is hop k, i.e. position 2k
    answers = [i * step for i, s in enumerate(items) if _ANSWER.search(s.strip(_QUOTES))]
    norm_topics = [normalize_name(n) for n in topic_names]
    cleaned = [_clean(s) for s in items]
    positions: dict[int, int] = {}
    for i, c in enumerate(cleaned):  # exact matches first: they fix the nodes' parity
        for ti, tn in enumerate(norm_topics):
            if ti not in positions and tn and c == tn:
                positions[ti] = i * step
                break
    parity = (answers or sorted(positions.values()) or [0])[0] % 2
    for i, c in enumerate(cleaned):
        for ti, tn in enumerate(norm_topics):
            if ti in positions or not tn or (i * step) % 2 != parity:
                continue
            if re.search(rf"(?<!\w){re.escape(tn)}(?!\w)", c):
                positions[ti] = i * step
                break
    inferred = not answers
    if inferred:
        taken = set(positions.values())
        nodes = [i * step for i in range(len(items)) if (i * step) % 2 == parity]
        free = [p for p in nodes if p not in taken]
        if not free:
            raise ParseError("no answer node marked, and every node is a topic entity")
        answers = [max(free, key=lambda p: (min((abs(p - t) for t in taken), default=0), p))]
    order = sorted(positions, key=positions.__getitem__)
    order += [i for i in range(len(topic_names)) if i not in positions]
    distances = {
        i: min(max(1, (abs(positions[i] - a) + 1) // 2) for a in answers) if i in positions else 1
        for i in range(len(topic_names))
    }
    shown = tuple(_node_text(items[a // step]) if not prefix else items[a // step] for a in answers)
    return IndicatorReading(order, distances, shown, inferred)


def checked_order(order: Sequence[str], topics: Sequence[TopicEntity]) -> list[str]:
    """The topic order PoG explores in must name every topic entity exactly once:
    a topic the indicator names twice keeps its first place, one it omits goes last, in the
    linked order. (read_indicator already reads it so; this is the guard.)"""
    ids = dict.fromkeys(t.id for t in topics)
    out = [t for t in dict.fromkeys(order) if t in ids]
    kept = set(out)
    out += [t for t in ids if t not in kept]
    return out


#: PoG's labels (Table 9: "LLM indicator", "split_question 1:"; Figure 3: "LLM Indictor:",
#: "Split_question1:"), at the start of a line or as a JSON key
_SPLIT_LABEL = re.compile(r"^[\s*#>-]*+split[\s_-]*+questions?+\s*+\d*+\s*+[:.)]\s*+", re.I)
_INDICATOR_LABEL = re.compile(
    r"^[\s*#>-]*+(?:(?:llm|think)[\s_-]*+)?(?:indic(?:a)?tor|cot|chain[\s_-]*+of[\s_-]*+thought)"
    r"\s*+:\s*+",
    re.I,
)


def _labelled(line: str, label: re.Pattern[str]) -> str | None:
    """The text after `label` (and any repeat of it: "Split Question: split_question 1: q"),
    or None if the line does not start with it."""
    m = label.match(line)
    if m is None:
        return None
    rest = line[m.end() :]
    while (again := label.match(rest)) is not None:
        rest = rest[again.end() :]
    return rest.strip()


def _json_fields(text: str) -> tuple[object, object]:
    data = extract_json(text)
    if not isinstance(data, dict):
        raise ParseError("question analysis: expected a JSON object")
    splits = data.get("split_questions")
    indicator = data.get("indicator")
    keys = [k for k in data if isinstance(k, str)]
    if splits is None:  # the paper's names as keys: "split_question 1", "split_question 2"
        splits = [data[k] for k in keys if _SPLIT_LABEL.match(k + ":")] or None
    if indicator is None:
        indicator = next((data[k] for k in keys if _INDICATOR_LABEL.match(k + ":")), None)
    return splits, indicator


def _text_fields(text: str) -> tuple[list[str], str | None]:
    """The paper's reply as lines: `LLM indicator: <chain>` and `split_question i: <q>`
    (the chain may be on the line after its label)."""
    splits: list[str] = []
    indicator: str | None = None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if (q := _labelled(line, _SPLIT_LABEL)) is not None:
            if q:
                splits.append(q)
        elif indicator is None and (ind := _labelled(line, _INDICATOR_LABEL)) is not None:
            following = [ln.strip() for ln in lines[i + 1 : i + 2] if ln.strip()]
            indicator = ind or (following[0] if following else None)
    return splits, indicator


def parse_analysis(text: str, topics: Sequence[TopicEntity]) -> QuestionAnalysis:
    """Split questions and indicator from the JSON our prompt asks for or, failing that,
    from the lines the paper shows (Table 9, Figure 3); the order and D_predict are read
    off the indicator (`read_indicator`)."""
    error: ParseError | None = None
    try:
        splits, indicator = _json_fields(text)
    except ParseError as e:
        splits, indicator, error = None, None, e
    if not isinstance(indicator, str) or not indicator.strip():
        lined = _text_fields(text)
        if lined[1]:
            splits, indicator = lined
        elif error is not None:
            raise ParseError(
                f"question analysis: {error}, nor lines 'LLM indicator: ...' and "
                "'split_question 1: ...'"
            ) from None
    if not isinstance(indicator, str) or not indicator.strip():
        raise ParseError("question analysis: missing 'indicator'")
    if isinstance(splits, str):
        splits = [splits]
    if not isinstance(splits, list) or not all(isinstance(s, str) for s in splits) or not splits:
        raise ParseError("question analysis: 'split_questions' must be a non-empty list")
    reading = read_indicator(indicator, [t.name for t in topics])
    return QuestionAnalysis(
        split_questions=[s.strip() for s in splits if s.strip()],
        indicator=indicator.strip(),
        ordered_topics=checked_order([topics[i].id for i in reading.order], topics),
        predicted_depth=reading.depth,
        raw=text,
    )


async def analyze_question(
    llm: ChatLLM, question: str, topics: Sequence[TopicEntity], settings: PoGSettings
) -> QuestionAnalysis:
    """One `question_analysis` call; raises LLMOutputError if the reply stays unreadable."""
    value, _raw = await call_stage(
        llm,
        "question_analysis",
        settings,
        lambda text: parse_analysis(text, topics),
        REMINDER,
        schema=load_stage_schema("kgreason.pog", "question_analysis"),
        question=question,
        topics=topics_field(topics),
    )
    return value
