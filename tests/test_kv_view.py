"""What the KV-cache panel draws (model.interpret.kv_view): each query head of a KV head's group
reads exactly that head's cached keys, checked by recomputing its attention from the recorded
queries and the view's keys by hand."""
import math

import numpy as np
import torch

from model.inference.kv_cache import cached_tensors
from model.interpret.kv_view import cache_view
from model.io.checkpoints import random_bundle
from model.nn.hooks import record


def test_each_query_head_of_the_group_reads_its_kv_heads_cached_keys():
    torch.manual_seed(0)
    bundle = random_bundle("reverse", kind="decoder_only", n_encoder_layers=0, n_decoder_layers=1, d_model=48,
                           n_heads=6, n_kv_heads=2, positional="rope", norm="rms", dropout=0.0)
    seq = torch.tensor([[1, 5, 6, 7, 8, 9, 10]])
    with torch.no_grad(), record(bundle.model) as trace:
        bundle.model(None, seq)
    q = trace["decoder.layers.0.self_attn.q_rot"].tensor[0].float().numpy()  # (n_heads, T, d_k)
    keys, values, weights = cached_tensors(trace, 0)
    pieces = [f"p{i}" for i in range(seq.size(1))]
    seen = []
    for g in range(2):
        for t in (0, 3, 6):
            view = cache_view(keys, values, weights, pieces, g, t)
            assert view.cached.sum() == t + 1 and view.token == f"p{t}" and view.rows[t] == f"{t} p{t}"
            assert view.bound >= max(np.abs(view.keys).max(), np.abs(view.values).max())
            for row, h in enumerate(view.heads):
                scores = q[h, t] @ view.keys[: t + 1].T / math.sqrt(q.shape[-1])
                expected = np.exp(scores - scores.max())
                expected /= expected.sum()
                assert np.allclose(view.reads[row, : t + 1], expected, atol=1e-5)
                assert np.allclose(view.reads[row, t + 1:], 0.0)  # the future is not in the cache
            seen += view.heads
    assert sorted(set(seen)) == list(range(6))  # every query head belongs to exactly one group
