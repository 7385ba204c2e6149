"""The network: config, attention, layers, positional encodings, the Transformer, hook sites."""
