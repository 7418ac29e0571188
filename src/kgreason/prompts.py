"""One prompt loader for every package: `<package>/prompts/<name>.txt` filled strictly.

Templates use `string.Template` placeholders (`$question`) because the prompts are full of
braces (`{Yes}`, `answer: {...}`, JSON examples); a literal dollar is written `$$`. A missing
field raises `PromptFieldError` instead of leaving `$field` in the text sent to the model, so
a template and its caller cannot silently drift apart.
"""

from __future__ import annotations

import hashlib
from importlib import resources
from string import Template


class PromptFieldError(KeyError):
    """A prompt template names a field its caller did not supply."""

    def __init__(self, package: str, name: str, field: str) -> None:
        super().__init__(f"prompt {package}:{name} needs field ${field}, which was not given")
        self.package, self.name, self.field = package, name, field

    def __str__(self) -> str:
        return str(self.args[0])


def prompt_text(package: str, name: str) -> str:
    """The raw template `<package>/prompts/<name>.txt` (hashed into eval runs)."""
    path = resources.files(package).joinpath("prompts", f"{name}.txt")
    return path.read_text(encoding="utf-8")


def load_prompt(package: str, name: str, **fields: str) -> str:
    """Template `name` of `package` with every `$field` filled; a missing one raises."""
    try:
        return Template(prompt_text(package, name)).substitute(fields)
    except KeyError as e:
        raise PromptFieldError(package, name, str(e.args[0])) from None


#: files hashed into eval runs: the templates and the JSON schemas sent beside them
HASHED_SUFFIXES = (".txt", ".schema.json")


def prompt_hashes(package: str) -> dict[str, str]:
    """sha256 of every `<package>/prompts/*.txt` and `*.schema.json` (a stage's reply
    schema changes what the model is asked for as much as its prompt does), by file name;
    recorded in each eval run and compared on `--resume`."""
    folder = resources.files(package).joinpath("prompts")
    if not folder.is_dir():
        return {}
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir(), key=lambda x: x.name)
        if p.name.endswith(HASHED_SUFFIXES)
    }
