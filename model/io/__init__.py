"""Files: checkpoints (safetensors + JSON), atomic folders, resume state, pretrained importers."""
