from pathlib import Path

import pytest

from kgreason.config import ConfigError, load_settings


def test_defaults_are_the_papers():
    s = load_settings(environ={}).settings
    assert (s.pog.w_max, s.pog.d_max, s.pog.w1, s.pog.w2) == (3, 3, 80, 20)
    assert s.pog.exploration_temperature == 0.4
    assert s.pog.reasoning_temperature == 0.0
    assert s.pog.max_tokens == 256


def test_precedence_and_origins(tmp_path: Path):
    f = tmp_path / "k.toml"
    f.write_text("[pog]\nw1 = 50\nw2 = 10\n")
    loaded = load_settings(f, cli={"pog.w2": 5}, environ={"KGREASON_POG__W1": "60"})
    assert loaded.settings.pog.w1 == 60
    assert loaded.origins["pog.w1"] == "env:KGREASON_POG__W1"
    assert loaded.settings.pog.w2 == 5
    assert loaded.origins["pog.w2"] == "cli"
    assert loaded.origins["pog.d_max"] == "default"


def test_openai_env_vars(tmp_path: Path):
    s = load_settings(environ={"OPENAI_BASE_URL": "http://h/v1", "OPENAI_API_KEY": "k"}).settings
    assert s.llm.base_url == "http://h/v1"
    assert s.llm.api_key == "k"


def test_unknown_key_names_key_and_file(tmp_path: Path):
    f = tmp_path / "k.toml"
    f.write_text("[pog]\nwidth = 3\n")
    with pytest.raises(ConfigError, match=r"unknown setting 'pog.width' in .*k.toml"):
        load_settings(f, environ={})


def test_wrong_type_names_key_and_file(tmp_path: Path):
    f = tmp_path / "k.toml"
    f.write_text('[pog]\nw1 = "many"\n')
    with pytest.raises(ConfigError) as e:
        load_settings(f, environ={})
    msg = str(e.value)
    assert "pog.w1" in msg and str(f) in msg and "\n" not in msg


def test_missing_model_path(tmp_path: Path):
    f = tmp_path / "k.toml"
    f.write_text('[embed]\nbackend = "sentence-transformers"\nmodel = "./no/such/model"\n')
    with pytest.raises(ConfigError, match=r"embed.model.*does not exist"):
        load_settings(f, environ={})


def test_non_setting_variables_are_not_read_as_settings():
    """.ci/run exports KGREASON_SHARED_DATA: it must not break every command (it did)."""
    env = {"KGREASON_SHARED_DATA": "/data", "KGREASON_OTEL": "1", "KGREASON_CACHE_DIR": "/c"}
    assert load_settings(environ=env).settings.pog.w1 == 80
    with pytest.raises(ConfigError, match="KGREASON_SHAREDDATA"):
        load_settings(environ={"KGREASON_SHAREDDATA": "/data"})  # a typo is still named
