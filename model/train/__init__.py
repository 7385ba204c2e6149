"""Training with the paper's recipe: the one Trainer (one process or many, sentence or token
batches), its configuration, optimiser, batches, distributed helpers, presets, BLEU, and the
Qt-free parts of a live run a GUI drives (request, steering, live_loop, live_messages, timeline)."""
