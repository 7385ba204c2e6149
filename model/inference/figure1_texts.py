"""What Figure 1 says of one forward pass, Qt-free: each block's shape and tooltip (its recorded
steps, the heads head surgery edited), each token line's pieces, and the layer a step lies in."""
from __future__ import annotations

import re

from model.inference.figure1 import output_pieces
from model.nn.step_names import attention_of_step
from model.nn.step_summary import format_shape

_LAYER = re.compile(r"^(encoder|decoder)\.layers\.(\d+)\.")


def step_layer(name: str) -> tuple[str, int] | None:
    """("encoder" | "decoder", layer index) of a step inside a layer, else None."""
    m = _LAYER.match(name)
    return (m.group(1), int(m.group(2))) if m else None


def block_texts(trace, key: str, title: str, shape_step: str, edits: dict) -> tuple[str, bool, str]:
    """(shape, edited, tooltip) of the block standing for step prefix `key`: the shape of `shape_step`
    in `trace` ("" before a run); whether `edits` ({(kind, layer, head): op}) touch its heads; the
    tooltip naming its title, each of its steps with its shape and each edited head."""
    shape, tip = "", [title.replace("\n", " ")]
    if trace is not None and shape_step in trace:
        shape = format_shape(trace[shape_step].shape)
        tip += [f"{s.name}  {format_shape(s.shape)}" for s in trace if s.name == key or s.name.startswith(key + ".")]
    sublayer = attention_of_step(key + ".")
    edited = sorted((h, op) for (kind, layer, h), op in edits.items() if sublayer == (kind, layer))
    tip += [f"Head surgery: head {h + 1} {op}" for h, op in edited]
    return shape, bool(edited), "\n".join(tip)


def token_lines(result, bundle, axes) -> dict[str, tuple[list[str] | None, bool]]:
    """Each token line of the figure (`axes` of "src", "tgt", "out"): its pieces (None before a run),
    and whether its tokenizer reads characters (their letters may stand together)."""
    pieces = {"src": result.src_pieces, "tgt": result.tgt_pieces, "out": output_pieces(result)} if result else {}
    kinds = {"src": getattr(getattr(bundle, "src_tokenizer", None), "kind", ""),
             "tgt": getattr(getattr(bundle, "tgt_tokenizer", None), "kind", "")}
    kinds["out"] = kinds["tgt"] or kinds["src"]
    return {axis: (pieces.get(axis), kinds[axis] == "char") for axis in axes}
