"""The one strict prompt loader: a missing field raises, every shipped template fills cleanly."""

from __future__ import annotations

from importlib import resources
from string import Template

import pytest

from kgreason.eval.methods import render_prompt
from kgreason.eval.records import Record
from kgreason.lkg.prompts import load_prompt as lkg_prompt
from kgreason.pog.prompts import prompt_messages
from kgreason.prompts import PromptFieldError, load_prompt, prompt_text

PACKAGES = ["kgreason.pog", "kgreason.lkg", "kgreason.eval"]


def _templates() -> list[tuple[str, str]]:
    out = []
    for pkg in PACKAGES:
        for p in resources.files(pkg).joinpath("prompts").iterdir():
            if p.name.endswith(".txt"):
                out.append((pkg, p.name[:-4]))
    return sorted(out)


@pytest.mark.parametrize(("pkg", "name"), _templates())
def test_every_template_fills_and_leaves_no_placeholder(pkg: str, name: str) -> None:
    fields = Template(prompt_text(pkg, name)).get_identifiers()
    assert Template(prompt_text(pkg, name)).is_valid(), f"{pkg}:{name} has a stray $"
    filled = load_prompt(pkg, name, **{f: f"<{f.upper()}>" for f in fields})
    for f in fields:
        assert f"<{f.upper()}>" in filled
        assert f"${f}" not in filled


@pytest.mark.parametrize(("pkg", "name"), [t for t in _templates() if "$" in prompt_text(*t)])
def test_a_missing_field_raises_naming_it(pkg: str, name: str) -> None:
    fields = sorted(Template(prompt_text(pkg, name)).get_identifiers())
    if not fields:
        pytest.skip("only literal dollars")
    given = {f: "x" for f in fields[1:]}
    with pytest.raises(PromptFieldError, match=rf"\${fields[0]}"):
        load_prompt(pkg, name, **given)


def test_package_wrappers_are_strict() -> None:
    with pytest.raises(PromptFieldError, match="query"):
        lkg_prompt("prune", candidates="[]")
    with pytest.raises(KeyError):
        prompt_messages("answer")


def test_horn_examples_keep_their_literal_dollar_variables() -> None:
    fields = Template(prompt_text("kgreason.lkg", "codegen_horn")).get_identifiers()
    text = lkg_prompt("codegen_horn", **{f: "" for f in fields})
    assert "Cat($x, True) >>> Furry($x, True)" in text


def test_eval_baseline_prompts_fill_question_context_and_options() -> None:
    rec = Record(
        id="1",
        dataset="toy",
        task="logic",
        question="Is {Tom} $cold?",
        context="Tom is a cat.",
        options=["A) True", "B) False"],
    )
    text = render_prompt("cot", rec)
    assert "Context: Tom is a cat.\nQuestion: Is {Tom} $cold?\nOptions:\nA) True\nB) False" in text
    kg = Record(id="2", dataset="toy", task="kgqa", question="who directed [X]")
    assert "Q: who directed [X]" in render_prompt("io", kg)
