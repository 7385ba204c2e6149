"""Figure 1 of the paper as data, drawn from the real config (stacks, layers, pre-/post-LN,
positional scheme, BERT's token-type input and embedding norm): every block, symbol, arrow, text
and layer box, in drawing units (y grows downwards; the flow goes up). Qt-free: text sizes come
from a `Measure` the painter supplies."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

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
LAYER_GAP = 8.0  # room between layers, so each layer's box holds its own residual branch
LABEL_GAP = 10.0  # between a layer's box and its "Encoder / N× / layer" labels
ADDER_R, WAVE_R = 15.0, 20.0
PAD_X, PAD_Y, TEXT_GAP = 10.0, 4.0, 14.0  # inside a block: around and between its texts
MAX_TOKENS_SHOWN = 999  # the shape room is reserved for up to this many positions
ARROW_ROOM = 26.0  # Softmax up to the output line: an arrow with a visible shaft, clear of the text

Point = tuple[float, float]


class Measure(Protocol):
    """Text sizes in the painter's fonts, named: title, shape, label, small, small_bold, stack, tokens."""

    def width(self, text: str, font: str) -> float: ...

    def height(self, font: str) -> float: ...


@dataclass
class Element:
    """A clickable block ("block"), ⊕ ("adder") or ∿ ("wave") centred at (x, y). `template` is the
    step-name prefix it stands for, with `{layer}` open when the layers are collapsed into one "N×"."""

    kind: str
    title: str
    role: str
    x: float
    y: float
    w: float
    h: float
    stack: str  # "encoder" | "decoder" | "generator"
    template: str
    shape_template: str  # the step whose tensor shape it shows
    label: str | None = None  # the name drawn, when not the title ("" for the ⊕, a short one for the ∿)
    label_right: bool = True  # the ⊕'s shape on its right
    beside: bool = False  # a block's shape beside its name (else under it)

    def at(self, dx: float, dy: float) -> Point:
        return self.x + dx, self.y + dy

    def top(self) -> Point:
        return self.at(0, -self.h / 2)

    def bottom(self) -> Point:
        return self.at(0, self.h / 2)

    def side(self, right: bool) -> Point:
        return self.at(self.w / 2 if right else -self.w / 2, 0)


@dataclass
class Arrow:
    points: list[Point]
    head: bool = True
    colour: str = "arrow"  # a palette role


@dataclass
class Text:
    """A text anchored at (x, y): its centre, or its left or right edge (`align`). `name`
    ("tokens.src", "label.out", "layer.encoder") marks the texts a panel refreshes; `stacked_y` is
    where a token line or its label goes when the line stands under its label instead of beside it."""

    value: str
    x: float
    y: float
    font: str = "small"
    colour: str = "text"
    align: str = "center"
    name: str = ""
    stacked_y: float | None = None  # None: y


@dataclass
class LayerBox:
    """The grey box around one layer; `template` is that layer's step prefix."""

    x: float
    y: float
    w: float
    h: float
    stack: str
    template: str


@dataclass
class Figure1:
    elements: list[Element] = field(default_factory=list)
    arrows: list[Arrow] = field(default_factory=list)
    texts: list[Text] = field(default_factory=list)
    boxes: list[LayerBox] = field(default_factory=list)
    column_width: dict[str, float] = field(default_factory=dict)  # the blocks' width under each token line
    inline: bool = False  # shapes beside the block names, token lines beside their labels


def figure1_layout(cfg, expanded: bool, inline: bool, measure: Measure) -> Figure1:
    """Figure 1 for `cfg`: every layer drawn (`expanded`) or one "N×" layer; `inline` puts each
    block's shape beside its name (a wide, low figure) instead of under it (a narrow, tall one)."""
    return _Layout(cfg, expanded, inline, measure).build()


class _Layout:
    def __init__(self, cfg, expanded: bool, inline: bool, measure: Measure):
        self.cfg, self.expanded, self.inline, self.m = cfg, expanded, inline, measure
        self.fig = Figure1(inline=inline)
        widest = max(cfg.d_model, getattr(cfg, "src_vocab_size", 0) or 0,
                     getattr(cfg, "tgt_vocab_size", 0) or 0)
        self.shape_room = measure.width(f"(1, {min(cfg.max_len, MAX_TOKENS_SHOWN)}, {widest})", "shape")
        self.widths = {}
        for stack in ("encoder", "decoder"):
            self.widths[stack], self.block_h = self.block_size(block_titles(cfg, stack))
        self.line_h = max(measure.height("title"), measure.height("shape")) + 2 * PAD_Y
        if not inline:  # one width: a name whose shape fits beside it in one column does in both
            self.widths = dict.fromkeys(self.widths, max(self.widths.values()))
        self.block_w, self.wave_offset = self.widths["encoder"], 0.0

    def block_size(self, titles: list[str]) -> tuple[float, float]:
        """The (width, height) a block needs for every title and the widest shape."""
        tw = max((self.m.width(t, "title") for t in titles), default=0.0)
        th, sh = self.m.height("title"), self.m.height("shape")
        if self.inline:
            return tw + TEXT_GAP + self.shape_room + 2 * PAD_X, max(th, sh) + 2 * PAD_Y
        return max(tw, self.shape_room) + 2 * PAD_X, th + sh + 2 * PAD_Y

    def beside(self, title: str) -> bool:
        """A block's shape beside its name: always inline, else where both fit its width."""
        return self.inline or self.m.width(title, "title") + TEXT_GAP + self.shape_room + 2 * PAD_X <= self.block_w

    def _h(self, title: str) -> float:
        return self.line_h if self.beside(title) else self.block_h

    def build(self) -> Figure1:
        kind = self.cfg.model_kind
        enc_x = 0.0
        dec_x = (self.widths["encoder"] + self.widths["decoder"]) / 2 + COLUMN_GAP if kind.has_encoder else 0.0
        memory_top = None
        if kind.has_encoder:
            memory_top = self._column("encoder", enc_x, residual_right=False)
            if not kind.has_decoder and self.cfg.output_layer:  # encoder-only: the generator sits on the encoder
                self._generator(enc_x, memory_top, axis="src")
            elif not kind.has_decoder:  # a sentence encoder: no Linear, no Softmax to draw
                self._no_head(enc_x, memory_top)
        if kind.has_decoder:
            cross = kind.has_cross_attention
            top = self._column("decoder", dec_x, residual_right=True, memory=(memory_top, enc_x) if cross else None)
            self._generator(dec_x, top, axis="tgt")
        return self.fig

    # -- records --------------------------------------------------------------------------------
    def _add(self, title: str, role: str, stack: str, template: str, x: float, y: float, shape: str = "",
             kind: str = "block", width: float | None = None, **more) -> Element:
        size = {"adder": 2 * ADDER_R, "wave": 2 * WAVE_R}.get(kind)
        e = Element(kind, title, role, x, y, size or width or self.block_w, size or self._h(title), stack, template,
                    shape or template, beside=kind == "block" and self.beside(title), **more)
        self.fig.elements.append(e)
        return e

    def _arrow(self, *points: Point, head: bool = True, colour: str = "arrow") -> None:
        self.fig.arrows.append(Arrow(list(points), head, colour))

    def _text(self, value: str, x: float, y: float, font: str = "small", **more) -> None:
        self.fig.texts.append(Text(value, x, y, font, **more))

    def _use_column(self, stack: str) -> None:
        """Build in this column from now on: its block width, and its ∿ clear of its blocks."""
        self.block_w = self.widths[stack]
        short = positional_titles(self.cfg)[1]
        self.wave_offset = self.block_w / 2 + max(self.m.width(short, "small") / 2, WAVE_R) + 14

    def _n_layers(self, stack: str) -> int:
        return self.cfg.n_encoder_layers if stack == "encoder" else self.cfg.n_decoder_layers

    # -- pieces ---------------------------------------------------------------------------------
    def _column(self, stack: str, cx: float, residual_right: bool, memory=None) -> Point:
        """Inputs → embedding → ⊕ positions → N layers (→ final norm); returns the column's top point."""
        cfg = self.cfg
        axis = "src" if stack == "encoder" else "tgt"
        self._use_column(stack)
        self.fig.column_width[axis] = self.block_w
        outer = 1.0 if residual_right else -1.0
        label_h = self.m.height("label")
        self._text(inputs_title(cfg, stack), cx, 0.0, "label", name=f"label.{axis}")
        under = label_h / 2 + self.m.height("shape") / 2
        self._text("", cx, 0.0 if self.inline else under, "tokens", colour="muted", name=f"tokens.{axis}",
                   stacked_y=under)  # beside its label, or under it
        prev = (cx, -label_h / 2 - 2)
        y = prev[1] - GAP - self._h(embedding_title(cfg, stack)) / 2
        emb = self._add(embedding_title(cfg, stack), "embedding", stack, f"{stack}.embedding", cx, y,
                        shape=f"{stack}.embedding.scaled")
        self._arrow(prev, emb.bottom())
        y -= emb.h / 2 + GAP + ADDER_R
        wave_title, short = positional_titles(cfg)
        wave = self._add(wave_title, "positional", stack, f"{stack}.positional", cx + outer * self.wave_offset, y,
                         kind="wave", label=short)
        if cfg.positional == "rope":  # RoPE adds nothing to the embeddings (no ⊕): it turns q and k in attention
            flow_top = emb.top()
        else:
            adder = self._add("⊕", "add", stack, f"{stack}.input", cx, y, kind="adder", label="",
                              label_right=not residual_right)
            self._arrow(emb.top(), adder.at(0, ADDER_R))
            self._arrow(wave.at(-outer * WAVE_R, 0), adder.at(outer * ADDER_R, 0))
            if stack == "encoder" and cfg.type_vocab_size:
                self._token_type(stack, cx, emb, adder, -outer)
            flow_top = adder.at(0, -ADDER_R)
        y -= ADDER_R + GAP
        if cfg.embedding_norm:  # BERT: LayerNorm(E + P + T) is what enters layer 0
            y -= self._h("LayerNorm") / 2
            norm = self._add("LayerNorm", "norm", stack, f"{stack}.input_norm", cx, y)
            self._arrow(flow_top, norm.bottom())
            flow_top = norm.top()
            y -= norm.h / 2 + GAP
        for layer in range(self._n_layers(stack)) if self.expanded else [None]:
            y, flow_top = self._layer(stack, cx, y, flow_top, layer, outer, memory)
        if cfg.norm_first:
            y -= self._h(f"Final {norm_title(cfg)}") / 2
            final = self._add(f"Final {norm_title(cfg)}", "norm", stack, f"{stack}.final_norm", cx, y)
            self._arrow(flow_top, final.bottom())
            flow_top = final.top()
        return flow_top

    def _token_type(self, stack: str, cx: float, emb: Element, adder: Element, side: float) -> None:
        """BERT's token-type (segment) embedding beside the token embedding, into the ⊕ from below."""
        width = self.block_size(["Token Type"])[0]
        if self.beside("Token Type"):
            width = self.m.width("Token Type", "title") + TEXT_GAP + self.shape_room + 2 * PAD_X
        x = cx + side * (self.block_w / 2 + 36 + width / 2)
        block = self._add("Token Type", "embedding", stack, f"{stack}.embedding.token_type", x, emb.y, width=width)
        entry = adder.at(side * ADDER_R * 0.7, ADDER_R * 0.7)
        below = entry[1] + 14
        self._arrow(block.top(), (x, below), (entry[0] + side * 14, below), entry)

    def _layer(self, stack, cx, y, flow_top, layer, outer, memory):
        """One layer's sublayers inside its grey box; returns (next y, top of the flow)."""
        n = self._n_layers(stack)
        prefix = f"{stack}.layers.{'{layer}' if layer is None else layer}"
        subs = [("self_attn", attention_title(self.cfg, masked=stack != "encoder"), "attention", "qkv", "add_norm1")]
        if memory is not None:
            subs.append(("cross_attn", "Multi-Head Cross-Attention", "attention", "cross", "add_norm2"))
        subs.append(("ffn", ffn_title(self.cfg), "ffn", "single", "add_norm3" if stack == "decoder" else "add_norm2"))
        y -= LAYER_GAP
        box_bottom = None
        for sub, title, role, entry, add_norm in subs:
            y, flow_top, branch_y = self._sublayer(stack, cx, y, flow_top, f"{prefix}.{sub}", title, role, entry,
                                                   f"{prefix}.{add_norm}", outer, memory)
            box_bottom = branch_y + 6 if box_bottom is None else box_bottom
        top = flow_top[1] - 6
        left = cx - self.block_w / 2 - (BOX_PAD_OUTER if outer < 0 else BOX_PAD_INNER)
        right = cx + self.block_w / 2 + (BOX_PAD_OUTER if outer > 0 else BOX_PAD_INNER)
        self.fig.boxes.append(LayerBox(left, top, right - left, box_bottom - top, stack, prefix))
        x, middle = (right + LABEL_GAP if outer > 0 else left - LABEL_GAP), (top + box_bottom) / 2
        align = "left" if outer > 0 else "right"
        name = "Encoder" if stack == "encoder" else "Decoder"
        if layer is None:  # the stack's name, "N×" and the layer shown, on the outer side
            big = self.m.height("stack") + 4
            self._text(name, x, middle - (big + self.m.height("label")) / 2, "label", align=align)
            self._text(f"{n}×", x, middle, "stack", align=align)
            self._text(f"layer 1/{n}", x, middle + (big + self.m.height("small")) / 2, colour="muted", align=align,
                       name=f"layer.{stack}")
        else:
            self._text(f"{name}\nlayer\n{layer + 1}/{n}", x, middle, "small_bold", align=align)
        return y, flow_top

    def _sublayer(self, stack, cx, y, flow_top, key, title, role, entry, add_key, outer, memory):
        """Post-LN: Sublayer → Add & Norm. Pre-LN: Norm → Sublayer → Add (⊕). Residual around it.
        Returns (next y, top of the flow, y where the residual leaves the stream)."""
        side_x = cx + outer * (self.block_w / 2 + RESIDUAL_OFFSET)
        y -= SUB_GAP - GAP
        inp = flow_top
        if self.cfg.norm_first:
            y -= self._h(norm_title(self.cfg)) / 2
            norm = self._add(norm_title(self.cfg), "norm", stack, f"{add_key}.norm", cx, y)
            self._arrow(flow_top, norm.bottom())
            y -= norm.h / 2 + SUB_GAP
            inp = norm.top()
        y -= self._h(title) / 2
        block = self._add(title, role, stack, key, cx, y, shape=f"{key}.output")
        first_bottom = norm.bottom() if self.cfg.norm_first else block.bottom()
        self._enter(block, inp, entry, outer, memory)
        y -= block.h / 2 + GAP
        if self.cfg.norm_first:
            y -= ADDER_R
            add = self._add("Add", "add", stack, f"{add_key}.residual", cx, y, kind="adder", label="",
                            label_right=outer < 0)
            self._arrow(block.top(), add.at(0, ADDER_R))
            target, out_top = add.at(outer * ADDER_R, 0), add.at(0, -ADDER_R)
            y -= ADDER_R + GAP
        else:
            y -= self._h("Add & Norm") / 2
            add = self._add("Add & Norm", "norm", stack, add_key, cx, y, shape=f"{add_key}.norm")
            self._arrow(block.top(), add.bottom())
            target, out_top = add.side(outer > 0), add.top()
            y -= add.h / 2 + GAP
        branch = (cx, first_bottom[1] + SUB_GAP - 10)  # below any Q/K/V fork
        self._arrow(branch, (side_x, branch[1]), (side_x, target[1]), target)
        return y, out_top, branch[1]

    def _enter(self, block: Element, inp: Point, entry: str, outer: float, memory) -> None:
        """Arrows into a sublayer: one (FFN), three (Q, K, V from the stream), or Q from the
        stream and K, V from the encoder's output (cross-attention, Section 3.2.3)."""
        bx, by = block.bottom()
        off = self.block_w * 0.28
        if entry == "single":
            self._arrow(inp, (bx, by))
        elif entry == "qkv":
            fork = (bx, by + 14)
            self._arrow(inp, fork, head=False)
            self._arrow(fork, (bx, by))
            for dx in (-off, off):
                self._arrow(fork, (bx + dx, fork[1]), (bx + dx, by))
        else:  # Q from the decoder stream on the outer side, K and V from the encoder memory
            jog = by + 22
            self._arrow(inp, (bx, jog), (bx + outer * off, jog), (bx + outer * off, by))
            mem_top, enc_x = memory
            if mem_top is None:
                return
            bus_x = enc_x + self.widths["encoder"] / 2 + COLUMN_GAP / 2
            kv_y, rise = by + 10, mem_top[1] - 22
            self._arrow(mem_top, (mem_top[0], rise), (bus_x, rise), (bus_x, kv_y), (bx, kv_y), (bx, by),
                        colour="accent_text")
            self._arrow((bx - outer * off, kv_y), (bx - outer * off, by), colour="accent_text")

    def _generator(self, cx: float, flow_top: Point, axis: str) -> None:
        """Linear → Softmax → output probabilities (Section 3.4)."""
        self._use_column("encoder" if axis == "src" else "decoder")
        self.fig.column_width["out"] = self.block_w
        y = flow_top[1] - GAP - self._h("Linear") / 2
        linear = self._add("Linear", "linear", "generator", "generator.logits", cx, y)
        self._arrow(flow_top, linear.bottom())
        y -= (linear.h + self._h("Softmax")) / 2 + GAP
        soft = self._add("Softmax", "softmax", "generator", "generator.probs", cx, y)
        self._arrow(linear.top(), soft.bottom())
        tokens_h, label_h = self.m.height("shape"), self.m.height("label")
        first = label_h if self.inline else tokens_h
        y -= soft.h / 2 + ARROW_ROOM + first / 2
        self._arrow(soft.top(), (cx, y + first / 2 + 4))
        self._text("", cx, y, "tokens", colour="muted", name="tokens.out")
        over = y - (tokens_h + label_h) / 2
        self._text("Output Probabilities", cx, y if self.inline else over, "label", name="label.out", stacked_y=over)

    def _no_head(self, cx: float, flow_top: Point) -> None:
        """A model without an output layer (all-MiniLM-L6-v2): say so where Linear → Softmax would be."""
        label_h = self.m.height("label")
        y = flow_top[1] - GAP - label_h
        self._arrow(flow_top, (cx, y + label_h / 2 + 2))
        self._text("Sentence embedding", cx, y, "label")
        self._text("mean over tokens, normalised (no LM head)", cx, y - label_h, colour="muted")
