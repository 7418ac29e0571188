"""The embedders' compiled loops (kgreason.jit's rules): `wordpiece` (a static model's
tokenizing and pooling of printable-ASCII texts, for embed/wordpool.py)."""

#: this package's kernel modules, for kgreason.jit.warm
MODULES = (f"{__name__}.wordpiece",)
