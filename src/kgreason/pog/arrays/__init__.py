"""PoG's question graph on integer arrays: the form `kgreason.pog.graph.prepare_graph` picks
for a local store (plain PoG), behind pog/backend.py's seam. Nothing outside this package
imports it but that fork; its operations are `backend.py`'s.

Why it exists: on a 10M-triple store a question's subgraph holds 10^5 nodes and hubs of
10^5 edges, and the reference stages' per-entity Python (a set per hop, a name per member)
took seconds to minutes a question. Here the clustered graph is two CSR arrays over local
ids that follow the store's key order (a sorted id array is a sorted name list), a level of
partial paths is expanded at once, and names are decoded only when something reads them.

Modules, in the order a question uses them:
- `build`       the store walk's rows -> the clustered graph (folding inverse pairs);
- `graph`, `graph_whole`, `names`, `csr`   the graph, its whole-graph reads (entities,
                triples, BFS distances), its lazy names and index, sorting / CSR / BFS
                helpers;
- `reduction`   the connecting subgraph on masks;
- `search`      the free and the segment search; `levels` (a level of partial paths, and
                the per-path expansion of small levels), `steps` (a level's distinct sets
                expanded once; `distinct` reads them from the graph), `segments`
                (that expansion by (node, key) runs),
                `restrict` (a found segment cut to its chains), `set_ids` (exact set
                identity);
- `hops`        LazyHop (sets as ids) and NameSet, made in bulk by `hop_maker`; `table`,
                `table_text` (a free search's paths as a table, rendered and embedded
                from its arrays);
- `orient`      one path per order of the topics, on ids;
- `backend`     the operations above, as pog/backend.py declares them;
- `kernels/`    compiled loops (kgreason.jit's rules), each beside its numpy form.

Which twins stay, and why. Every operation here has a reference in the stage modules,
which stays as the only form for every KG that is not a local store (SPARQL endpoints,
in-memory KGs, PoG-E's sampled graphs) and as the oracle the tests compare this package
against (tests/pog/test_fastgraph_paths.py and the others named in CONTRIBUTING.md).
Inside the package:
- BFS: `ArrayClusteredGraph.local_distances` (numpy) and `kernels/reduce.bfs_compiled`;
  the numpy form is the kernel's reference and the path for graphs below its threshold
  (numba is not loaded for MetaQA-sized graphs: kgreason.jit);
- level expansion: `levels._RowSteps` below `search.SMALL_LEVEL_ROWS` edge rows (MetaQA:
  the distinct-set bookkeeping of `steps.LevelSteps` costs more than it saves there), and
  `segments` numpy / `kernels/segments` compiled above it, the numpy form again the
  reference and the small-input path;
- clustering: `build`'s numpy form and kg/store/kernels/build.py's loops, likewise;
- path results: plain ReasoningPaths of LazyHops (segment searches), and `table.TablePaths`
  (a free search's up to 20,000 paths, made only when read), both read through the same
  Hop and Backend interfaces.
Each stays for one of those reasons. What went with this layout: the type checks that
chose between the forms inside the stages, and the set readers that branched on the hop's
type (they are `Hop`'s interface now, pog/types.py).
"""
