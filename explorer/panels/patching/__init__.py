"""Activation patching panel."""
