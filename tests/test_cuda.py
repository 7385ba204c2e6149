"""The same numbers on a GPU as on the CPU (run on a CUDA machine; skipped elsewhere)."""
import pytest
import torch

from model import bundled_checkpoints, load_checkpoint, sample_decode
from model.data.tokenizers import BOS_ID, EOS_ID
from model.interpret.attribution import attribute

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.fixture(scope="module")
def reverse_pair():
    folder = bundled_checkpoints()["reverse"]
    return load_checkpoint(folder), load_checkpoint(folder, device="cuda")


def test_a_seeded_sample_is_the_same_on_cuda_as_on_the_cpu(reverse_pair):
    cpu, gpu = reverse_pair
    src = torch.tensor([cpu.src_tokenizer.encode("transformer").ids])

    def draw(bundle):
        device = next(bundle.model.parameters()).device
        gen = torch.Generator().manual_seed(7)
        return sample_decode(bundle.model, src.to(device), BOS_ID, EOS_ID, 16, temperature=1.5,
                             generator=gen).cpu()

    assert torch.equal(draw(cpu), draw(gpu))


def test_attribution_runs_on_cuda_and_agrees_with_the_cpu(reverse_pair):
    cpu, gpu = reverse_pair
    a = attribute(cpu, "transformer", None, 3)
    b = attribute(gpu, "transformer", None, 3)
    assert a.keys() == b.keys()
    for name, scores in a.items():
        assert scores == pytest.approx(b[name], abs=1e-3), name
