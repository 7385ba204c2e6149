"""The KV cache of a decoder-only model: one layer's keys and values of positions 0 … t (the rows
not cached yet hatched), the query heads sharing that key/value head reading them at t, and the
cache's size in bytes. Drawn from the recorded forward: causally, one pass and step-by-step caching
give the same K, V."""
from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QSpinBox, QTabWidget

from explorer import style
from explorer.drawing.heatmap import Heatmap
from explorer.panels.base import Panel
from explorer.panels.layouts import column, row
from explorer.panels.texts import say, text_label
from explorer.panels.transport import Transport
from model.inference.kv_cache import cache_note, cached_tensors, describe_cache, reads_title
from model.interpret.kv_view import cache_view

PLAY_MS = 600  # one generation step a beat when playing


class KVCachePanel(Panel):
    panel_name = "kvcache"
    title = "KV cache"

    def __init__(self, state, parent=None):
        super().__init__(state, parent)
        self.tensors = None  # (K, V, weights) of the layer shown
        self.pieces: list[str] = []
        self.n_prompt = 0
        self.note = text_label()
        self.layer, self.kv_head = QSpinBox(prefix="layer "), QSpinBox(prefix="KV head ")
        self.transport = Transport(PLAY_MS)
        self.step = self.transport.slider
        self.step.setToolTip("The newest query's position t (from 0): the cache holds positions 0 … t")
        self.keys = Heatmap(colormap=style.colormap(style.DIVERGING), square=False, colour_bar=True)
        self.values = Heatmap(colormap=style.colormap(style.DIVERGING), square=False, colour_bar=True)
        self.reads = Heatmap(square=False, colour_bar=True)
        for heatmap, rows, cols in ((self.keys, "position", "d_k"), (self.values, "position", "d_k"),
                                    (self.reads, "", "cached position")):
            heatmap.set_axis_names(rows, cols)
        self.maps = QTabWidget()  # K or V at a time: each map as wide as the page lets it be
        self.maps.addTab(self.keys, "K: keys")
        self.maps.addTab(self.values, "V: values")
        self.reading = text_label()  # the reads' title, wrapped: which query reads how many keys
        self.memory = text_label(rich=True)
        # K or V the page's whole height (every cached row's label readable), the reads and bytes beside it
        beside = column(self.reading, (self.reads, 1), self.memory, margins=0)
        column(self.note, row(self.layer, self.kv_head, (self.transport, 1)), (row((self.maps, 1), (beside, 1)), 1),
               parent=self, margins=4)
        self.layer.valueChanged.connect(self._load_layer)
        self.kv_head.valueChanged.connect(self.redraw)
        self.transport.moved.connect(self.redraw)
        self.follow(bundle=self._on_bundle, frame=self._on_frame)

    def _on_bundle(self, bundle) -> None:
        self.tensors = None
        self.transport.stop()
        for heatmap in (self.keys, self.values, self.reads):
            heatmap.clear_data()
        self.memory.setText("")
        self.reading.setText("")
        config = bundle.config
        decoder_only = config.kind == "decoder_only"
        for widget in (self.layer, self.kv_head, self.transport):
            widget.setEnabled(decoder_only)
        if not decoder_only:
            say(self.note, f"{bundle.name} is not a decoder-only model. A KV cache is what a decoder keeps between "
                "generation steps; open gpt-facts or SmolLM2 to watch one grow.", "warning")
            return
        self.layer.setRange(1, config.n_decoder_layers)  # counted from 1, as every panel names layers
        self.kv_head.setRange(1, config.kv_heads)
        say(self.note, cache_note(bundle.name, config), "info")

    def _on_frame(self, frame) -> None:
        if frame.bundle.config.kind != "decoder_only":
            return
        self.pieces = list(frame.forward.tgt_pieces)
        self.n_prompt = frame.forward.n_prompt
        self.transport.show_position(min(self.n_prompt, len(self.pieces) - 1), len(self.pieces))  # prompt read: step 1 next
        self._load_layer()

    def _load_layer(self, *_) -> None:
        if self.state.trace is not None:  # (the layer box moves only for a decoder-only model)
            self.tensors = cached_tensors(self.state.trace, self.layer.value() - 1)
            self.redraw()

    def redraw(self, *_) -> None:
        if self.tensors is None:
            return
        g, t = self.kv_head.value() - 1, self.step.value()
        self.transport.show_position(t, len(self.pieces))
        view = cache_view(*self.tensors, self.pieces, g, t)
        d_k = view.keys.shape[1]
        for heatmap, data, name in ((self.keys, view.keys, "K"), (self.values, view.values, "V")):
            heatmap.set_levels((-view.bound, view.bound))
            heatmap.set_data(data, view.rows, [str(i) for i in range(d_k)],
                             allowed=np.repeat(view.cached[:, None], d_k, axis=1), row_names=True)
            heatmap.set_title(f"{name}, layer {self.layer.value()}, KV head {g + 1}: {t + 1} rows")
        self.reads.set_data(view.reads, [f"q head {h + 1}" for h in view.heads], [str(i) for i in range(len(view.cached))],
                            allowed=np.tile(view.cached, (len(view.heads), 1)), row_names=True)  # (the maps name the tokens)
        self.reading.setText(reads_title(t, self.n_prompt, view.token))
        dtype = next(self.state.bundle.model.parameters()).dtype
        self.memory.setText(describe_cache(self.state.bundle.config, dtype, t + 1))
