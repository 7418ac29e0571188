"""Issue 34 item 7: input a new user gives that must be refused with one line naming the key
and its source (out-of-range settings, a directory for --config), or accepted with a word
(flags the LLM-free mode does not read)."""

from __future__ import annotations

import re
import types
import typing
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.config import RANGES, UNBOUNDED, ConfigError, Settings, load_settings
from tests.cli.support import isolate_env, one_error_line

runner = CliRunner()


@pytest.fixture(autouse=True)
def env(monkeypatch, tmp_path) -> None:
    isolate_env(monkeypatch, tmp_path)


# ---- ranges ---------------------------------------------------------------------------


def test_the_reported_file_is_refused_naming_key_and_file(tmp_path: Path):
    f = tmp_path / "k.toml"
    f.write_text("[pog]\nw_max = -1\nlink_threshold = 1.5\n")
    line = one_error_line(runner.invoke(app, ["--config", str(f), "config"]))
    assert "'pog.w_max'" in line and str(f) in line and "at least 1" in line
    f.write_text("[pog]\nlink_threshold = 1.5\n")
    line = one_error_line(runner.invoke(app, ["--config", str(f), "config"]))
    assert "'pog.link_threshold'" in line and str(f) in line and "between 0 and 1" in line


@pytest.mark.parametrize(
    ("key", "bad", "good"),
    [
        ("pog.w_max", 0, 1),
        ("pog.d_max", -2, 2),
        ("pog.w1", 0, 10),
        ("pog.max_tokens", 0, 16),
        ("pog.link_threshold", -0.1, 1.0),
        ("pog.reasoning_temperature", -0.5, 0.0),
        ("tog.width", 0, 1),
        ("tog.link_threshold", 2, 0.5),
        ("lkg.tau", 1.01, 0.0),
        ("lkg.top_k", 0, 1),
        ("lkg.max_tokens", -1, 1),
        ("lkg.solver_timeout_s", 0, 0.5),
        ("llm.timeout_s", 0, 1),
        ("llm.concurrency", 0, 1),
        ("llm.max_tokens_per_question", 0, 100),
        ("embed.batch_size", 0, 1),
    ],
)
def test_each_source_is_named_for_an_out_of_range_value(tmp_path: Path, key, bad, good):
    section, name = key.split(".")
    ok = load_settings(cli={key: good}, environ={}).settings
    assert getattr(getattr(ok, section), name) == good  # the edge of the range is allowed
    f = tmp_path / "k.toml"
    f.write_text(f"[{section}]\n{name} = {bad}\n")
    # "must be ..." from the table in config.py, "Input should be ..." from a model's Field
    with pytest.raises(ConfigError, match=rf"setting '{key}' from {re.escape(str(f))}: ") as e:
        load_settings(f, environ={})
    assert "\n" not in str(e.value)
    var = f"KGREASON_{section.upper()}__{name.upper()}"
    with pytest.raises(ConfigError, match=rf"'{key}' from environment variable {var}: "):
        load_settings(environ={var: str(bad)})
    with pytest.raises(ConfigError, match=rf"'{key}' from the command line \(--flag\): "):
        load_settings(cli={key: bad}, environ={}, cli_flags={key: "--flag"})
    with pytest.raises(ConfigError, match=rf"'{key}' from the command line: "):
        load_settings(cli={key: bad}, environ={})


def test_library_settings_are_checked_too():
    with pytest.raises(ValueError, match=r"pog.w_max must be at least 1"):
        Settings(pog={"w_max": -1})


def _numeric(annotation: object) -> bool:
    args = typing.get_args(annotation) if isinstance(annotation, types.UnionType) else ()
    kinds = set(args) if args else {annotation}
    return bool(kinds & {int, float}) and bool not in kinds


def test_every_numeric_setting_has_a_range_or_is_declared_unbounded():
    """A new numeric setting must be given a range (here or on its model) or be listed as
    meaning something at any value."""
    unchecked = []
    for section, field in Settings.model_fields.items():
        model = field.annotation
        assert isinstance(model, type)
        for name, f in model.model_fields.items():  # type: ignore[attr-defined]
            key = f"{section}.{name}"
            if not _numeric(f.annotation):
                continue
            if key not in RANGES and key not in UNBOUNDED and not f.metadata:
                unchecked.append(key)
    assert unchecked == []
    assert {"pog.w_max", "pog.link_threshold", "lkg.tau"} <= set(RANGES)


def test_a_bad_flag_value_names_the_flag(tmp_path: Path):
    line = one_error_line(runner.invoke(app, ["ask", "who?", "--variant", "pog-x"]))
    assert "'pog.variant' from the command line (--variant):" in line


# ---- --config DIR ---------------------------------------------------------------------


def test_config_naming_a_directory_says_so_and_what_file_was_expected(tmp_path: Path):
    line = one_error_line(runner.invoke(app, ["--config", str(tmp_path), "config"]))
    assert "is a directory" in line and "does not exist" not in line
    assert str(tmp_path / "kgreason.toml") in line and "--config" in line
    r = runner.invoke(app, ["config"], env={"KGREASON_CONFIG": str(tmp_path)})
    assert "is a directory" in one_error_line(r) and "KGREASON_CONFIG" in r.stderr
    missing = tmp_path / "nope.toml"
    line = one_error_line(runner.invoke(app, ["--config", str(missing), "config"]))
    assert "does not exist" in line and str(missing) in line


# ---- flags the LLM-free mode does not read --------------------------------------------


@pytest.fixture
def tiny_store(tmp_path: Path) -> Path:
    kb = tmp_path / "kb.tsv"
    kb.write_text("Alpha\tdirected_by\tBeta\nGamma\tdirected_by\tBeta\nAlpha\tyear\t1999\n")
    out = tmp_path / "store"
    r = runner.invoke(app, ["kg", "build", str(kb), "--out", str(out)])
    assert r.exit_code == 0, r.stderr
    return out


def _ask(store: Path, *flags: str):
    return runner.invoke(app, ["ask", "who directed [Alpha]", "--kg", str(store), *flags])


def test_llm_free_mode_names_the_flags_it_ignores_once(tiny_store: Path):
    r = _ask(tiny_store, "--strategy", "three-step", "--variant", "pog-e", "--no-summary")
    assert r.exit_code == 0, r.stderr
    warnings = [x for x in r.stderr.splitlines() if "no effect" in x]
    assert len(warnings) == 1, r.stderr
    line = warnings[0]
    assert line.startswith("warning:") and "LLM-free mode" in line
    assert all(flag in line for flag in ("--strategy", "--variant", "--no-summary"))
    r = _ask(tiny_store, "--variant", "pog-e")
    assert [x for x in r.stderr.splitlines() if "no effect" in x] == [
        "warning: --variant has no effect in LLM-free mode (no LLM configured)"
    ]


def test_no_warning_without_those_flags(tiny_store: Path):
    r = _ask(tiny_store)
    assert r.exit_code == 0 and "no effect" not in r.stderr, r.stderr
