"""`Transformer.empty` and `without_init`: a model built for a loader computes its fixed tables,
keeps its ties, gives the reference model's outputs once loaded, and leaves other threads alone."""
import subprocess
import sys
import threading

import torch
from torch import nn

from model.nn.config import TransformerConfig
from model.nn.skip_init import without_init
from model.nn.transformer import Transformer
from support import tiny_llama


def test_an_empty_model_loaded_with_a_models_weights_computes_what_that_model_computes():
    for reference in (tiny_llama(), Transformer(TransformerConfig(20, 20, d_model=16, n_heads=2, d_ff=32,
                                                                  n_encoder_layers=1, n_decoder_layers=1,
                                                                  max_len=32, dropout=0.0)).eval()):
        empty = Transformer.empty(reference.config)
        for name, buffer in reference.named_buffers():  # the fixed tables, saved or not
            assert torch.equal(buffer, dict(empty.named_buffers())[name]), name
        empty.load_state_dict(reference.state_dict())
        empty.eval()
        src = torch.randint(3, 20, (2, 7))
        tgt = torch.randint(3, 20, (2, 5))
        args = (tgt,) if reference.config.model_kind.name == "DECODER_ONLY" else (src, tgt)
        with torch.no_grad():
            assert torch.allclose(empty(*args), reference(*args), atol=1e-6)
        if reference.config.share_embeddings:
            assert empty.generator.weight is empty.tgt_embed.lut.weight


def test_without_init_leaves_initialisation_alone_on_other_threads():
    inside, done = threading.Event(), threading.Event()

    def hold():
        with without_init():
            skipped = nn.init.ones_(torch.zeros(3))
            assert torch.equal(skipped, torch.zeros(3))
            inside.set()
            done.wait(5)

    thread = threading.Thread(target=hold)
    thread.start()
    assert inside.wait(5)
    try:
        assert torch.equal(nn.init.ones_(torch.zeros(3)), torch.ones(3))
    finally:
        done.set()
        thread.join()


def test_building_an_empty_model_does_not_import_torchs_compiler():
    """The meta device's first use imported torch._dynamo: seconds holding the GIL in a loader thread."""
    code = ("import sys; sys.path.insert(0, 'tests'); from support import tiny_llama; "
            "from model.nn.transformer import Transformer; Transformer.empty(tiny_llama().config); "
            "print('torch._dynamo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr
