"""Interventions on a running model (head surgery: see issue 14); the logit lens lives in model.lens."""
from .lens import logit_lens  # noqa: F401
