"""The layer contracts of src/kgreason (tests/layers.py reads them from the imports):
`python -m tests.layers` prints what is checked here."""

from __future__ import annotations

import inspect

from kgreason.pog import backend
from kgreason.pog.arrays.backend import ArrayBackend
from tests import layers


def test_no_import_runs_up_a_layer_and_no_stage_imports_the_arrays():
    assert layers.violations(layers.edges()) == []


def test_cycles_stay_inside_one_package_and_are_few():
    cycles = layers.cycles(layers.edges())
    crossing = [c for c in cycles if len({layers.package(m) for m in c}) > 1]
    assert crossing == []
    assert len(cycles) <= layers.MAX_CYCLES, cycles


def test_the_checker_sees_a_violation():
    """The contracts can fail: an upward edge and a stage importing the arrays are named."""
    es = [
        layers.Edge("kgreason.kg.base", "kgreason.pog.paths", 1, False),
        layers.Edge("kgreason.pog.render", "kgreason.pog.arrays.table", 2, True),
        layers.Edge("kgreason.pog.lkg_bridge", "kgreason.lkg.pipeline", 3, False),
    ]
    got = layers.violations(es)
    assert len(got) == 3 and "higher layer" in got[0] and "array package" in got[1]
    assert "independent" in got[2]
    loop = [layers.Edge("a.x", "a.y", 1, False), layers.Edge("a.y", "a.x", 1, False)]
    assert layers.cycles(loop) == [["a.x", "a.y"]]


def test_the_array_backend_implements_declared_operations_with_their_signatures():
    declared = {n: inspect.signature(getattr(backend.Backend, n)) for n in backend.OPERATIONS}
    mine = {n for n in vars(ArrayBackend) if not n.startswith("_") and n != "name"}
    assert mine <= set(declared)
    for n in mine:
        got = list(inspect.signature(getattr(ArrayBackend, n)).parameters)
        assert got == list(declared[n].parameters), n


def test_every_dispatched_stage_function_is_a_declared_operation():
    """A stage's @dispatch names an operation (the decorator refuses others), and every
    operation has its reference in a stage module."""
    from kgreason.pog import evidence, fuzzy, order_free, paths, reduction, render

    found = {
        name
        for mod in (evidence, fuzzy, order_free, paths, reduction, render)
        for name, fn in vars(mod).items()
        if callable(fn) and hasattr(fn, "reference") and fn.__module__ == mod.__name__
    }
    assert found == backend.OPERATIONS
