"""Transformer Explorer: the Qt application around `model` (panels observe one session state)."""
