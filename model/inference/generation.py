"""`generate`: continue a prompt with a decoder-only model, a key/value cache by default."""
from __future__ import annotations

from collections.abc import Callable

import torch

from model.inference.decoding import filter_logits
from model.inference.kv_cache import KVCache
from model.nn.hooks import any_active
from model.nn.transformer import Transformer


def _choose(logits: torch.Tensor, temperature: float, top_k: int, top_p: float,
            generator: torch.Generator | None) -> int:
    """Argmax (temperature 0) or a draw from the filtered distribution."""
    if temperature <= 0:
        return int(logits.argmax())
    probs = filter_logits(logits[None], temperature, top_k, top_p).softmax(-1)
    return int(torch.multinomial(probs.cpu(), 1, generator=generator))


@torch.inference_mode()  # no autograd bookkeeping at all: nothing generated here is trained on
def generate(model: Transformer, ids, max_new_tokens: int, *, eos_id: int | None = None,
             temperature: float = 0.0, top_k: int = 0, top_p: float = 1.0, seed: int | None = None,
             use_cache: bool = True, on_step: Callable[[int, int], None] | None = None,
             never: tuple[int, ...] = (), cache: KVCache | None = None) -> list[int]:
    """Continue `ids` (a list of ids or a (1, T) tensor) with a decoder-only model.

    Returns the new ids (up to `max_new_tokens`, ending with `eos_id` if the model wrote it).
    temperature 0 is greedy; otherwise sampling after temperature, top-k and top-p, drawn on
    the CPU from `seed` so a seed gives the same text on any device. `use_cache=False` runs the
    whole sequence every step (the same tokens, more work), as does a call inside active hooks
    (head surgery, patching, a recording), whose edits may need every position in each forward.
    `on_step(i, id)` is called as each new token is chosen (to stream it). `never`: ids never
    chosen (the explorer's decoders never write <bos> or <pad>). `cache`: a key/value cache that
    already holds the positions before `ids` (a prompt run once, recorded, say): `ids` continue
    from them, and the cache keeps what this call adds.
    """
    cfg = model.config
    if not cfg.model_kind.continues_prompt:
        raise ValueError(f"generate continues a prompt with a decoder-only model; this one is {cfg.kind}")
    device = next(model.parameters()).device
    seq = torch.as_tensor(ids, dtype=torch.long, device=device).reshape(1, -1)
    if seq.size(1) == 0:
        raise ValueError("generate needs at least one prompt token")
    before = cache.length if cache is not None else 0
    room = cfg.max_len - before - seq.size(1)
    if max_new_tokens > room:
        raise ValueError(f"{before + seq.size(1)} prompt tokens + {max_new_tokens} new ones exceed the model's "
                         f"max_len {cfg.max_len}")
    generator = torch.Generator().manual_seed(seed) if seed is not None else None
    model.eval()
    if cache is not None and (not use_cache or any_active()):
        raise ValueError("a given key/value cache is continued only with use_cache=True and no hooks active")
    use_cache = use_cache and not any_active()
    if use_cache and cache is None:
        cache = KVCache(model)
    step_input, out = seq, []
    for i in range(max_new_tokens):
        hidden = model.decode(None, None, step_input, cache=cache)[:, -1:]  # (1, 1, d_model)
        logits = model.project(hidden)[0, -1].float()
        if never:
            logits[list(never)] = float("-inf")
        token = _choose(logits, temperature, top_k, top_p, generator)
        out.append(token)
        if on_step is not None:
            on_step(i, token)
        if eos_id is not None and token == eos_id:
            break
        new = torch.tensor([[token]], dtype=torch.long, device=device)
        step_input = new if use_cache else torch.cat([step_input, new], dim=1)
    return out


__all__ = ["generate"]
