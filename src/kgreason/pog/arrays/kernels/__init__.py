"""The compiled loops of PoG's array form (kgreason.jit's rules):

- path search: `segments` (segments.expand_segments, the segment table), `canon`
  (set_ids.canon's exact set comparison), `sums` (a level's edge rows from its steps, which
  sets hold the target), `paths` (restrict.kept_members' membership test);
- reduction: `reduce` (BFS, dead-end peel, induced subgraph);
- fuzzy ranking: `rows` (a level of path vectors from its pieces);
- clustering: `cluster` picks which of kg/store/kernels/build.py's clustering loops runs,
  on what buffers and threads.
"""

#: this package's kernel modules (cluster's loops are kg.store.kernels.build's), for
#: kgreason.jit.warm
MODULES = tuple(
    f"{__name__}.{m}" for m in ("segments", "canon", "sums", "paths", "reduce", "cluster", "rows")
)
