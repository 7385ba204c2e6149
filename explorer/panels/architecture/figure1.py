"""Lays out the paper's Figure 1 for a given `TransformerConfig` in a `QGraphicsScene`.

The figure is drawn from the real config — which stacks exist (`model_kind.has_encoder`,
`has_decoder`, cross-attention only in an encoder-decoder), how many layers, pre-LN or
post-LN — never from a static image. Flow goes bottom-up as in the paper; the encoder's
residual connections run on its left, the decoder's on its right.

Every clickable element carries a `template` key: the step-name prefix it stands for, with
`{layer}` left open when the layers are collapsed into one "N×" layer (the panel fills in
whichever layer the stepper is in).

A BERT-family encoder (MiniLM) builds its input differently from the paper, and the figure
says so: a "Token Type" embedding T[0] joins the ⊕ (`type_vocab_size` > 0) and a LayerNorm
sits between the ⊕ and the first layer (`embedding_norm`, Devlin et al. 2019, Fig. 2).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtWidgets import QGraphicsScene, QGraphicsSimpleTextItem

from explorer.panels.architecture.diagram_items import (
    ADDER_R,
    LABEL_PT,
    SMALL_PT,
    STACK_PT,
    WAVE_R,
    AdderItem,
    BlockItem,
    StackBox,
    WaveItem,
    arrow,
    diagram_font,
    line_height,
    shape_font,
    text,
    text_width,
)
from model.inference.figure1 import (
    attention_title,
    block_titles,
    embedding_title,
    ffn_title,
    inputs_title,
    norm_title,
    positional_titles,
)

GAP = 12.0  # between elements
SUB_GAP = 28.0  # before a sublayer: room for the residual branch and the Q/K/V fork
RESIDUAL_OFFSET = 24.0  # residual line, outside the blocks
BOX_PAD_OUTER, BOX_PAD_INNER = 34.0, 14.0
COLUMN_GAP = 64.0  # between the two stacks: the encoder→decoder bus runs here
LAYER_GAP = 8.0  # extra room between layers so each layer's box holds its own residual branch
LABEL_GAP = 10.0  # between a stack's box and its "Encoder / N× / layer" labels
MAX_TOKENS_SHOWN = 999  # the shape room is reserved for up to this many positions


def shape_room(cfg) -> float:
    """The width the widest shape string of this model can take, e.g. "(1, 999, 30522)"."""
    widest = max(cfg.d_model, cfg.d_ff, getattr(cfg, "src_vocab_size", 0) or 0, getattr(cfg, "tgt_vocab_size", 0) or 0)
    return text_width(f"(1, {MAX_TOKENS_SHOWN}, {widest})", shape_font())


@dataclass
class Element:
    """A placed clickable item and what it shows."""

    item: BlockItem
    stack: str  # "encoder" | "decoder" | "generator"
    template: str  # step-name prefix, maybe with {layer}
    shape_template: str  # step whose tensor shape is shown


@dataclass
class Figure:
    """What the builder placed: elements to update, and texts to refresh per input."""

    elements: list[Element] = field(default_factory=list)
    boxes: list[tuple[StackBox, str, str]] = field(default_factory=list)  # (box, stack, template)
    token_texts: dict[str, QGraphicsSimpleTextItem] = field(default_factory=dict)  # "src" | "tgt" | "out"
    token_labels: dict[str, QGraphicsSimpleTextItem] = field(default_factory=dict)  # "Inputs" … of each line
    inline: bool = False  # shapes beside names; token lines beside their labels
    layer_labels: dict[str, QGraphicsSimpleTextItem] = field(default_factory=dict)  # collapsed: "layer i of N"
    column_width: dict[str, float] = field(default_factory=dict)  # the blocks' width under each token line


class Figure1Builder:
    """Builds one figure; `build()` returns the `Figure` bookkeeping."""

    def __init__(self, scene: QGraphicsScene, config, expanded: bool, inline: bool = False):
        """inline: each block's shape beside its name (a wide, low figure for a wide screen);
        otherwise under it (a narrow, tall one)."""
        self.scene, self.cfg, self.expanded, self.inline = scene, config, expanded, inline
        self.fig = Figure(inline=inline)
        self.widths = {}
        for stack in ("encoder", "decoder"):
            self.widths[stack], self.block_h = BlockItem.size_for(block_titles(config, stack), shape_room(config),
                                                                  inline)
        self.block_w = self.widths["encoder"]  # the column being built (`_use_column`)
        self.wave_offset = 0.0

    def _use_column(self, stack: str) -> None:
        """Build in this column from now on: its block width, and its ∿ clear of its blocks."""
        self.block_w = self.widths[stack]
        self.wave_offset = self.block_w / 2 + max(WaveItem("", short=positional_titles(self.cfg)[1]).text_extent(), WAVE_R) + 14

    def _block(self, title: str, role: str, width: float | None = None) -> BlockItem:
        return BlockItem("", title, role, width or self.block_w, self.block_h, inline=self.inline)

    # -- public -------------------------------------------------------------------------------
    def build(self) -> Figure:
        kind = self.cfg.model_kind
        enc_x = 0.0
        dec_x = (self.widths["encoder"] + self.widths["decoder"]) / 2 + COLUMN_GAP if kind.has_encoder else 0.0
        memory_top = None
        if kind.has_encoder:
            top = self._column("encoder", enc_x, residual_right=False, cross=False)
            memory_top = top
            if not kind.has_decoder and self.cfg.output_layer:  # encoder-only: the generator sits on the encoder
                self._generator(enc_x, top, axis="src")
            elif not kind.has_decoder:  # a sentence encoder: no Linear, no Softmax to draw
                self._no_head(enc_x, top)
        if kind.has_decoder:
            cross = kind.has_cross_attention
            top = self._column("decoder", dec_x, residual_right=True, cross=cross,
                               memory=(memory_top, enc_x) if cross else None)
            self._generator(dec_x, top, axis="tgt")
        return self.fig

    # -- pieces ------------------------------------------------------------------------------
    def _add(self, item: BlockItem, stack: str, template: str, shape_template: str, pos: QPointF) -> BlockItem:
        item.setPos(pos)
        self.scene.addItem(item)
        item.template = template
        self.fig.elements.append(Element(item, stack, template, shape_template))
        return item

    def _column(self, stack: str, cx: float, residual_right: bool, cross: bool, memory=None) -> QPointF:
        """Inputs → embedding → ⊕ positions → N layers (→ final norm); returns the column's top point."""
        cfg = self.cfg
        axis = "src" if stack == "encoder" else "tgt"
        self._use_column(stack)
        self.fig.column_width[axis] = self.block_w
        outer = 1.0 if residual_right else -1.0
        y = 0.0
        label = inputs_title(cfg, stack)
        label_h = line_height(diagram_font(LABEL_PT, bold=True))
        self.fig.token_labels[axis] = text(self.scene, label, QPointF(cx, y), LABEL_PT, bold=True)
        tokens_y = y if self.inline else y + label_h / 2 + line_height(shape_font()) / 2  # beside or under it
        self.fig.token_texts[axis] = text(self.scene, "", QPointF(cx, tokens_y), SMALL_PT, mono=True, colour="muted")
        prev = QPointF(cx, y - label_h / 2 - 2)
        y = prev.y() - GAP - self.block_h / 2
        emb = self._add(self._block(embedding_title(cfg, stack), "embedding"), stack, f"{stack}.embedding",
                        f"{stack}.embedding.scaled", QPointF(cx, y))
        arrow(self.scene, [prev, emb.bottom()])
        y -= self.block_h / 2 + GAP + ADDER_R
        adder = self._add(AdderItem("", "⊕", label_right=not residual_right), stack, f"{stack}.input",
                          f"{stack}.input", QPointF(cx, y))
        arrow(self.scene, [emb.top(), adder.mapToScene(QPointF(0, 15))])
        rotary = cfg.positional == "rope"
        wave_title, short = positional_titles(cfg)
        wave = self._add(WaveItem("", title=wave_title, short=short), stack, f"{stack}.positional", f"{stack}.positional",
                         QPointF(cx + outer * self.wave_offset, y))
        if not rotary:  # RoPE adds nothing to the embeddings: it turns q and k inside attention
            arrow(self.scene, [wave.mapToScene(QPointF(-outer * WAVE_R, 0)), adder.mapToScene(QPointF(outer * 15, 0))])
        if stack == "encoder" and cfg.type_vocab_size:
            self._token_type(stack, cx, emb, adder, -outer)
        flow_top = adder.mapToScene(QPointF(0, -15))
        y -= 15 + GAP
        if cfg.embedding_norm:  # BERT: LayerNorm(E + P + T) is what enters layer 0
            y -= self.block_h / 2
            norm = self._add(self._block("LayerNorm", "norm"), stack, f"{stack}.input_norm",
                             f"{stack}.input_norm", QPointF(cx, y))
            arrow(self.scene, [flow_top, norm.bottom()])
            flow_top = norm.top()
            y -= self.block_h / 2 + GAP

        layers = range(self._n_layers(stack)) if self.expanded else [None]
        for layer in layers:
            y, flow_top = self._layer(stack, cx, y, flow_top, layer, outer, cross, memory)
        if cfg.norm_first:
            y -= self.block_h / 2
            final = self._add(self._block(f"Final {norm_title(cfg)}", "norm"), stack, f"{stack}.final_norm",
                              f"{stack}.final_norm", QPointF(cx, y))
            arrow(self.scene, [flow_top, final.bottom()])
            flow_top = final.top()
            y -= self.block_h / 2 + GAP
        return flow_top

    def _token_type(self, stack: str, cx: float, emb: BlockItem, adder: AdderItem, side: float) -> None:
        """BERT's token-type (segment) embedding beside the token embedding, into the ⊕ from below
        (under the ⊕'s shape label); a single sentence is all type 0."""
        width = BlockItem.size_for(["Token Type"], shape_room(self.cfg), self.inline)[0]
        x = cx + side * (self.block_w / 2 + 36 + width / 2)
        block = self._add(self._block("Token Type", "embedding", width), stack,
                          f"{stack}.embedding.token_type", f"{stack}.embedding.token_type", QPointF(x, emb.pos().y()))
        entry = adder.mapToScene(QPointF(side * ADDER_R * 0.7, ADDER_R * 0.7))
        below = entry.y() + 14
        arrow(self.scene, [block.top(), QPointF(x, below), QPointF(entry.x() + side * 14, below), entry])

    def _n_layers(self, stack: str) -> int:
        return self.cfg.n_encoder_layers if stack == "encoder" else self.cfg.n_decoder_layers

    def _layer(self, stack, cx, y, flow_top, layer, outer, cross, memory):
        """One layer's sublayers inside its grey box; returns (next y, top of the flow)."""
        n = self._n_layers(stack)
        lid = "{layer}" if layer is None else str(layer)
        prefix = f"{stack}.layers.{lid}"
        subs = [("self_attn", attention_title(self.cfg, masked=stack != "encoder"), "attention", "qkv", "add_norm1")]
        if stack == "decoder" and cross:
            subs.append(("cross_attn", "Multi-Head Cross-Attention", "attention", "cross", "add_norm2"))
        subs.append(("ffn", ffn_title(self.cfg), "ffn", "single", "add_norm3" if stack == "decoder" else "add_norm2"))
        y -= LAYER_GAP
        box_bottom = None
        for sub, title, role, entry, add_norm in subs:
            y, new_top, branch_y = self._sublayer(stack, cx, y, flow_top, f"{prefix}.{sub}", title, role, entry,
                                                  f"{prefix}.{add_norm}", outer, memory)
            box_bottom = branch_y + 6 if box_bottom is None else box_bottom
            flow_top = new_top
        # the grey layer box, and its labels on the outer side
        top = flow_top.y() - 6
        left = cx - self.block_w / 2 - (BOX_PAD_OUTER if outer < 0 else BOX_PAD_INNER)
        right = cx + self.block_w / 2 + (BOX_PAD_OUTER if outer > 0 else BOX_PAD_INNER)
        rect = QRectF(left, top, right - left, box_bottom - top)
        box = StackBox("", rect)
        box.template = prefix
        self.scene.addItem(box)
        self.fig.boxes.append((box, stack, prefix))
        edge = QPointF(right + LABEL_GAP if outer > 0 else left - LABEL_GAP, rect.center().y())
        align = Qt.AlignLeft if outer > 0 else Qt.AlignRight
        name = "Encoder" if stack == "encoder" else "Decoder"
        if layer is None:
            big = line_height(diagram_font(STACK_PT, bold=True)) + 4  # a little air between the three lines
            text(self.scene, name, edge + QPointF(0, -(big + line_height(diagram_font(LABEL_PT, bold=True))) / 2),
                 LABEL_PT, bold=True, align=align)
            text(self.scene, f"{n}×", edge, STACK_PT, bold=True, align=align)
            self.fig.layer_labels[stack] = text(self.scene, f"layer 1/{n}",
                                                edge + QPointF(0, (big + line_height(diagram_font(SMALL_PT))) / 2),
                                                SMALL_PT, colour="muted", align=align)
        else:
            text(self.scene, f"{name}\nlayer\n{layer + 1}/{n}", edge, SMALL_PT, bold=True, align=align)
        return y, flow_top

    def _sublayer(self, stack, cx, y, flow_top, key, title, role, entry, add_key, outer, memory):
        """Post-LN: Sublayer → Add & Norm. Pre-LN: Norm → Sublayer → Add (⊕). Residual around it.

        Returns (next y, top of the flow, y where the residual leaves the stream)."""
        side_x = cx + outer * (self.block_w / 2 + RESIDUAL_OFFSET)
        y -= SUB_GAP - GAP
        if self.cfg.norm_first:
            y -= self.block_h / 2
            norm = self._add(self._block(norm_title(self.cfg), "norm"), stack, f"{add_key}.norm", f"{add_key}.norm",
                             QPointF(cx, y))
            arrow(self.scene, [flow_top, norm.bottom()])
            first_bottom = norm.bottom()
            y -= self.block_h / 2 + SUB_GAP
            inp = norm.top()
        else:
            inp = flow_top
        y -= self.block_h / 2
        block = self._add(self._block(title, role), stack, key, f"{key}.output", QPointF(cx, y))
        if not self.cfg.norm_first:
            first_bottom = block.bottom()
        self._enter(block, inp, entry, outer, memory)
        y -= self.block_h / 2 + GAP
        if self.cfg.norm_first:
            y -= 15
            add = self._add(AdderItem("", "Add", label_right=outer < 0), stack, f"{add_key}.residual",
                            f"{add_key}.residual", QPointF(cx, y))
            arrow(self.scene, [block.top(), add.mapToScene(QPointF(0, 15))])
            target = add.mapToScene(QPointF(outer * 15, 0))
            out_top = add.mapToScene(QPointF(0, -15))
            y -= 15 + GAP
        else:
            y -= self.block_h / 2
            add = self._add(self._block("Add & Norm", "norm"), stack, add_key,
                            f"{add_key}.norm", QPointF(cx, y))
            arrow(self.scene, [block.top(), add.bottom()])
            target = add.side(outer > 0)
            out_top = add.top()
            y -= self.block_h / 2 + GAP
        branch = QPointF(cx, first_bottom.y() + SUB_GAP - 10)  # below any Q/K/V fork
        arrow(self.scene, [branch, QPointF(side_x, branch.y()), QPointF(side_x, target.y()), target])
        return y, out_top, branch.y()

    def _enter(self, block: BlockItem, inp: QPointF, entry: str, outer: float, memory) -> None:
        """Arrows into a sublayer: one (FFN), three (Q, K, V from the stream), or Q from the
        stream and K, V from the encoder's output (cross-attention, Section 3.2.3)."""
        b = block.bottom()
        off = self.block_w * 0.28
        if entry == "single":
            arrow(self.scene, [inp, b])
            return
        if entry == "qkv":
            fork = QPointF(b.x(), b.y() + 14)
            arrow(self.scene, [inp, fork], head=False)
            arrow(self.scene, [fork, b])
            for dx in (-off, off):
                arrow(self.scene, [fork, QPointF(b.x() + dx, fork.y()), QPointF(b.x() + dx, b.y())])
            return
        # cross: Q from the decoder stream on the outer side, K and V from the encoder memory
        jog = QPointF(b.x(), b.y() + 22)
        arrow(self.scene, [inp, jog, QPointF(b.x() + outer * off, jog.y()), QPointF(b.x() + outer * off, b.y())])
        if memory is None or memory[0] is None:
            return
        mem_top, enc_x = memory
        bus_x = enc_x + self.widths["encoder"] / 2 + COLUMN_GAP / 2
        kv_y = b.y() + 10
        rise = QPointF(mem_top.x(), mem_top.y() - 22)
        arrow(self.scene, [mem_top, rise, QPointF(bus_x, rise.y()), QPointF(bus_x, kv_y), QPointF(b.x(), kv_y),
                           b], colour="accent_text")  # the encoder memory
        arrow(self.scene, [QPointF(b.x() - outer * off, kv_y), QPointF(b.x() - outer * off, b.y())],
              colour="accent_text")  # the encoder memory

    def _generator(self, cx: float, flow_top: QPointF, axis: str) -> None:
        """Linear → Softmax → output probabilities (Section 3.4)."""
        self._use_column("encoder" if axis == "src" else "decoder")
        self.fig.column_width["out"] = self.block_w
        y = flow_top.y() - GAP - self.block_h / 2
        linear = self._add(self._block("Linear", "linear"), "generator", "generator.logits", "generator.logits",
                           QPointF(cx, y))
        arrow(self.scene, [flow_top, linear.bottom()])
        y -= self.block_h + GAP
        soft = self._add(self._block("Softmax", "softmax"), "generator", "generator.probs", "generator.probs",
                         QPointF(cx, y))
        arrow(self.scene, [linear.top(), soft.bottom()])
        tokens_h, label_h = line_height(shape_font()), line_height(diagram_font(LABEL_PT, bold=True))
        y -= self.block_h / 2 + GAP + (label_h if self.inline else tokens_h) / 2
        arrow(self.scene, [soft.top(), QPointF(cx, y + (label_h if self.inline else tokens_h) / 2 + 2)])
        self.fig.token_texts["out"] = text(self.scene, "", QPointF(cx, y), SMALL_PT, mono=True, colour="muted")
        label_y = y if self.inline else y - (tokens_h + label_h) / 2
        self.fig.token_labels["out"] = text(self.scene, "Output Probabilities", QPointF(cx, label_y), LABEL_PT,
                                            bold=True)

    def _no_head(self, cx: float, flow_top: QPointF) -> None:
        """A model without an output layer (all-MiniLM-L6-v2): say so where Linear → Softmax would be."""
        label_h = line_height(diagram_font(LABEL_PT, bold=True))
        y = flow_top.y() - GAP - label_h
        arrow(self.scene, [flow_top, QPointF(cx, y + label_h / 2 + 2)])
        text(self.scene, "Sentence embedding", QPointF(cx, y), LABEL_PT, bold=True)
        text(self.scene, "mean over tokens, normalised (no LM head)", QPointF(cx, y - label_h), SMALL_PT,
             colour="muted")
