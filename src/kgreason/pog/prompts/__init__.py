"""PoG's prompt templates (Appendix E), one text file per stage, with our own few-shot examples.

Templates use `string.Template` placeholders (`$question`) because the prompts themselves are
full of braces (`{Yes}`, `answer: {...}`, rendered paths). A missing field raises KeyError, so
a template and its caller cannot silently drift apart.
"""

from __future__ import annotations

from importlib import resources
from string import Template

from kgreason.llm.base import Message


def load_prompt(name: str) -> Template:
    text = resources.files(__package__).joinpath(f"{name}.txt").read_text(encoding="utf-8")
    return Template(text)


def prompt_messages(name: str, **fields: str) -> list[Message]:
    """The chat messages for stage template `name` filled with `fields`."""
    return [{"role": "user", "content": load_prompt(name).substitute(**fields)}]
