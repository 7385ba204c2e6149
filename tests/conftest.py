"""Shared test set-up: headless Qt, few threads, and a factory for tiny random models."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before anything imports Qt

import pytest  # noqa: E402
import torch  # noqa: E402

# CI machines have 2 cores shared with other jobs, and tiny models only lose from more threads
# (under load, intra-op threads spin and wait on each other).
torch.set_num_threads(1)


@pytest.fixture
def make_model():
    """`make_model(seed=0, **config overrides)` → a small random Transformer in eval mode, dropout 0."""
    from model import Transformer, TransformerConfig

    def factory(seed: int = 0, **overrides) -> "Transformer":
        params = dict(src_vocab_size=13, tgt_vocab_size=11, d_model=32, n_heads=4, d_ff=64,
                      n_encoder_layers=2, n_decoder_layers=2, dropout=0.0, max_len=64)
        params.update(overrides)
        torch.manual_seed(seed)
        return Transformer(TransformerConfig(**params)).eval()

    return factory
