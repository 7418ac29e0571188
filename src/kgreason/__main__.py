"""`python -m kgreason` runs the command line."""

from kgreason.cli import main

main()
