"""The store walk's compiled loops (kgreason.jit's rules): `walk` (CSRGraph.expand, PoG's
edge-order bound), `cut` (its cut report) and `build` (the radix sort the graph stages
share, and the clustering loops of PoG's array form, which share its digit loop)."""

#: this package's kernel modules, for kgreason.jit.warm
MODULES = tuple(f"{__name__}.{m}" for m in ("walk", "cut", "build"))
