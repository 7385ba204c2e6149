"""What a recorded step's name says: the attention sublayer it belongs to, and which step a
short name (`--step`, a scene's "step") picks in a trace."""
from __future__ import annotations

import re

_ATTN_STEP = re.compile(r"^(encoder|decoder)\.layers\.(\d+)\.(self_attn|cross_attn)\.")


def attention_of_step(name: str) -> tuple[str, int] | None:
    """(kind, layer) of the attention sublayer a step belongs to, or None."""
    m = _ATTN_STEP.match(name)
    if not m:
        return None
    stack, layer, sub = m.groups()
    kind = "encoder" if stack == "encoder" else ("decoder_self" if sub == "self_attn" else "cross")
    return kind, int(layer)


def find_step(names: list[str], name: str) -> int | None:
    """The index of the last step called `name`, else of the first whose name starts with `name.`."""
    if name in names:
        return len(names) - 1 - names[::-1].index(name)
    return next((i for i, n in enumerate(names) if n.startswith(name + ".")), None)
