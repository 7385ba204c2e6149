"""Training with the paper's recipe: the trainer, optimiser, distributed runs, presets, BLEU."""
