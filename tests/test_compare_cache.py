"""Checkpoint B of a comparison (model.io.compare_cache): loaded once per reference, the untrained copy
one per model A, the oldest dropped beyond the capacity, and compared with A as `compare` does."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from model.interpret.comparison import ComparisonError, compare
from model.io.checkpoints import UNTRAINED, load_checkpoint, random_bundle, save_checkpoint
from model.io.compare_cache import ModelCache


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Two small seeded models saved as checkpoints, and model A loaded back from the second (seed 1:
    not the weights the seeded untrained copy gets)."""
    folders = []
    for seed in (0, 1):
        torch.manual_seed(seed)
        bundle = random_bundle("reverse", d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=32)
        folders.append(str(save_checkpoint(bundle, tmp_path_factory.mktemp(f"seed{seed}") / "model")))
    return folders, load_checkpoint(folders[1])


def test_a_checkpoint_is_loaded_once_and_the_oldest_goes_beyond_the_capacity(saved):
    (first, second), _ = saved
    cache = ModelCache(capacity=1)
    b = cache.get(first)
    assert cache.get(first) is b  # the second time from the cache
    assert cache.get(second) is not b
    again = cache.get(first)  # dropped for the second: loaded anew, the same weights
    assert again is not b
    for p, q in zip(again.model.parameters(), b.model.parameters()):
        assert torch.equal(p, q)


def test_the_untrained_copy_is_as_architecture_with_fresh_weights_one_per_model(saved):
    _, model_a = saved
    cache = ModelCache()
    fresh = cache.get(UNTRAINED, model_a)
    assert fresh.config == model_a.config and cache.get(UNTRAINED, model_a) is fresh
    assert any(not torch.equal(p, q) for p, q in zip(fresh.model.parameters(), model_a.model.parameters()))
    with pytest.raises(ComparisonError, match="no model A"):
        cache.get(UNTRAINED)


def test_compare_is_the_comparison_of_a_with_the_loaded_b(saved):
    (first, second), model_a = saved
    got = ModelCache().compare(model_a, "A", first, "abc", None, None)
    expected = compare(model_a, load_checkpoint(first), "abc")
    for kind in expected.kinds:
        assert np.abs(expected.difference(kind)).max() > 0  # two different models …
        np.testing.assert_allclose(got.difference(kind), expected.difference(kind), atol=1e-6)  # … compared alike
    assert ModelCache().compare(model_a, "A", second, "abc", None, None).same_output  # A with itself
