"""Activation patching (Vig et al. 2020; Meng et al. 2022 "causal tracing"; Heimersheim & Nanda
2024): which activations carry the difference between a clean and a corrupted input.

Run the corrupted input, but take one activation from the clean run: the residual stream after
a layer at one position, an attention sublayer's or an MLP's output at one position, or one
head's output at every position (TransformerLens's `get_act_patch_attn_head_out_all_pos`). The
score of a patch is the share of the clean − corrupted logit difference it restores,

    (LD_patched − LD_corrupted) / (LD_clean − LD_corrupted),   LD = logit(answer) − logit(wrong)

at the measured position (model.interpret.patching_inputs): 1 where the patch alone brings the
clean answer back, 0 where it changes nothing, negative where it pushes the other way.

Every patch is a set of hooks on the named sites of model.nn.hooks: the clean run reads the
sites, and each patched run replaces one slice of one site's tensor. One forward patches a batch
of copies of the corrupted input, row i at its own position (or head).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import torch

from model.inference.bundle import ModelBundle
from model.interpret.patching_inputs import (
    ModelInput,
    PatchingError,
    choose_tokens,
    output_tokenizer,
    prepare_pair,
    token_id,
)
from model.nn.hooks import Site, hooks

SITES = ("resid", "attn", "mlp", "head")
SITE_TITLES = {"resid": "residual stream", "attn": "", "mlp": "MLP output", "head": "heads"}
SUBLAYER_TITLES = {"self_attn": "self-attention", "cross_attn": "cross-attention", "ffn": "", "": ""}
# (an attention map's title is its sublayer's name: "Decoder cross-attention"; its heads' map adds "heads")
TOP_K = 5
BATCH = 64  # patched copies per forward


@dataclass
class PatchMap:
    """One site's patching results: rows are layers, columns positions (heads for "head").

    `restored[l, c]`: the share of the logit difference that patching cell (l, c) restores;
    `logit_diff`: the patched runs' logit differences; `top_*`: each patched run's top tokens
    at the measured position."""

    site: str  # "resid" | "attn" | "mlp" | "head"
    stack: str  # "encoder" | "decoder"
    sublayer: str  # "self_attn" | "cross_attn" (attn, head), "ffn" (mlp), "" (resid)
    rows: list[str]
    columns: list[str]
    names: list[str]  # the hook site patched in each row
    restored: np.ndarray
    logit_diff: np.ndarray
    top_ids: np.ndarray  # (rows, columns, k)
    top_probs: np.ndarray  # (rows, columns, k)
    top_pieces: list[list[list[str]]]

    @property
    def title(self) -> str:
        words = [self.stack.capitalize(), SUBLAYER_TITLES[self.sublayer], SITE_TITLES[self.site]]
        return " ".join(w for w in words if w)

    @property
    def key(self) -> str:
        """"decoder.cross_attn.head": the map's name in a result and in the session."""
        return ".".join(p for p in (self.stack, self.sublayer, self.site) if p)


@dataclass
class PatchingResult:
    """Every map, the tokens compared and the two unpatched logit differences."""

    maps: list[PatchMap]
    answer: str
    wrong: str
    answer_id: int
    wrong_id: int
    clean_diff: float
    corrupted_diff: float
    position: int  # the measured position on the output stack's axis
    position_piece: str  # the token that position reads
    clean_top: list[tuple[str, float]] = field(default_factory=list)
    corrupted_top: list[tuple[str, float]] = field(default_factory=list)
    seconds: float = 0.0  # the whole run's time
    forwards: int = 0

    def map(self, key: str) -> PatchMap:
        for m in self.maps:
            if m.key == key:
                return m
        raise KeyError(f"no map {key!r}; the result has {', '.join(m.key for m in self.maps)}")


@dataclass
class _Plan:
    """One map to fill: its site name per layer and what a row's cells index (positions or heads)."""

    site: str
    stack: str
    sublayer: str
    names: list[str]
    n_cells: int


def stream_site(model, stack: str, layer: int) -> str:
    """The residual stream after `layer`: its last Add & Norm's sum (pre-LN) or its norm (post-LN)."""
    last = "add_norm3" if stack == "decoder" else "add_norm2"
    return f"{stack}.layers.{layer}.{last}.{'residual' if model.config.norm_first else 'norm'}"


def attention_sublayers(model, stack: str) -> list[str]:
    return ["self_attn", "cross_attn"] if stack == "decoder" and model.config.has_encoder else ["self_attn"]


def _plans(model, inputs: ModelInput, sites: tuple[str, ...]) -> list[_Plan]:
    cfg = model.config
    plans = []
    for stack in inputs.pieces:
        n_layers = cfg.n_encoder_layers if stack == "encoder" else cfg.n_decoder_layers
        positions = len(inputs.pieces[stack])
        layers = range(n_layers)
        for kind in sites:
            if kind == "resid":
                plans.append(_Plan(kind, stack, "", [stream_site(model, stack, l) for l in layers], positions))
            elif kind == "mlp":
                plans.append(_Plan(kind, stack, "ffn", [f"{stack}.layers.{l}.ffn.output" for l in layers], positions))
            else:
                local, cells = ("output", positions) if kind == "attn" else ("context", cfg.n_heads)
                for sub in attention_sublayers(model, stack):
                    plans.append(_Plan(kind, stack, sub, [f"{stack}.layers.{l}.{sub}.{local}" for l in layers], cells))
    return plans


def _splice(clean: torch.Tensor, index: torch.Tensor) -> Callable[[torch.Tensor, Site], torch.Tensor]:
    """A hook that gives batch row i the clean run's slice `index[i]` along dim 1 (a position of
    a (B, T, d) stream, or a head of a (B, h, T, d_k) context)."""
    def fn(tensor: torch.Tensor, where: Site) -> torch.Tensor:
        out = tensor.clone()
        rows = torch.arange(tensor.size(0), device=tensor.device)
        cells = index.to(tensor.device)
        out[rows, cells] = clean[0, cells].to(tensor.device, tensor.dtype)
        return out
    return fn


def _read_sites(model, inputs: ModelInput, names: list[str]) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """The clean run: the tensors at `names` and the logits at the measured position."""
    cache: dict[str, torch.Tensor] = {}

    def keep(tensor: torch.Tensor, where: Site) -> None:
        cache[where.name] = tensor.detach().clone()

    with hooks(model, {name: keep for name in names}, reads_only=True):
        logits = inputs.logits(model)[0]
    return cache, logits


@torch.no_grad()
def iter_activation_patching(bundle: ModelBundle, clean: str, corrupted: str, answer: str | int | None = None,
                             wrong: str | int | None = None, sites: tuple[str, ...] = SITES,
                             target: str | None = None) -> Iterator[tuple[int, int]]:
    """`activation_patching` as a generator: yields (forwards done, forwards in all) and returns
    the `PatchingResult` (for a worker thread that reports progress)."""
    started = time.perf_counter()
    unknown = [s for s in sites if s not in SITES]
    if unknown or not sites:
        raise PatchingError(f"Unknown patching site {unknown[0] if unknown else '(none)'!r}; "
                            f"choose from {', '.join(SITES)}.")
    model = bundle.model
    model.eval()
    a, b = prepare_pair(bundle, clean, corrupted, target)
    plans = _plans(model, a, tuple(sites))
    cache, clean_logits = _read_sites(model, a, [n for p in plans for n in p.names])
    corrupted_logits = b.logits(model)[0]
    answer_id, wrong_id = choose_tokens(clean_logits, corrupted_logits, token_id(bundle, answer),
                                        token_id(bundle, wrong))

    def diff(logits: torch.Tensor) -> torch.Tensor:
        return logits[..., answer_id] - logits[..., wrong_id]

    clean_diff, corrupted_diff = float(diff(clean_logits)), float(diff(corrupted_logits))
    if abs(clean_diff - corrupted_diff) < 1e-6:
        raise PatchingError("The clean and the corrupted input give the same logit difference, so there is "
                            "nothing for a patch to restore: change the corrupted input or the tokens compared.")
    pieces = output_tokenizer(bundle).pieces
    total = sum(len(p.names) * -(-p.n_cells // BATCH) for p in plans)
    done = 0
    yield done, total
    maps = []
    for plan in plans:
        diffs = torch.zeros(len(plan.names), plan.n_cells)
        top_ids = torch.zeros(len(plan.names), plan.n_cells, TOP_K, dtype=torch.long)
        top_probs = torch.zeros(len(plan.names), plan.n_cells, TOP_K)
        for row, name in enumerate(plan.names):
            for start in range(0, plan.n_cells, BATCH):
                index = torch.arange(start, min(start + BATCH, plan.n_cells))
                with hooks(model, {name: _splice(cache[name], index)}):
                    logits = b.logits(model, len(index))  # (n, V)
                diffs[row, index] = diff(logits).cpu()
                top = logits.softmax(-1).topk(min(TOP_K, logits.size(-1)), dim=-1)
                top_ids[row, index, :top.indices.size(1)] = top.indices.cpu()
                top_probs[row, index, :top.values.size(1)] = top.values.cpu()
                done += 1
                yield done, total
        columns = ([f"H{h + 1}" for h in range(plan.n_cells)] if plan.site == "head"
                   else list(a.pieces[plan.stack]))
        restored = (diffs - corrupted_diff) / (clean_diff - corrupted_diff)
        maps.append(PatchMap(plan.site, plan.stack, plan.sublayer, [f"layer {l + 1}" for l in range(len(plan.names))],
                             columns, plan.names, restored.numpy(), diffs.numpy(), top_ids.numpy(),
                             top_probs.numpy(), [[pieces(cell) for cell in r] for r in top_ids.tolist()]))
    tops = []
    for logits in (clean_logits, corrupted_logits):
        top = logits.softmax(-1).topk(min(TOP_K, logits.size(-1)))
        tops.append(list(zip(pieces(top.indices.tolist()), top.values.tolist())))
    return PatchingResult(maps, pieces([answer_id])[0], pieces([wrong_id])[0], answer_id, wrong_id, clean_diff,
                          corrupted_diff, a.position, a.pieces[a.output_stack][a.position], tops[0], tops[1],
                          time.perf_counter() - started, done)


def activation_patching(bundle: ModelBundle, clean: str, corrupted: str, answer: str | int | None = None,
                        wrong: str | int | None = None, sites: tuple[str, ...] = SITES,
                        target: str | None = None) -> PatchingResult:
    """Patch every (site, layer, position) — every (layer, head) for "head", at all positions —
    from the clean run into the corrupted one and score how much of the logit difference each
    restores (see the module's docstring).

    clean, corrupted: inputs with the same number of tokens (a source sentence, a prompt, or a
    masked LM's text with [MASK] at the same place). answer, wrong: output tokens (pieces or ids);
    by default the clean run's top token and the corrupted run's. target: an encoder-decoder's
    target prefix, the same for both runs (default: none; the first output token is measured).
    sites: any of "resid", "attn", "mlp", "head"; each is patched in every stack the model has
    (an encoder-decoder's encoder and decoder; its cross-attention as its own map).
    Raises `PatchingError` (a ValueError) for inputs that cannot be compared.
    """
    steps = iter_activation_patching(bundle, clean, corrupted, answer, wrong, sites, target)
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            return stop.value


__all__ = ["SITES", "PatchMap", "PatchingError", "PatchingResult", "activation_patching",
           "iter_activation_patching", "stream_site"]
