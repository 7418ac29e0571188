"""Dataset loaders: each reads one public format into `Record`s.

A malformed record never stops a load: it is reported as a `LoadProblem` with the file and
its position (line number or array index) and skipped. One module per family of formats:
`base` (JSON reading, field checks), `freebase`, `passages` (logic and multi-hop), `lines`
(MetaQA, PathQuestion); everything is importable from here.
"""

from kgreason.eval.loaders.base import DatasetError, RecordParser, load_json_dataset
from kgreason.eval.loaders.freebase import (
    parse_cwq,
    parse_grailqa,
    parse_simpleqa,
    parse_webqsp,
    parse_webquestions,
)
from kgreason.eval.loaders.lines import load_metaqa, load_pathquestion, parse_metaqa_lines
from kgreason.eval.loaders.passages import parse_hotpot, parse_logic, parse_musique

__all__ = [
    "DatasetError",
    "RecordParser",
    "load_json_dataset",
    "load_metaqa",
    "load_pathquestion",
    "parse_cwq",
    "parse_grailqa",
    "parse_hotpot",
    "parse_logic",
    "parse_metaqa_lines",
    "parse_musique",
    "parse_simpleqa",
    "parse_webqsp",
    "parse_webquestions",
]
