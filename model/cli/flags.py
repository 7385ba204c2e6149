"""Checks of the commands' flags and output folders, made before any work starts.

`train` calls `check_train_flags` and `check_train_outputs` before it loads data, learns a
vocabulary or joins a torchrun process group: every rank of a distributed run checks the same
flags and files and fails alike, with one message, before any of them waits for the others.
A flag out of range is a `UsageError` naming the flag, its value and what is allowed (the CLI
prints it as `transformer-explorer train: error: …` and exits 2, as argparse does).
"""
from __future__ import annotations

import math
from pathlib import Path

MAX_VOCAB = 1_000_000  # a BPE vocabulary; the paper's is 37,000 (larger ones take the trainer's memory with them)
MAX_BATCH_TOKENS = 100_000_000  # tokens per step per side; the paper's is 25,000
MAX_BEAM = 64


class UsageError(ValueError):
    """Flags that are out of range or do not go together; the message says which."""


def _integer(args, name: str, flag: str, low: int, high: int | None = None, allowed: str = "") -> None:
    value = getattr(args, name, None)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        span = allowed or (f"an integer from {low:,} to {high:,}" if high is not None else f"an integer ≥ {low:,}")
        raise UsageError(f"{flag} {value!r} is out of range: give {span}")


def _number(args, name: str, flag: str, low: float, high: float | None = None, allowed: str = "") -> None:
    value = getattr(args, name, None)
    if value is None:
        return
    if not math.isfinite(value) or value < low or (high is not None and value > high):
        span = allowed or (f"a number from {low} to {high}" if high is not None else f"a number ≥ {low}")
        raise UsageError(f"{flag} {value!r} is out of range: give {span}")


def check_train_flags(args) -> None:
    """Bounds of `train`'s numeric flags that nothing later checks before work starts (the
    model's sizes are TransformerConfig's, the schedule's TrainConfig's)."""
    from model.data.tokenizers import SPECIALS

    _integer(args, "vocab_size", "--vocab-size", len(SPECIALS) + 1, MAX_VOCAB,
             f"a BPE vocabulary of {len(SPECIALS) + 1:,} to {MAX_VOCAB:,} pieces (the paper's: 37000)")
    _integer(args, "batch_tokens", "--batch-tokens", 1, MAX_BATCH_TOKENS,
             f"1 to {MAX_BATCH_TOKENS:,} tokens per step per side (the paper's: 25000)")
    _integer(args, "batch_size", "--batch-size", 1, 1_000_000)
    _integer(args, "steps", "--steps", 1, 10**9)
    _integer(args, "eval_size", "--eval-size", 1, 1_000_000)
    _integer(args, "buffer_pairs", "--buffer-pairs", 1, 100_000_000)
    _integer(args, "keep_last", "--keep-last", 0, 100_000,
             "0 (keep none) or the number K ≥ 1 of saved checkpoints to keep in OUT.steps/")
    _integer(args, "save_every", "--save-every", 0, allowed="0 (save only at the end) or a number of steps ≥ 1")
    _integer(args, "eval_every", "--eval-every", 0, allowed="0 (evaluate only at the end) or a number of steps ≥ 1")
    _integer(args, "threads", "--threads", 1, 4096)
    _integer(args, "seed", "--seed", 0, 2**63 - 1)
    _integer(args, "bleu_size", "--bleu-size", 0, allowed="0 (all pairs) or a number of pairs ≥ 1")
    _integer(args, "beam", "--beam", 1, MAX_BEAM)
    _number(args, "alpha", "--alpha", 0.0, 10.0)
    _number(args, "dropout", "--dropout", 0.0, 0.999, "a probability in [0, 1)")
    if getattr(args, "bleu_data", None) and getattr(args, "kind", None) not in (None, "encoder_decoder"):
        raise UsageError(f"--bleu-data scores translations; a --kind {args.kind} model does not translate")


def check_resume_sizes(args, overrides: dict) -> None:
    """--resume continues OUT with its saved sizes: refuse model flags that say otherwise
    (the same flags, repeated from the first command line, are fine)."""
    from model.io.checkpoints import read_config

    if not getattr(args, "resume", False) or not overrides:
        return
    saved = read_config(args.out).get("model") or {}
    differ = sorted(k for k, v in overrides.items() if k in saved and saved[k] != v)
    if differ:
        said = ", ".join(f"{k} {overrides[k]!r} (saved: {saved[k]!r})" for k in differ)
        raise UsageError(f"--resume continues {args.out} with its own sizes; drop {said}")


def check_readable(path, error) -> None:
    """A data file that cannot be opened, named before any work (and before the ranks wait)."""
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise error(f"{path}: cannot read the file ({exc.strerror or exc})") from None


def check_train_outputs(args, scale: bool) -> None:
    """Every folder the run will write passes the "ours or empty" check now: OUT, OUT.resume/
    (token batches), OUT.steps/ (--keep-last) and --snapshots DIR (their step folders are each
    checked again when replaced)."""
    from model.io.averaging import steps_dir
    from model.io.checkpoints import CheckpointError, check_save_target
    from model.io.folders import check_creatable
    from model.io.resume import check_state_target

    check_save_target(args.out)
    if scale:
        check_state_target(args.out)
    if getattr(args, "keep_last", 0):
        check_creatable(steps_dir(args.out), CheckpointError)
    if getattr(args, "snapshots", None):
        check_creatable(Path(args.snapshots), CheckpointError)


def check_bleu_flags(args) -> None:
    """`bleu`'s --beam, --alpha and --limit."""
    _integer(args, "beam", "--beam", 1, MAX_BEAM)
    _number(args, "alpha", "--alpha", 0.0, 10.0)
    _integer(args, "limit", "--limit", 0, allowed="0 (all pairs) or a number of pairs ≥ 1")


def check_generates(bundle, flag: str = "--checkpoint") -> None:
    """BLEU scores generated translations: refuse a model that cannot generate from a source."""
    kind = bundle.config.model_kind
    if not kind.has_cross_attention:
        raise UsageError(f"{flag} {bundle.path or bundle.name}: this {kind.name} model does not translate a source "
                         "sentence, so it has no BLEU score; give an encoder-decoder checkpoint")


__all__ = ["UsageError", "check_train_flags", "check_train_outputs", "check_resume_sizes", "check_bleu_flags",
           "check_generates", "check_readable", "MAX_VOCAB"]
