"""The Python API as a notebook uses it: the sync `ask`/`solve` called from code that is
already inside a running event loop (Jupyter runs one), on pipelines built by
`from_settings`. A plain `asyncio.run` inside them would raise "cannot be called from a
running event loop"; these tests fail if the wrappers go back to that."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from kgreason import KGError, PoG, Settings, StoreKG, SymbolLKG
from kgreason.config import ConfigError
from kgreason.embed.settings import EmbedSettings
from kgreason.kg.loaders import Source
from kgreason.kg.settings import KGSettings
from kgreason.kg.store import build_store
from kgreason.lkg.settings import LKGSettings
from kgreason.llm.testing import ScriptedLLM
from tests.lkg.test_pipeline_fixtures import (
    HORN_CONTEXT,
    HORN_EXTRACTION,
    HORN_OPTIONS,
    HORN_PROGRAM,
    HORN_QUESTION,
    fenced,
    js,
)
from tests.pog.test_e2e_nijmegen import FIXTURE, GERMANY, NIJMEGEN, QUESTION, script


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("kg") / "nijmegen"
    build_store([Source(FIXTURE, "nt")], out)
    return out


@pytest.fixture
def no_env(monkeypatch, tmp_path) -> None:
    """No LLM endpoint, config file or KGREASON_* override from the environment."""
    import os

    for k in list(os.environ):
        if k.startswith(("OPENAI_", "KGREASON_")):
            monkeypatch.delenv(k)
    monkeypatch.chdir(tmp_path)


def settings_for(store: Path) -> Settings:
    return Settings(kg=KGSettings(store=store), embed=EmbedSettings(backend="static"))


def test_pog_from_settings_ask_inside_a_running_loop(store: Path, no_env) -> None:
    seen: dict[str, object] = {}

    async def main() -> None:
        seen["loop"] = asyncio.get_running_loop()  # what a notebook cell runs under
        with PoG.from_settings(settings_for(store), llm=ScriptedLLM(script())) as pog:
            seen["kg"] = pog.kg
            seen["result"] = pog.ask(QUESTION)  # sync call, loop running

    asyncio.run(main())
    r = seen["result"]
    assert r.ok, r.error
    assert [(a.name, a.id) for a in r.answers] == [("Germany", GERMANY)]
    assert r.mode == "pog" and r.unverified_triples == []
    kg = seen["kg"]
    assert isinstance(kg, StoreKG) and kg.path == store  # opened from kg.store
    with pytest.raises(KGError, match="closed"):  # and closed by the with block
        asyncio.run(kg.names([NIJMEGEN]))


def test_pog_llm_free_from_a_toml_path_inside_a_running_loop(store: Path, no_env, tmp_path):
    toml = tmp_path / "kgreason.toml"
    toml.write_text(f'[kg]\nstore = "{store}"\n[embed]\nbackend = "static"\n', "utf-8")

    async def main():
        async with PoG.from_settings(toml) as pog:  # no LLM configured: LLM-free mode
            assert pog.llm is None
            return pog.ask("Which airport serves [Nijmegen]?")

    r = asyncio.run(main())
    assert r.ok, r.error
    assert r.mode == "llm-free"
    assert [t.id for t in r.topic_entities] == [NIJMEGEN]
    assert "Weeze Airport" in [c.name for c in r.candidates]
    # no ranker was trained on this KG: the zero-shot ranking answers (or abstains), labelled
    assert r.label == "LLM-free mode: a zero-shot path ranking's answer, not PoG's"
    assert r.answers or r.abstained


def test_pog_ask_async_and_injected_kg_left_open(store: Path, no_env) -> None:
    kg = StoreKG(store)

    async def main():
        pog = PoG.from_settings(settings_for(store), kg=kg, llm_free=True)
        r = await pog.ask_async("Which airport serves [Nijmegen]?")
        await pog.aclose()  # the KG was the caller's: still usable
        return r, await kg.names([NIJMEGEN])

    r, names = asyncio.run(main())
    assert r.mode == "llm-free" and names == {NIJMEGEN: "Nijmegen"}


def test_symbollkg_from_settings_solve_inside_a_running_loop(no_env) -> None:
    llm = ScriptedLLM(
        {"lkg_construct": [js(HORN_EXTRACTION)], "*": lambda m: "[]", "route": ["PYKE"],
         "codegen": [fenced(HORN_PROGRAM)]}
    )  # fmt: skip
    s = Settings(lkg=LKGSettings(solver_timeout_s=5, solver_memory_mb=512, max_repairs=1))

    async def main():
        pipe = SymbolLKG.from_settings(s, llm=llm, embed=False)
        return pipe.solve(HORN_CONTEXT, HORN_QUESTION, HORN_OPTIONS, id="nb")

    r = asyncio.run(main())
    assert (r.id, r.status, r.verdict) == ("nb", "solved", "B")
    assert r.route.route == "horn" and r.usage["lkg_construct"]["calls"] == 1


def test_symbollkg_from_settings_without_an_llm_is_a_clear_error(no_env):
    from kgreason import LKGNeedsLLM

    pipe = SymbolLKG.from_settings(Settings(), embed=False)
    assert pipe.llm is None
    with pytest.raises(LKGNeedsLLM, match="OPENAI_BASE_URL"):
        asyncio.run(_solve_in_loop(pipe))


async def _solve_in_loop(pipe: SymbolLKG):
    return pipe.solve("Max is a cat.", "Is Max a cat?")


def test_from_settings_rejects_bad_settings(tmp_path, no_env) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[pog]\nw_max = 'three'\n", "utf-8")
    with pytest.raises(ConfigError, match=r"pog\.w_max"):
        PoG.from_settings(bad)
    with pytest.raises(TypeError, match="settings must be"):
        SymbolLKG.from_settings({"lkg": {}})  # type: ignore[arg-type]


def test_run_sync_uses_a_separate_loop_only_when_one_is_running() -> None:
    from kgreason.aio import run_sync

    async def where():
        return asyncio.get_running_loop(), threading.current_thread()

    _loop, thread = run_sync(where())  # no loop running: asyncio.run in this thread
    assert thread is threading.current_thread()

    async def main():
        outer = asyncio.get_running_loop()
        inner_loop, inner_thread = run_sync(where())
        return outer, inner_loop, inner_thread

    outer, inner_loop, inner_thread = asyncio.run(main())
    assert inner_loop is not outer and inner_thread is not threading.current_thread()


def test_run_sync_propagates_the_coroutines_exception() -> None:
    from kgreason.aio import run_sync

    async def boom():
        raise KGError("store x: bad")

    async def main():
        with pytest.raises(KGError, match="store x: bad"):
            run_sync(boom())

    asyncio.run(main())


def test_run_sync_never_renders_the_result() -> None:
    """CPython 3.11's asyncio.run reprs the main task's result; a big result (paths with
    lazily decoded names) must not be rendered just to be returned."""
    from kgreason.aio import run_sync

    rendered: list[int] = []

    class Loud:
        def __repr__(self) -> str:
            rendered.append(1)
            return "Loud"

    async def make() -> Loud:
        return Loud()

    assert isinstance(run_sync(make()), Loud)
    assert rendered == []
