"""Linear weights laid out for decoding: each (out, in) matrix W stored as the transpose of a
contiguous (in, out) matrix Wᵀ.

`nn.Linear` computes x Wᵀ. For a cached decoding step x is one row, so the product reads every
weight once and runs at the speed memory delivers them: on one CPU thread MKL streams a
contiguous Wᵀ about a quarter faster than a row-major W, to bit-identical results. Only the
strides change: every weight keeps its shape, values, name, tie (a shared embedding and
output layer stay one tensor) and hook sites; a state dict, `.to(device)`, `.double()` and
checkpoint saving see the same matrices. (`.view` of such a weight may split its last axis,
as `unflatten` does, but not merge axes: reshape instead.)

Layers that read the same input side by side (a module's `JOINED_LINEARS`: attention's
W^Q, W^K, W^V; SwiGLU's gate and up) get their Wᵀ as adjacent column blocks of one (in, Σ out)
matrix, so a forward without gradients multiplies by all of them in one product
(`joined_linear`): fewer, larger kernels, the same numbers, no second copy of any weight.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def is_column_major(weight: torch.Tensor) -> bool:
    """Whether a 2-d weight (out, in) is stored column by column: the transpose of a contiguous
    matrix, or of column blocks of one."""
    return weight.dim() == 2 and weight.stride(0) == 1 and weight.stride(1) >= weight.size(0)


def _groups(model: nn.Module) -> list[tuple[nn.Linear, ...]]:
    """Every run of layers to lay out in one matrix (a module's `JOINED_LINEARS`), then every
    other `nn.Linear` alone, each weight once (a tied one is the same Parameter)."""
    groups, taken = [], set()
    for module in model.modules():
        for names in getattr(module, "JOINED_LINEARS", ()):
            layers = tuple(getattr(module, n) for n in names)
            if all(isinstance(layer, nn.Linear) for layer in layers) and len({layer.in_features for layer in layers}) == 1:
                groups.append(layers)
                taken.update(id(layer.weight) for layer in layers)
    for module in model.modules():
        if isinstance(module, nn.Linear) and id(module.weight) not in taken:
            groups.append((module,))
            taken.add(id(module.weight))
    return groups


@torch.no_grad()
def store_weights_transposed(model: nn.Module, keep_values: bool = True) -> nn.Module:
    """Lay out every `nn.Linear` weight of `model` column-major, the `JOINED_LINEARS` of a
    module side by side in one matrix (see the module docstring), in place; returns `model`.
    `keep_values=False`: give the weights fresh memory without copying them (a model about
    to be loaded, whose values would only be overwritten)."""
    for layers in _groups(model):
        first = layers[0].weight
        joined = torch.empty(first.size(1), sum(layer.out_features for layer in layers),
                             dtype=first.dtype, device=first.device)  # (in, Σ out)
        for block, layer in zip(joined.split([layer.out_features for layer in layers], dim=1), layers):
            if keep_values:
                block.copy_(layer.weight.t())
            layer.weight.data = block.t()  # the same Parameter (so every tie holds), new strides
    return model


def joined_weight(*layers: nn.Linear) -> torch.Tensor | None:
    """(in, Σ out): the layers' Wᵀ side by side, one view of the matrix `store_weights_transposed`
    laid them out in; None when the weights no longer share it (`.to(device)` or a cast gives
    each weight its own memory, row-major) or have different dtypes or biases."""
    first = layers[0].weight
    stride = (1, first.stride(1))
    address, size = first.data_ptr(), first.element_size()
    for layer in layers:
        weight = layer.weight
        if (weight.stride() != stride or weight.data_ptr() != address or weight.dtype != first.dtype
                or (layer.bias is None) != (layers[0].bias is None)):
            return None
        address += layer.out_features * size
    if first.untyped_storage().data_ptr() != layers[-1].weight.untyped_storage().data_ptr():
        return None
    width = sum(layer.out_features for layer in layers)
    with torch.inference_mode(False):  # an ordinary view, usable in any mode
        return first.t().as_strided((first.size(1), width), (stride[1], 1))


def joined_product(x: torch.Tensor, layers: tuple[nn.Linear, ...]) -> torch.Tensor | None:
    """x [W₁ᵀ | W₂ᵀ | …] + [b₁ | b₂ | …]: every layer's output side by side (…, Σ out), from one
    product with their `joined_weight`; None when there is none, or when gradients are wanted
    (the view reaches past each weight, so it would not carry them back)."""
    weights = [layer.weight for layer in layers]
    if weights[0].requires_grad and torch.is_grad_enabled():
        return None
    # Kept on the first layer (living as long as it does): the weights' addresses and their joined
    # Wᵀ (Σ out, in), or None. Comparing addresses is all a forward repeats: the view keeps the
    # memory it reads, so an address seen again is the same matrix.
    addresses = tuple(w.data_ptr() for w in weights)
    found = layers[0].__dict__.get("joined_with")
    if found is None or found[0] != addresses:
        joined = joined_weight(*layers)
        found = layers[0].__dict__["joined_with"] = (addresses, None if joined is None else joined.t())
    if found[1] is None:
        return None
    bias = None if layers[0].bias is None else torch.cat([layer.bias for layer in layers])
    return F.linear(x, found[1], bias)


def joined_linear(x: torch.Tensor, layers: tuple[nn.Linear, ...]) -> tuple[torch.Tensor, ...] | None:
    """Each layer's output x Wᵀ + b, as views of one `joined_product`; None when there is none."""
    product = joined_product(x, layers)
    return None if product is None else product.split([layer.out_features for layer in layers], dim=-1)


__all__ = ["is_column_major", "joined_linear", "joined_product", "joined_weight", "store_weights_transposed"]
