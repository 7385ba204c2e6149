"""One hook mechanism: every recorded point of the forward pass is a named hook site.

A module passes each intermediate tensor through `site(self, "weights", tensor)`. Outside any
hooks that returns the tensor at once. Inside `with hooks(model, {pattern: fn}):` every site
whose full name ("decoder.layers.0.cross_attn.weights": the module's path in `model`, a dot,
the site's name) matches a pattern (fnmatch: "*.weights", "encoder.layers.1.*") calls
`fn(tensor, site)`, which returns the tensor to go on with: the same one (reading it), or a
replacement (editing the forward). Recording (`record`), head surgery
(`model.interpret.interventions.intervene`) and activation patching (`patch`) are sets of
hooks on the same names, and any of them may be active at once: hooks that edit run before
hooks that only read, so a recording shows every active edit.

Why a context variable and not hook objects stored on the modules (TransformerLens's
HookPoints): module attributes are shared by every thread that runs the model, so a GUI
recording a forward would race with a training thread. A `ContextVar` is private to the thread
(and task) that set it, so `with record(model):` sees only its own forward passes, and a model
outside any hooks runs its fused kernels with no copies at all.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from fnmatch import fnmatchcase

import torch
from torch import nn

from model.nn.steps import StepText, step_text
from model.nn.trace import Step, Trace

__all__ = ["HookFn", "HookSet", "Site", "Step", "Trace", "any_active", "hooked", "hooks", "patch", "record", "site", "wants"]


@dataclass(slots=True)
class Site:
    """Where a hook was called: the full step name, the module that owns the site, the model
    the hooks were set on, and what an attention site's hooks may need (its mask)."""

    name: str  # "decoder.layers.0.cross_attn.weights", relative to `model`
    local: str  # "weights": the name the module gave it
    module: nn.Module
    model: nn.Module
    mask: torch.Tensor | None = None  # attention sites: bool (B|1, 1, T_q|1, T_k), True = may attend

    @property
    def text(self) -> StepText:
        """Formula, description and axes, from the step catalogue (model.nn.steps)."""
        return step_text(self.module, self.local)


HookFn = Callable[[torch.Tensor, Site], "torch.Tensor | None"]  # None: the tensor unchanged


class HookSet:
    """Hooks for the sites of one model: name pattern → function. `reads_only`: they never
    replace a tensor (a recording), so they run after every set that may edit."""

    def __init__(self, model: nn.Module, fns: Mapping[str, HookFn], reads_only: bool = False):
        self.model = model
        self.reads_only = reads_only
        self.patterns = list(fns.items())
        self.paths = {id(m): name for name, m in model.named_modules()}
        self._by_name: dict[str, tuple[HookFn, ...]] = {}
        self._sites: dict[tuple[int, str], tuple[str | None, tuple[HookFn, ...]]] = {}
        self._modules: dict[int, bool] = {}

    def name_of(self, module: nn.Module, local: str) -> str | None:
        """The site's full name in this set's model, or None for a module outside it."""
        path = self.paths.get(id(module))
        if path is None:
            return None
        return f"{path}.{local}" if path else local

    def fns(self, name: str) -> tuple[HookFn, ...]:
        found = self._by_name.get(name)
        if found is None:
            found = self._by_name[name] = tuple(fn for pattern, fn in self.patterns
                                                if pattern == "*" or fnmatchcase(name, pattern))
        return found

    def at(self, module: nn.Module, local: str) -> tuple[str | None, tuple[HookFn, ...]]:
        """(full name, matching hooks) of a site, looked up once per set."""
        key = (id(module), local)
        found = self._sites.get(key)
        if found is None:
            name = self.name_of(module, local)
            found = self._sites[key] = (name, self.fns(name) if name is not None else ())
        return found

    def covers(self, module: nn.Module, local: str) -> bool:
        return bool(self.at(module, local)[1])

    def covers_any(self, module: nn.Module) -> bool:
        """Whether a hook matches one of the module's sites (`HOOK_SITES`)."""
        found = self._modules.get(id(module))
        if found is None:
            found = self._modules[id(module)] = any(self.covers(module, local) for local in module.HOOK_SITES)
        return found


_active: ContextVar[tuple[HookSet, ...]] = ContextVar("transformer_explorer_hooks", default=())


@contextmanager
def hooks(model: nn.Module, fns: Mapping[str, HookFn], reads_only: bool = False) -> Iterator[HookSet]:
    """Run `fns` at the matching sites of every forward of `model` inside the block, in this
    thread only; nested blocks add their hooks (an inner editing set runs after the outer ones)."""
    added = HookSet(model, fns, reads_only)
    active = _active.get()
    editing = tuple(h for h in active if not h.reads_only)
    reading = tuple(h for h in active if h.reads_only)
    token = _active.set(editing + reading + (added,) if reads_only else editing + (added,) + reading)
    try:
        yield added
    finally:
        _active.reset(token)


def site(module: nn.Module, local: str, tensor: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Hook site `local` of `module`: `tensor` passed through every active hook that matches it."""
    active = _active.get()
    if not active:
        return tensor
    for hook_set in active:
        name, fns = hook_set.at(module, local)
        if fns:
            where = Site(name, local, module, hook_set.model, mask)
            for fn in fns:
                out = fn(tensor, where)
                tensor = tensor if out is None else out
    return tensor


def wants(module: nn.Module, local: str) -> bool:
    """Whether any active hook matches site `local` of `module` (to skip computing a tensor
    that only a hook would read)."""
    active = _active.get()
    return bool(active) and any(h.covers(module, local) for h in active)


def any_active() -> bool:
    """Whether any hooks are active in this thread (a key/value cache is then not used: an edit
    such as a running mean over query positions needs every position in each forward)."""
    return bool(_active.get())


def hooked(module: nn.Module) -> bool:
    """Whether any active hook matches one of `module`'s sites (`HOOK_SITES`): a module takes
    its fused kernel only when this is False."""
    active = _active.get()
    return bool(active) and any(h.covers_any(module) for h in active)


@contextmanager
def record(model: nn.Module) -> Iterator[Trace]:
    """Record every hook site of every forward of `model` run inside the block into a `Trace`.

    >>> with record(model) as trace:
    ...     logits = model(src, tgt)
    >>> trace.attention("cross", 0).shape  # (B, h, T_tgt, T_src)
    """
    trace = Trace(model=model)
    texts: dict[str, StepText] = {}  # name → text: a decoding loop records the same sites again

    def keep(tensor: torch.Tensor, where: Site) -> None:
        text = texts.get(where.name)
        if text is None:
            text = texts[where.name] = where.text
        trace.add(where.name, tensor, text.formula, text.description, text.axes)

    with hooks(model, {"*": keep}, reads_only=True):
        yield trace


@contextmanager
def patch(model: nn.Module, values: Mapping[str, torch.Tensor]) -> Iterator[HookSet]:
    """Replace the tensor at each named site by the given one (e.g. the same step of another
    run's `Trace`): activation patching as one more set of hooks."""
    def replace(tensor: torch.Tensor, where: Site) -> torch.Tensor:
        return values[where.name].to(tensor.device, tensor.dtype)

    with hooks(model, {name: replace for name in values}) as added:
        yield added
