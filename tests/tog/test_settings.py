"""`tog.*` settings come from kgreason.toml / KGREASON_TOG__* like every section; the eval
method name picks the variant; bad values are one-line errors naming the key."""

from __future__ import annotations

import pytest

from kgreason.config import ConfigError, load_settings
from kgreason.eval.adapters import ToGMethod, build_method
from kgreason.tog.settings import ToGSettings


def test_defaults_are_togs():
    s = ToGSettings()
    assert (s.width, s.depth, s.exploration_temperature, s.reasoning_temperature) == (3, 3, 0.4, 0)
    assert s.max_tokens == 256 and s.variant == "tog"
    assert s.temperature("tog.relation_prune") == 0.4 and s.temperature("tog.answer") == 0.0


def test_environment_and_method_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no kgreason.toml around
    loaded = load_settings(environ={"KGREASON_TOG__WIDTH": "2", "KGREASON_TOG__DEPTH": "4"})
    assert loaded.origins["tog.width"] == "env:KGREASON_TOG__WIDTH"
    built = build_method("tog-r", loaded.settings, dataset="metaqa")
    assert isinstance(built.method, ToGMethod)
    assert (built.method.settings.variant, built.method.settings.width) == ("tog-r", 2)
    assert built.method.settings.depth == 4
    assert any(k.startswith("kgreason.tog/") for k in built.prompt_hashes)
    built.method.kg.close()


@pytest.mark.parametrize("bad", [{"KGREASON_TOG__WIDTH": "0"}, {"KGREASON_TOG__BEAM": "3"}])
def test_bad_values_name_the_key(bad, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="tog"):
        load_settings(environ=bad)
