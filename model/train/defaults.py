"""The `train` command's defaults for the flags a preset may fill: the parser leaves them None so
`--preset lecture` can tell a flag given from one left out; both training paths (model.cli,
model.cli.scale) fill the rest from here."""
TRAIN_DEFAULTS = dict(steps=2000, batch_size=64, warmup=400, lr_scale=1.0, lr_decay_steps=0,
                      label_smoothing=0.1)
