"""Direct logit attribution: how much each head and each MLP writes the logit difference itself.

The stream the output layer reads is a sum: the embeddings, every head's output (its slice of
Wᴼ applied to its context), each attention's Wᴼ bias and every MLP's output — and, in a
post-LN model, each LayerNorm's β. Each LayerNorm on the way is made linear by freezing its
scale σ at the value the real forward computed (its input's standard deviation): LN(Σ c) =
Σ γ (c − mean c) / σ + β exactly, so every term goes through it on its own. The output layer is
linear, so term c adds (W_U[answer] − W_U[wrong]) · c to the logit difference, and the terms
(with the output layer's bias) sum to the model's logit difference.

What this leaves out: a term's effect through later layers (a head whose output another head
reads counts only its direct path; activation patching measures the total), and how the
frozen σ itself depends on each term.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from model.inference.bundle import ModelBundle
from model.interpret.patching import attention_sublayers
from model.interpret.patching_inputs import choose_tokens, output_tokenizer, prepare, token_id
from model.nn.hooks import Site, hooks

OTHER_TERMS = ("embeddings", "attention biases", "norm biases", "output bias")


@dataclass
class LogitAttribution:
    """Each head's and MLP's direct share of logit(answer) − logit(wrong) at the measured position."""

    labels: list[str]  # "L1 H2", "L1 cross H2", "L1 MLP"
    values: np.ndarray  # one per label
    kinds: list[str]  # "head" | "mlp", per label
    other: dict[str, float]  # the terms that are neither (OTHER_TERMS)
    total: float  # the model's own logit difference
    answer: str
    wrong: str
    position: int
    position_piece: str

    @property
    def accounted(self) -> float:
        """Every term summed: equals `total` up to rounding."""
        return float(self.values.sum()) + sum(self.other.values())


def _frozen_norm(norm: torch.nn.LayerNorm, stream: torch.Tensor, terms: dict[str, torch.Tensor]) -> None:
    """LayerNorm applied term by term with σ of the whole `stream` (d_model,) frozen; β joins
    the norm biases."""
    sigma = torch.sqrt(stream.var(unbiased=False) + norm.eps)
    gamma, beta = norm.weight.double(), norm.bias.double()
    for key, c in terms.items():
        terms[key] = gamma * (c - c.mean()) / sigma
    terms["norm biases"] = terms["norm biases"] + beta


def _sublayers(model, stack: str) -> list[tuple[str, str]]:
    """(sublayer, its Add & Norm) in the order a layer runs them."""
    attn = attention_sublayers(model, stack)
    norms = ["add_norm1", "add_norm2"] if len(attn) == 2 else ["add_norm1"]
    last = "add_norm3" if stack == "decoder" else "add_norm2"
    return list(zip(attn, norms)) + [("ffn", last)]


@torch.no_grad()
def direct_logit_attribution(bundle: ModelBundle, text: str, answer: str | int | None = None,
                             wrong: str | int | None = None, target: str | None = None) -> LogitAttribution:
    """Each head's and each MLP's direct contribution to logit(answer) − logit(wrong) at the
    measured position (model.interpret.patching_inputs), through every LayerNorm on the way
    frozen at its scale (see the module's docstring). answer / wrong: by default the model's
    top token and its runner-up. `other` holds the embeddings', biases' and β's terms, so
    `values.sum() + sum(other.values())` is the model's logit difference."""
    model = bundle.model
    model.eval()
    inputs = prepare(bundle, text, target)
    stack_name, p = inputs.output_stack, inputs.position
    stack = getattr(model, stack_name)
    cache: dict[str, torch.Tensor] = {}

    def keep(tensor: torch.Tensor, where: Site) -> None:
        cache[where.name] = tensor[0].double()

    patterns = [f"{stack_name}.input", f"{stack_name}.input_norm", f"{stack_name}.layers.*.context",
                f"{stack_name}.layers.*.ffn.output", f"{stack_name}.layers.*.residual"]
    with hooks(model, {pattern: keep for pattern in patterns}, reads_only=True):
        logits = inputs.logits(model)[0]
    ranked = logits.argsort(descending=True).tolist()
    a = token_id(bundle, answer)
    answer_id, wrong_id = choose_tokens(logits, logits, ranked[0] if a is None else a, token_id(bundle, wrong))
    first = cache.get(f"{stack_name}.input_norm", cache[f"{stack_name}.input"])
    terms = {"embeddings": first[p], "attention biases": torch.zeros_like(first[p]),
             "norm biases": torch.zeros_like(first[p])}
    labels, kinds = [], []
    norm_first = model.config.norm_first
    for l, layer in enumerate(stack.layers):
        for sub, add_norm in _sublayers(model, stack_name):
            prefix = f"{stack_name}.layers.{l}"
            module = getattr(layer, sub)
            if sub == "ffn":
                key = f"L{l + 1} MLP"
                terms[key] = cache[f"{prefix}.ffn.output"][p]
                labels.append(key)
                kinds.append("mlp")
            else:
                context = cache[f"{prefix}.{sub}.context"][:, p]  # (h, d_k)
                w_o = module.w_o.weight.double().unflatten(-1, (module.n_heads, module.d_k))  # (d_model, h, d_k)
                for h in range(module.n_heads):
                    key = f"L{l + 1} {'cross ' if sub == 'cross_attn' else ''}H{h + 1}"
                    terms[key] = w_o[:, h] @ context[h]
                    labels.append(key)
                    kinds.append("head")
                terms["attention biases"] = terms["attention biases"] + module.w_o.bias.double()
            if not norm_first:  # post-LN: this sublayer's sum goes through its LayerNorm
                _frozen_norm(getattr(layer, add_norm).norm, cache[f"{prefix}.{add_norm}.residual"][p], terms)
    if norm_first and stack.norm is not None:
        last = _sublayers(model, stack_name)[-1][1]
        _frozen_norm(stack.norm, cache[f"{stack_name}.layers.{len(stack.layers) - 1}.{last}.residual"][p], terms)
    weight = model.generator.weight.double()
    direction = weight[answer_id] - weight[wrong_id]
    values = np.array([float(direction @ terms[k]) for k in labels])
    other = {k: float(direction @ terms[k]) for k in OTHER_TERMS[:3]}
    bias = model.generator.bias
    other["output bias"] = float(bias[answer_id] - bias[wrong_id]) if bias is not None else 0.0
    pieces = output_tokenizer(bundle).pieces
    return LogitAttribution(labels, values, kinds, other, float(logits[answer_id] - logits[wrong_id]),
                            pieces([answer_id])[0], pieces([wrong_id])[0], p, inputs.pieces[stack_name][p])


__all__ = ["OTHER_TERMS", "LogitAttribution", "direct_logit_attribution"]
