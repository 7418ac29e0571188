"""JSON schemas for stage replies: loaded from the stage's prompt folder, checked, rendered.

A stage that wants structured output ships `<package>/prompts/<stage>.schema.json` beside its
prompt:

    {"description": "...", "reply": "top_list: {{{top_list}}}", "schema": {...JSON schema...}}

`schema` is sent to endpoints that can constrain decoding (see structured.py). `reply` is
optional: stages whose prompt asks for a fixed text form (`top_list: {...}`, `{Yes}`) keep
their text parser, and a JSON reply that satisfies the schema is rendered back into that form
with `str.format` (list values joined with ", ") before the parser reads it, so one parser
serves both the constrained and the plain-prompting path. Without `reply` the validated JSON
itself is handed to the parser.

Validation covers the subset of JSON Schema the stage schemas use (type, properties,
required, additionalProperties, items, enum, minItems, maxItems, minLength); anything else
in a schema is refused when the file is loaded, so a schema can never claim more checking
than happens.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

#: keys the validator understands; "description"/"title" are documentation only
_KNOWN = {
    "type", "properties", "required", "additionalProperties", "items", "enum",
    "minItems", "maxItems", "minLength", "description", "title",
}  # fmt: skip
_TYPES: dict[str, type | tuple[type, ...]] = {
    "object": dict,
    "array": list,
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "null": type(None),
}


class SchemaError(ValueError):
    """A stage schema file is malformed or uses JSON Schema features we do not check."""


class SchemaMismatch(ValueError):
    """A JSON value does not satisfy a stage schema (the message names the path)."""


def _check_schema(s: Any, where: str) -> None:
    if not isinstance(s, dict):
        raise SchemaError(f"{where}: a schema must be an object")
    unknown = set(s) - _KNOWN
    if unknown:
        raise SchemaError(f"{where}: unsupported schema keys {sorted(unknown)}")
    types = s.get("type")
    for t in types if isinstance(types, list) else [types]:
        if t not in _TYPES:
            raise SchemaError(f"{where}: unknown type {t!r}")
    for name, sub in (s.get("properties") or {}).items():
        _check_schema(sub, f"{where}.{name}")
    if "items" in s:
        _check_schema(s["items"], f"{where}[]")


def strict_compatible(s: dict[str, Any]) -> bool:
    """True iff OpenAI's strict mode accepts `s`: an object root, and every object lists all
    its properties as required and forbids others."""
    if s.get("type") != "object":
        return False

    def ok(n: dict[str, Any]) -> bool:
        if n.get("type") == "object" or "properties" in n:
            props = n.get("properties") or {}
            if n.get("additionalProperties") is not False or set(n.get("required", [])) != set(
                props
            ):
                return False
            return all(ok(p) for p in props.values())
        if "items" in n:
            return ok(n["items"])
        return True

    return ok(s)


def _is(value: Any, t: str) -> bool:
    if t in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[t])


def validate(value: Any, s: dict[str, Any], path: str = "$") -> None:
    """Raise SchemaMismatch naming the first place `value` breaks schema `s`."""
    types = s.get("type")
    if types is not None:
        alts = types if isinstance(types, list) else [types]
        if not any(_is(value, t) for t in alts):
            raise SchemaMismatch(f"{path}: expected {' or '.join(alts)}, got {_kind(value)}")
    if "enum" in s and value not in s["enum"]:
        raise SchemaMismatch(f"{path}: {value!r} is not one of {s['enum']}")
    if isinstance(value, str) and len(value) < s.get("minLength", 0):
        raise SchemaMismatch(f"{path}: string shorter than {s['minLength']}")
    if isinstance(value, list):
        if len(value) < s.get("minItems", 0):
            raise SchemaMismatch(f"{path}: fewer than {s['minItems']} items")
        if "maxItems" in s and len(value) > s["maxItems"]:
            raise SchemaMismatch(f"{path}: more than {s['maxItems']} items")
        if "items" in s:
            for i, v in enumerate(value):
                validate(v, s["items"], f"{path}[{i}]")
    if isinstance(value, dict):
        props = s.get("properties") or {}
        for k in s.get("required", []):
            if k not in value:
                raise SchemaMismatch(f"{path}: missing key {k!r}")
        if s.get("additionalProperties") is False:
            extra = sorted(set(value) - set(props))
            if extra:
                raise SchemaMismatch(f"{path}: unexpected keys {extra}")
        for k, sub in props.items():
            if k in value:
                validate(value[k], sub, f"{path}.{k}")


def _kind(value: Any) -> str:
    for name in _TYPES:
        if _is(value, name) and not (name == "number" and isinstance(value, int)):
            return name
    return type(value).__name__


@dataclass(frozen=True)
class StageSchema:
    """A stage's reply schema: what is sent, how a JSON reply is checked and rendered."""

    name: str
    schema: dict[str, Any]
    #: `str.format` template turning a valid JSON reply into the stage's text form
    reply: str | None = None
    description: str = ""

    def __post_init__(self) -> None:
        _check_schema(self.schema, self.name)

    @property
    def strict_ok(self) -> bool:
        return strict_compatible(self.schema)

    def render(self, value: Any) -> str:
        """The text the stage parser reads for a JSON reply that satisfies the schema."""
        validate(value, self.schema)
        if self.reply is None:
            return json.dumps(value, ensure_ascii=False)
        fields = {k: _flat(v) for k, v in value.items()} if isinstance(value, dict) else {}
        try:
            return self.reply.format(**fields)
        except (KeyError, IndexError, ValueError) as e:
            raise SchemaMismatch(f"reply template of {self.name}: {e!r}") from None


def _flat(v: Any) -> str:
    if isinstance(v, list):
        # an item with a comma or a quote is written as a JSON string, so the stage parser
        # (llm.parse.split_items) reads "Washington, D.C." back as one item
        return ", ".join(
            json.dumps(x, ensure_ascii=False)
            if isinstance(x, str) and ("," in x or '"' in x)
            else _flat(x)
            for x in v
        )
    if isinstance(v, bool):
        return "Yes" if v else "No"
    return str(v)


def load_stage_schema(package: str, name: str) -> StageSchema:
    """`<package>/prompts/<name>.schema.json` as a StageSchema (SchemaError if malformed)."""
    path = resources.files(package).joinpath("prompts", f"{name}.schema.json")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SchemaError(f"cannot read schema {package}:{name}: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("schema"), dict):
        raise SchemaError(f"schema {package}:{name}: expected an object with a 'schema' key")
    reply = doc.get("reply")
    if reply is not None and not isinstance(reply, str):
        raise SchemaError(f"schema {package}:{name}: 'reply' must be a string")
    return StageSchema(name, doc["schema"], reply, str(doc.get("description", "")))


def choice_schema(name: str, words: Sequence[str], key: str = "choice") -> StageSchema:
    """A one-key object whose value is one of `words`, rendered back as the bare word (for
    stages whose choices are only known at run time, e.g. the solver router)."""
    return StageSchema(
        name,
        {
            "type": "object",
            "properties": {key: {"type": "string", "enum": list(words)}},
            "required": [key],
            "additionalProperties": False,
        },
        reply="{" + key + "}",
    )
