"""The headless commands: train, average, bleu (`python -m model.cli train …`, `torchrun -m model.cli`)."""
from model.cli.main import train_main

__all__ = ["train_main"]
