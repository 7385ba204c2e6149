"""The logit lens panel: each layer read through the output layer, layer × position."""
