"""Step titles as read aloud: layers counted from 1, module paths turned into words."""
from __future__ import annotations

import re

import pytest

from model.nn.steps import readable_step_name


@pytest.mark.parametrize("name, title", [
    ("encoder.layers.0.self_attn.weights", "Encoder layer 1 · self-attention · weights"),
    ("decoder.layers.1.self_attn.masked_scores", "Decoder layer 2 · masked self-attention · masked scores"),
    ("decoder.layers.0.cross_attn.k", "Decoder layer 1 · cross-attention · K"),
    ("encoder.layers.11.add_norm2.norm", "Encoder layer 12 · add & norm 2 · layer norm"),
    ("generator.probs", "Output layer · probabilities"),
    ("encoder.positional", "Encoder · positional encoding"),
    ("something.new_part", "something · new part"),  # unknown parts: still whole, underscores as spaces
])
def test_step_titles(name, title):
    assert readable_step_name(name) == title


def test_every_recorded_step_of_a_model_reads_its_layer_from_one(make_model):
    """Each step of a real 2 + 2-layer forward: no module path left in its title, and the layer
    the title names is the path's index plus one."""
    import torch

    from model.nn.hooks import record

    model = make_model(n_encoder_layers=2, n_decoder_layers=2)
    model.eval()
    with record(model) as trace:
        model(torch.tensor([[4, 5, 6]]), torch.tensor([[1, 4, 5]]))
    assert len(trace) > 40
    for step in trace:
        title = readable_step_name(step.name)
        assert "layers." not in title and "_" not in title, title
        index = re.search(r"layers\.(\d+)\.", step.name)
        if index:
            assert f"layer {int(index.group(1)) + 1} ·" in title, (step.name, title)
