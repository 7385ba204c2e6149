"""The sampling playground: its bars are the model's own next-token softmax under the controls'
temperature, top-k and top-p (checked against a hand-written softmax and nucleus loop), and
Generate decodes with those settings."""
import numpy as np
import pytest
import torch

from explorer.panels.sampling.panel import SamplingPanel
from explorer.runner import Runner
from explorer.state import SessionState
from model.io.checkpoints import bundled_checkpoints, load_checkpoint

PROMPT = "the frog lives in the"


@pytest.fixture(scope="module")
def gpt():
    torch.set_num_threads(1)
    return load_checkpoint(bundled_checkpoints()["gpt-facts"])


@pytest.fixture
def panel(qtbot, gpt):
    state = SessionState()
    panel = SamplingPanel(state, synchronous=True)
    qtbot.addWidget(panel)
    panel.resize(1000, 600)
    panel.show()
    runner = Runner(state, synchronous=True)
    runner.set_bundle(gpt, then_run=PROMPT)
    runner.wait()
    assert panel.next_token is not None
    return panel


def reference_logits(bundle) -> np.ndarray:
    """The last position's logits of one plain forward over <bos> + prompt (bos and pad never sampled)."""
    tok = bundle.tgt_tokenizer
    ids = torch.tensor([[tok.bos_id] + tok.encode(PROMPT).ids])
    with torch.no_grad():
        logits = bundle.model(None, ids)[0, -1].double().numpy().copy()
    logits[[tok.bos_id, bundle.config.pad_id]] = -np.inf
    return logits


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x[np.isfinite(x)].max())
    return e / e.sum()


@pytest.mark.parametrize("temperature", [0.5, 2.0])
def test_temperature_redraws_the_bars_as_softmax_of_logits_over_t(panel, gpt, temperature):
    before = panel.bars.outline.copy()
    panel.controls.temperature.setValue(temperature)
    expected = softmax(reference_logits(gpt) / temperature)
    drawn = panel.bars.rows
    assert drawn == list(np.argsort(-expected)[:len(drawn)])  # the most probable tokens, best first
    assert np.allclose(panel.bars.outline, expected[drawn], atol=1e-5)
    assert np.allclose(panel.bars.filled, expected[drawn], atol=1e-5)  # nothing cut: final = tempered
    assert not np.allclose(before, panel.bars.outline, atol=1e-4)  # the change is visible
    assert f"T = {temperature:g}" in panel.summary.text()


def test_top_p_keeps_the_smallest_set_whose_mass_reaches_p(panel, gpt):
    panel.controls.temperature.setValue(2.0)  # flat enough that the nucleus holds several tokens
    panel.controls.top_p.setValue(0.3)
    probs = softmax(reference_logits(gpt) / 2.0)
    order, mass, nucleus = np.argsort(-probs), 0.0, set()
    for i in order:  # the nucleus, by hand
        nucleus.add(int(i))
        mass += probs[i]
        if mass >= 0.3:
            break
    kept = set(torch.nonzero(panel.current.final > 0).flatten().tolist())
    assert kept == nucleus and len(kept) > 1
    assert np.isclose(float(panel.current.final.sum()), 1.0, atol=1e-5)
    kept_list = sorted(kept)
    assert np.allclose(panel.current.final[kept_list].numpy(), probs[kept_list] / probs[kept_list].sum(), atol=1e-5)
    notes = dict(zip(panel.bars.rows, panel.bars.marks))
    assert all((notes[i] == "") == (i in nucleus) for i in notes)  # the rest say they were cut
    assert "top-p" in notes.values()


def test_top_k_cuts_all_but_k_tokens(panel, gpt):
    panel.controls.temperature.setValue(2.0)
    panel.controls.top_k.setValue(3)
    probs = softmax(reference_logits(gpt) / 2.0)
    top3 = list(np.argsort(-probs)[:3])
    assert panel.current.kept == 3
    assert np.allclose(panel.bars.filled[:3], probs[top3] / probs[top3].sum(), atol=1e-5)
    assert panel.bars.marks[3:] == ["top-k"] * (len(panel.bars.rows) - 3)


def test_generate_decodes_with_the_chosen_method_and_seed(panel, gpt):
    panel.controls.temperature.setValue(1.5)
    panel.controls.seed.setValue(7)
    panel.controls.button.click()
    src, _ = gpt.encode_source(PROMPT)
    sampled = gpt.tgt_tokenizer.decode(gpt.generate_ids(src, method="sample", temperature=1.5, seed=7))
    assert "seed 7" in panel.output.text() and sampled in panel.output.text()
    panel.controls.method.setCurrentIndex(panel.controls.method.findData("greedy"))
    panel.controls.button.click()
    assert panel.state.frame.output_text in panel.output.text()  # the frame's own output is greedy


def test_a_later_decoding_step_shows_that_steps_distribution(panel, gpt):
    """Step t (counted from 1): the distribution after the prompt and the first t − 1 generated
    tokens (a plain forward)."""
    steps = panel.state.frame.decode.steps
    assert len(steps) > 2 and (panel.controls.step.minimum(), panel.controls.step.maximum()) == (1, len(steps))
    assert panel.controls.step.text() == f"decoding step 1 of {len(steps)}"
    panel.controls.step.setValue(3)
    tok = gpt.tgt_tokenizer
    ids = torch.tensor([steps[2].prefix])
    assert ids[0, 1:1 + len(tok.encode(PROMPT).ids)].tolist() == tok.encode(PROMPT).ids
    with torch.no_grad():
        logits = gpt.model(None, ids)[0, -1].double().numpy().copy()
    logits[[tok.bos_id, gpt.config.pad_id]] = -np.inf
    expected = softmax(logits)
    assert panel.bars.rows[0] == int(np.argmax(expected))
    assert np.allclose(panel.bars.outline, expected[panel.bars.rows], atol=1e-5)
    assert "2 generated tokens" in panel.note.text()


def test_without_a_recorded_decode_one_forward_gives_the_same_first_row(panel, gpt):
    from model.inference.next_token import from_decode_step, next_token_logits
    direct = next_token_logits(gpt, PROMPT).logits.softmax(-1)
    recorded = from_decode_step(panel.state.frame.decode.steps[0], gpt).logits.softmax(-1)
    assert torch.allclose(direct, recorded, atol=1e-6)


def test_the_summary_counts_the_tokens_the_model_rules_out(panel, gpt):
    """<bos> and <pad> are never sampled: with no filter every other token is kept, and the
    summary says why the count is short of the vocabulary."""
    panel.controls.temperature.setValue(1.0)
    logits = reference_logits(gpt)
    vocab, ruled_out = logits.size, int((~np.isfinite(logits)).sum())
    assert ruled_out == 2
    assert f"{vocab - ruled_out:,} of {vocab:,} tokens kept ({ruled_out:,} ruled out by the model)" \
        in panel.summary.text()


def test_a_low_plot_draws_the_top_rows_that_fit_and_says_how_many_of_the_vocabulary(panel, gpt, qtbot):
    """A short plot draws fewer tokens, still the most probable first, each row at least a line of
    its label high, and its title counts them against the whole vocabulary."""
    from PySide6.QtGui import QFontMetricsF
    from PySide6.QtWidgets import QApplication
    counts = {}
    for height in (1200, 500):
        panel.resize(1000, height)
        QApplication.processEvents()
        bars = panel.bars
        n = counts[height] = len(bars.rows)
        expected = softmax(reference_logits(gpt))
        assert bars.rows == list(np.argsort(-expected)[:n])
        vocab = expected.size
        assert bars.getPlotItem().titleLabel.text == f"The {n} most probable of {vocab:,} tokens"
        line = QFontMetricsF(bars.getPlotItem().getAxis("left").style["tickFont"]).height()
        assert bars.getPlotItem().getViewBox().height() / n >= line  # labels never overlap
    assert 3 <= counts[500] < counts[1200]
