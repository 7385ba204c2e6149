"""2017 vs 2024: the paper's model beside a modern small language model (SmolLM2)."""
