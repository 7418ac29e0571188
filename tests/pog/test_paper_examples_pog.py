"""PoG's reply parsers against every output the PoG paper shows (Table 9, Figure 3,
Algorithm 1). The chains, split questions and answers below are copied verbatim from the
paper's text (curly quotes, en dashes and missing spaces included); where the paper shows a
field but not how a reply lays it out, the reply puts each field on a line headed by the
name the paper gives it ("LLM indicator", "split_question 1")."""

from __future__ import annotations

import json

import pytest
from tests.security.linear import assert_linear, repeat_to

from kgreason.llm.parse import ParseError, parse_braced_answers, read_reply
from kgreason.llm.schema import load_stage_schema
from kgreason.pog.analysis import parse_analysis, read_indicator
from kgreason.pog.answering import parse_sufficiency, parse_summary
from kgreason.pog.supplement import parse_predictions
from kgreason.pog.types import TopicEntity

# PoG Table 9, example 1 (one topic entity; the indicator marks no answer node)
EX1_INDICATOR = "\u201d Lou Seal \u201d - mascot for - team - last won - World Series - when"
EX1_SPLITS = [
    "What team is \u201dLou Seal\u201d the mascot for?",
    "When did the last World Series win occur for the team with Lou Seal as the mascot?",
]
EX1_ANSWER = (
    "answer: {2014 World Series}\n"
    "reason: From the given path {Lou Seal} $\\rightarrow$ sports.mascot.team $\\rightarrow$ "
    "{San Francisco Giants}, {San Francisco Giants} is the team that \u201dLou Seal\u201d serves "
    "as the mascot for. From {San Francisco Giants} $\\rightarrow$ "
    "sports.sports_team.championships $\\rightarrow$ {2014 World Series, 2012 World Series, "
    "2010 World Series}, the last World Series won by the {San Francisco Giants} is in {2014}. "
    "Therefore, the provided knowledge graph path is sufficient to answer the overall question, "
    "and the answer is {2014 World Series}."
)
# PoG Table 9, example 2 (two topic entities; "(answer)" suffix, en dash, unspaced dashes)
EX2_INDICATOR = (
    "\u201d Lejre Municipality \u201d \u2013 contained by - European Union country (answer)- "
    "shares borders with-\u201d Germany \u201d"
)
EX2_SPLITS = [
    "What European Union country shares borders with \u201dGermany\u201d?",
    "What country contains the Lejre Municipality?",
]
EX2_ANSWER = (
    "answer: {Denmark}\n"
    "reason: From {Denmark} $\\rightarrow$ location.location.containedby $\\rightarrow$ "
    "{Eurasia} $\\rightarrow$ location.location.contains $\\rightarrow$ {Germany}, Denmark is "
    "European Union country shares borders with \u201dGermany\u201d. From {Lejre Municipality} "
    "$\\rightarrow$ location.administrative_division.country $\\rightarrow$ {Denmark}, Denmark "
    "is a country contains the Lejre Municipality Both paths lead to Denmark, which is the "
    "European Union country sharing borders with Germany and containing the Lejre "
    "Municipality. Therefore, the provided knowledge graph path is sufficient to answer the "
    "main question, and the answer is {Denmark}."
)
# PoG Table 9, example 3 (three topic entities, two of them wrapped in answer(...))
EX3_INDICATOR = (
    "answer(\u201d Central Time Zone \u201d) \u2013 owns - answer(\u201d Continent \u201d)- "
    "located contain -\u201d Falkland Islands \u201d"
)
EX3_SPLITS = [
    "What continent do the Falkland Islands belong to?",
    "What Central Time Zone does the continent belong to?",
]
EX3_ANSWER = (
    "answer: {Americas}\n"
    "reason: From {Continent} $\\rightarrow$ common.topic.notable_types $\\rightarrow$ "
    "{Americas} $\\rightarrow$ location.location. contains $\\rightarrow$ { Falkland Islands}, "
    "Americas is the continent Falkland Islands belong to. From {Central Time Zone} "
    "$\\rightarrow$ time.time_zone.locations_in_this_time_zone $\\rightarrow$ {Americas} "
    "$\\rightarrow$ common.topic. notable_types $\\rightarrow$ {Continent}. Americas is the "
    "Central Time Zone. Therefore, the provided knowledge graph path is sufficient to answer "
    "the overall question, and the answer is {Americas}."
)
# PoG Figure 3 (the initialization phase, "with predicted depth 2", section 4.1)
FIG3_INDICATOR = "Nijmegen \u2190serves airport \u2190own answer (country) \u2192borders France"
FIG3_SPLITS = [
    "What country contains an airport that serves Nijmegen?",
    "What country borders France?",
]


def topics(*names: str) -> list[TopicEntity]:
    return [TopicEntity(f"m.{i}", n) for i, n in enumerate(names)]


def test_table9_example1_indicator_without_answer_node() -> None:
    # PoG Table 9, example 1: no answer(...) node. The answer is inferred at the node end of
    # the chain away from the topic ("World Series"; "when" is the question word on it):
    # two hops, as the Reasoning Path row (mascot.team, then championships)
    r = read_indicator(EX1_INDICATOR, ["Lou Seal"])
    assert r.answer_inferred and r.answer_nodes == ("World Series",)
    assert r.order == [0] and r.distances == {0: 2} and r.depth == 2


def test_table9_example2_answer_suffix_and_unspaced_dashes() -> None:
    # PoG Table 9, example 2: "X (answer)" and "-” Germany ”" with no space before it
    r = read_indicator(EX2_INDICATOR, ["Germany", "Lejre Municipality"])
    assert not r.answer_inferred and r.answer_nodes == ("European Union country",)
    assert r.order == [1, 0]  # Lejre Municipality first, as the chain and the paths run
    assert r.distances == {0: 1, 1: 1} and r.depth == 1


def test_table9_example3_two_answer_nodes_wrapping_topics() -> None:
    # PoG Table 9, example 3: answer(...) around two topic entities; the chain's order is
    # the Reasoning Path's (Central Time Zone, Continent, Falkland Islands); each topic is
    # one hop from the nearest place the chain puts the answer (Americas is, in the path)
    r = read_indicator(EX3_INDICATOR, ["Falkland Islands", "Continent", "Central Time Zone"])
    assert r.answer_nodes == ("Central Time Zone", "Continent") and not r.answer_inferred
    assert r.order == [2, 1, 0]
    assert r.distances == {0: 1, 1: 1, 2: 1} and r.depth == 1


def test_figure3_arrow_indicator_predicts_depth_2() -> None:
    # PoG Figure 3 / section 4.1: "An example of question analysis ... with predicted depth 2"
    r = read_indicator(FIG3_INDICATOR, ["France", "Nijmegen"])
    assert r.answer_nodes == ("own answer (country)",)
    assert r.order == [1, 0] and r.distances == {0: 1, 1: 2} and r.depth == 2


def test_the_reversed_chain_reads_the_same_distances() -> None:
    # several answer nodes (Table 9, example 3): the reading does not depend on which end
    # the model started from
    names = ["Falkland Islands", "Continent", "Central Time Zone"]
    reversed_chain = (
        "\u201d Falkland Islands \u201d - located contain - answer(\u201d Continent \u201d) - "
        "owns - answer(\u201d Central Time Zone \u201d)"
    )
    assert read_indicator(reversed_chain, names).distances == {0: 1, 1: 1, 2: 1}


def test_a_chain_of_topics_only_has_no_place_for_the_answer() -> None:
    with pytest.raises(ParseError, match="every node"):
        read_indicator('"Nijmegen" - near - "France"', ["Nijmegen", "France"])


def test_a_chain_cut_after_a_separator_is_unreadable() -> None:
    # a reply cut at the token limit inside the indicator would otherwise be inferred
    with pytest.raises(ParseError, match="separator"):
        read_indicator('"Moonlight Sonata" - composed by - composer - ', ["Moonlight Sonata"])


def _lines(indicator: str, splits: list[str], label: str = "split_question ") -> str:
    out = [f"LLM indicator: {indicator}"]
    out += [f"{label}{i}: {s}" for i, s in enumerate(splits, 1)]
    return "\n".join(out)


@pytest.mark.parametrize(
    ("indicator", "splits", "names", "order", "depth"),
    [
        (EX1_INDICATOR, EX1_SPLITS, ["Lou Seal"], [0], 2),  # PoG Table 9, example 1
        (EX2_INDICATOR, EX2_SPLITS, ["Germany", "Lejre Municipality"], [1, 0], 1),  # ex. 2
        (
            EX3_INDICATOR,
            EX3_SPLITS,
            ["Falkland Islands", "Continent", "Central Time Zone"],
            [2, 1, 0],
            1,
        ),  # PoG Table 9, example 3
    ],
)
def test_table9_question_analysis_as_labelled_lines(indicator, splits, names, order, depth):
    # PoG Table 9's rows "LLM indicator" and "Split Question" (split_question 1: ...)
    ts = topics(*names)
    schema = load_stage_schema("kgreason.pog", "question_analysis")
    a = read_reply(_lines(indicator, splits), lambda t: parse_analysis(t, ts), schema)
    assert a.split_questions == splits and a.indicator == indicator
    assert a.ordered_topics == [ts[i].id for i in order] and a.predicted_depth == depth


def test_table9_example3_split_question_without_space() -> None:
    # PoG Table 9, example 3 writes "split_question 1:What continent ..." (no space)
    reply = (
        f"LLM indicator: {EX3_INDICATOR}\n"
        "split_question 1:What continent do the Falkland Islands belong to?\n"
        "split_question 2: What Central Time Zone does the continent belong to?"
    )
    a = parse_analysis(reply, topics("Falkland Islands", "Continent", "Central Time Zone"))
    assert a.split_questions == EX3_SPLITS


def test_figure3_question_analysis() -> None:
    # PoG Figure 3: "LLM Indictor:" (sic) and "Split_question1: ..."
    reply = f"LLM Indictor: {FIG3_INDICATOR}\n" + "\n".join(
        f"Split_question{i}: {s}" for i, s in enumerate(FIG3_SPLITS, 1)
    )
    ts = topics("France", "Nijmegen")
    a = parse_analysis(reply, ts)
    assert a.split_questions == FIG3_SPLITS and a.indicator == FIG3_INDICATOR
    assert a.ordered_topics == ["m.1", "m.0"] and a.predicted_depth == 2


def test_json_with_the_papers_field_names() -> None:
    # our prompt asks for JSON; a model may still use the paper's field names in it
    reply = json.dumps(
        {
            "LLM indicator": EX1_INDICATOR,
            "split_question 1": EX1_SPLITS[0],
            "split_question 2": EX1_SPLITS[1],
        },
        ensure_ascii=False,
    )
    a = parse_analysis(reply, topics("Lou Seal"))
    assert a.split_questions == EX1_SPLITS and a.predicted_depth == 2


def test_prose_is_still_unreadable() -> None:
    with pytest.raises(ParseError):
        parse_analysis("I think the answer is Denmark.", topics("Germany"))


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        (EX1_ANSWER, ["2014 World Series"]),  # PoG Table 9, example 1 ("PoG answer" row)
        (EX2_ANSWER, ["Denmark"]),  # PoG Table 9, example 2
        (EX3_ANSWER, ["Americas"]),  # PoG Table 9, example 3
    ],
)
def test_table9_answer_replies(reply: str, answer: list[str]) -> None:
    schema = load_stage_schema("kgreason.pog", "answer")
    assert read_reply(reply, parse_braced_answers, schema) == answer


def test_sufficiency_yes_anywhere_as_algorithm_1() -> None:
    # PoG Algorithm 1, lines 9, 24 and 36: `if "{Yes}" in Answer`
    reply = "Split question 1 alone: {No}. With the championships path as well: {Yes}."
    assert parse_sufficiency(reply, "anywhere") is True
    assert parse_sufficiency(reply, "first") is False  # the earlier reading, a switch
    assert parse_sufficiency("{No}. The teacher is missing.", "anywhere") is False
    assert parse_sufficiency("Yes.", "anywhere") is True  # bare verdicts as before
    with pytest.raises(ParseError):
        parse_sufficiency("Hard to say.", "anywhere")


def test_the_evaluation_reply_with_the_table9_reason_is_yes() -> None:
    # PoG Appendix E: "If it's sufficient, you need to respond {Yes} and provide the answer";
    # Table 9's reason text (example 1) with the verdict after it, not first
    reply = EX1_ANSWER.split("reason: ", 1)[1] + " {Yes}"
    assert parse_sufficiency(reply, "anywhere") is True


def test_supplement_three_results_then_three_chains() -> None:
    # PoG Appendix E, LLM Supplement Prompt: "first provide three predicted results, and
    # second offer three possible chains of thought" (the paper shows no reply; this is
    # that order, with chains in Table 9's indicator style)
    reply = (
        "Predicted results: {Denmark}, {Sweden}, {Poland}\n"
        "Chain of thought 1: \u201d Lejre Municipality \u201d \u2013 contained by - "
        "answer(\u201d Denmark \u201d)- shares borders with-\u201d Germany \u201d\n"
        "Chain of thought 2: \u201d Lejre Municipality \u201d \u2013 near - "
        "answer(\u201d Sweden \u201d)- shares borders with-\u201d Germany \u201d\n"
        "Chain of thought 3: \u201d Lejre Municipality \u201d \u2013 near - "
        "answer(\u201d Poland \u201d)- shares borders with-\u201d Germany \u201d"
    )
    preds = parse_predictions(reply)
    assert [p.name for p in preds] == ["Denmark", "Sweden", "Poland"]
    assert preds[0].indicator.startswith("\u201d Lejre") and "Denmark" in preds[0].indicator
    assert "Poland" in preds[2].indicator


def test_supplement_numbered_results() -> None:
    reply = (
        "Predicted result 1: Denmark\nPredicted result 2: Sweden\n"
        'Indicator 1: "Lejre Municipality" - contained by - answer("Denmark")\n'
        'Indicator 2: "Lejre Municipality" - near - answer("Sweden")'
    )
    assert [(p.name, p.indicator) for p in parse_predictions(reply)] == [
        ("Denmark", '"Lejre Municipality" - contained by - answer("Denmark")'),
        ("Sweden", '"Lejre Municipality" - near - answer("Sweden")'),
    ]


def test_supplement_prose_is_still_unreadable() -> None:
    with pytest.raises(ParseError):
        parse_predictions("I predict that the answer is Denmark.")


def test_summary_reply_keeps_its_label() -> None:
    # the paper shows no summary reply; ours stays "summary: ..." (unchanged)
    assert parse_summary("summary: {Lou Seal} -> {San Francisco Giants}").startswith("{Lou")


@pytest.mark.parametrize(
    ("what", "fn", "make"),
    [
        ("dash-run", lambda t: read_indicator(t, ["a"]), repeat_to("-", "a", "b")),
        ("glued-dashes", lambda t: read_indicator(t, ["a"]), repeat_to("x)- ", "a", "answer(b)")),
        ("quote-dashes", lambda t: read_indicator(t, ["a"]), repeat_to('-"x', "a", "b")),
        ("arrows", lambda t: read_indicator(t, ["a"]), repeat_to(" \u2190r x", "a", "")),
        ("arrow-dashes", lambda t: read_indicator(t, ["a"]), repeat_to("-", "a <", ">")),
        ("split-label", lambda t: parse_analysis(t, topics("a")), repeat_to(" ", "split_q", "x")),
        ("cot-label", lambda t: parse_analysis(t, topics("a")), repeat_to(" ", "LLM indicator")),
        ("pred-label", parse_predictions, repeat_to(" ", "Predicted", "x")),
        ("chain-label", parse_predictions, repeat_to(" ", "Chain of thought", "x")),
    ],
)
def test_the_new_readers_are_linear(what, fn, make) -> None:
    assert_linear(fn, make, what)
