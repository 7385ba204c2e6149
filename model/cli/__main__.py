"""`python -m model.cli train …` (what `torchrun -m model.cli` runs); "train" may be left out."""
import sys

from model.cli.main import train_main

argv = sys.argv[1:]
sys.exit(train_main(argv[1:] if argv[:1] == ["train"] else argv))
