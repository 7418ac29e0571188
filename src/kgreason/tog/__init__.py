"""Think-on-Graph (ToG, Sun et al., ICLR 2024): the LLM walks the KG by beam search over
relations and entities; PoG's main baseline. One module per stage; `pipeline.py` runs them:
`from kgreason.tog.pipeline import ToG` (kept out of this file, so that `kgreason.config`,
which reads `kgreason.tog.settings`, does not import the pipeline)."""
