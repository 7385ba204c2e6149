"""`transformer-explorer train …`: headless training (no Qt), e.g. on a GPU box over ssh.

    transformer-explorer train --task reverse --out runs/reverse --steps 4000
    transformer-explorer train --data pairs.tsv --tokenizer word --out runs/mine --device cuda
    transformer-explorer train --task facts --kind encoder_only --out runs/bert   # BERT-like MLM
    transformer-explorer train --task facts --kind decoder_only --out runs/gpt    # GPT-like LM
    transformer-explorer train --text lines.txt --kind decoder_only --out runs/mygpt
    transformer-explorer train --preset lecture --task reverse --out runs/lecture   # fast settings
    torchrun --nproc-per-node 8 -m model.cli train --data wmt.tsv --tokenizer bpe --batch-tokens 25000 …
        (the paper's scale: model.cli.scale)

Prints a progress bar to stderr, saves the checkpoint to --out (also every --save-every
steps; with --snapshots DIR each of those saves is also kept as DIR/step-000100/ …) and ends
with `eval exact_match: 0.995 (n=1000)` on held-out inputs. Errors print one
clear line and exit non-zero, never a traceback.
"""
from __future__ import annotations

import argparse
import sys
import time

from model.nn.kinds import ENCODER_DECODER, MODEL_KINDS, model_kind
from model.train.defaults import TRAIN_DEFAULTS
from model.cli.scale import add_scale_arguments, train_scaled, wants_scale

USAGE_EXAMPLE = "transformer-explorer train --task reverse --out runs/reverse --steps 4000"
LECTURE = "lecture"  # model.train.presets.LECTURE (that module loads torch: not imported before it is needed)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="transformer-explorer train",
                                description="Train a Transformer on a built-in task or a TSV file, headless.",
                                epilog=f"example: {USAGE_EXAMPLE}")
    src = p.add_argument_group("data")
    src.add_argument("--task", help="built-in task: copy, reverse, sort, addition, dates, translation, "
                                    "facts (a text corpus for --kind encoder_only / decoder_only)")
    src.add_argument("--data", metavar="PAIRS.tsv", help="train on your own UTF-8 'source<TAB>target' lines")
    src.add_argument("--text", metavar="LINES.txt",
                     help="train a --kind encoder_only / decoder_only model on your own UTF-8 text, one sentence a line")
    src.add_argument("--tokenizer", choices=("char", "word", "bpe"), default="char",
                     help="for --data / --text (default char); bpe: a shared byte-pair vocabulary learned from --data")
    p.add_argument("--out", required=True, metavar="DIR", help="checkpoint folder to write")
    p.add_argument("--init", metavar="DIR", help="continue from this checkpoint (its sizes and tokenizers)")
    m = p.add_argument_group("model (ignored with --init)")
    m.add_argument("--kind", choices=tuple(MODEL_KINDS), default=None,
                   help="encoder_decoder (the paper's, default), encoder_only (BERT-like: masked-LM training) "
                        "or decoder_only (GPT-like: next-token training)")
    m.add_argument("--d-model", type=int, default=None, help="default 64")
    m.add_argument("--layers", type=int, default=None, help="encoder and decoder layers (default 2)")
    m.add_argument("--encoder-layers", type=int, default=None)
    m.add_argument("--decoder-layers", type=int, default=None)
    m.add_argument("--heads", type=int, default=None, help="default 4")
    m.add_argument("--d-ff", type=int, default=None, help="default 4 × d_model")
    m.add_argument("--dropout", type=float, default=None, help="default 0.1")
    m.add_argument("--max-len", type=int, default=None, help="longest sequence in tokens (default 64)")
    m.add_argument("--pre-ln", action="store_true", help="LayerNorm before each sublayer (default: the paper's post-LN)")
    m.add_argument("--share-embeddings", action="store_true", help="tie embeddings and output (needs one vocabulary)")
    m.add_argument("--learned-positions", action="store_true", help="learned instead of sinusoidal positions")
    t = p.add_argument_group("training")
    t.add_argument("--preset", choices=(LECTURE,), default=None,
                   help="lecture: the model, schedule, batch and curriculum measured to learn --task reverse, "
                        "translation or facts fast (model.train.presets); stops at its target score")
    t.add_argument("--steps", type=int, default=None, help="default 2000 (or the preset's)")
    t.add_argument("--batch-size", type=int, default=None, help="default 64 (or the preset's)")
    t.add_argument("--warmup", type=int, default=None, help="default 400 (or the preset's)")
    t.add_argument("--lr-scale", type=float, default=None,
                   help="multiplies the paper's learning-rate schedule (default 1.0, or the preset's)")
    t.add_argument("--lr-decay-steps", type=int, default=None, metavar="N",
                   help="after the warm-up, decay the rate linearly to 5%% of its peak by step N and hold it "
                        "(default 0: the paper's 1/√step decay, or the preset's)")
    t.add_argument("--label-smoothing", type=float, default=None, help="default 0.1 (or the preset's)")
    t.add_argument("--clip-grad", type=float, default=None, help="max gradient norm (default: no clipping)")
    t.add_argument("--device", default="auto", help="auto (CUDA, then MPS, then CPU), cpu, cuda, mps")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--threads", type=int, default=None, help="CPU threads for torch (default: torch's choice)")
    t.add_argument("--eval-every", type=int, default=0, help="held-out evaluation every N steps (0: only at the end)")
    t.add_argument("--eval-size", type=int, default=1000, help="held-out pairs in the final evaluation")
    t.add_argument("--stop-at", type=float, default=None, metavar="SCORE",
                   help="stop early once a periodic evaluation (--eval-every) reaches this held-out score "
                        "(exact match; masked-token / next-token accuracy for the variants), e.g. 0.995")
    t.add_argument("--save-every", type=int, default=1000, help="save the checkpoint every N steps (0: only at the end)")
    t.add_argument("--snapshots", metavar="DIR",
                   help="also keep every periodic save and the final model as DIR/step-000100/ … (to compare "
                        "them: transformer-explorer --panel compare --checkpoint DIR/step-001000 --compare DIR)")
    t.add_argument("--name", help="model name stored in the checkpoint (default: the task's)")
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    add_scale_arguments(p)
    return p


class Progress:
    """A one-line progress bar on stderr: steps, steps/s, loss, ETA. Redrawn with \\r on a
    terminal; one line every `every_s` seconds when stderr is a file (logs stay readable)."""

    def __init__(self, total: int, start_step: int = 0, stream=None, every_s: float = 0.2):
        self.total, self.start_step = total, start_step
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.every_s = every_s if self.tty else 10.0
        self.t0 = time.perf_counter()
        self.last = 0.0

    def update(self, step: int, loss: float, extra: str = "", force: bool = False) -> None:
        now = time.perf_counter()
        if not force and now - self.last < self.every_s:
            return
        self.last = now
        done = step - self.start_step
        rate = done / max(now - self.t0, 1e-9)
        eta = (self.total - done) / rate if rate > 0 else float("inf")
        frac = done / max(self.total, 1)
        bar = "#" * int(frac * 24) + "." * (24 - int(frac * 24))
        line = (f"step {step}/{self.start_step + self.total} [{bar}] {frac:4.0%} {rate:6.1f} steps/s "
                f"loss {loss:.4f} ETA {_clock(eta)}{extra}")
        if self.tty:
            self.stream.write("\r" + line.ljust(100))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _clock(seconds: float) -> str:
    if seconds != seconds or seconds == float("inf"):
        return "--:--"
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60:02d}:{s % 60:02d}"


def _model_overrides(args) -> dict:
    names = {"d_model": args.d_model, "n_heads": args.heads, "d_ff": args.d_ff, "dropout": args.dropout,
             "max_len": args.max_len}
    out = {k: v for k, v in names.items() if v is not None}
    if args.layers is not None:
        out["n_encoder_layers"] = out["n_decoder_layers"] = args.layers
    if args.encoder_layers is not None:
        out["n_encoder_layers"] = args.encoder_layers
    if args.decoder_layers is not None:
        out["n_decoder_layers"] = args.decoder_layers
    if args.pre_ln:
        out["norm_first"] = True
    if args.share_embeddings:
        out["share_embeddings"] = True
    if args.learned_positions:
        out["positional"] = "learned"
    if args.kind is not None:
        out["kind"] = args.kind
    return out


def _named_task(args):
    """The task --data, --text or --task names (None when none is given)."""
    from model.data.user_data import text_task, tsv_task
    from model.data.tasks import get_task

    if args.data:
        return tsv_task(args.data, args.tokenizer)
    if args.text:
        return text_task(args.text, args.tokenizer)
    return get_task(args.task) if args.task else None


def _build(args):
    """(bundle, task, previous steps) from the arguments."""
    import torch

    from model.inference.bundle import ModelBundle
    from model.io.checkpoints import load_checkpoint
    from model.nn.config import TransformerConfig
    from model.train.trainer import task_from_info
    from model.nn.transformer import Transformer

    overrides = _model_overrides(args)
    if sum(bool(x) for x in (args.task, args.data, args.text)) > 1:
        raise _UsageError("give one of --task, --data, --text")
    if args.text and not args.init and model_kind(overrides.get("kind", ENCODER_DECODER.name)).has_cross_attention:
        raise _UsageError("--text trains a language model: add --kind encoder_only (masked LM) or "
                          "--kind decoder_only (next-token LM)")
    if args.init:
        if overrides:
            raise _UsageError(f"--init continues a checkpoint with its own sizes; drop {', '.join(sorted(overrides))}")
        bundle = load_checkpoint(args.init)
        task = _named_task(args) or task_from_info(bundle.task)
        src_tok, tgt_tok = task.build_tokenizers()
        if args.data or args.task or args.text:
            unknown = set(src_tok.vocab) - set(bundle.src_tokenizer.vocab) | (set(tgt_tok.vocab) - set(bundle.tgt_tokenizer.vocab))
            if unknown:
                raise _UsageError(f"the task uses symbols the checkpoint's vocabulary lacks: {sorted(unknown)[:8]}")
        bundle.task = task.to_dict()
        return bundle, task, int(bundle.metrics.get("steps", 0) or 0)
    if args.preset == LECTURE:
        return _lecture_build(args, overrides)
    task = _named_task(args)
    if task is None:
        raise _UsageError("say what to learn: --task NAME (copy, reverse, sort, addition, dates, translation, "
                          "facts), --data PAIRS.tsv or --text LINES.txt")
    src_tok, tgt_tok = task.build_tokenizers()
    d_model = overrides.get("d_model", 64)
    params = dict(d_model=d_model, n_heads=4, d_ff=4 * d_model, n_encoder_layers=2, n_decoder_layers=2,
                  dropout=0.1, max_len=max(64, task.max_src_len, task.max_tgt_len + 2))
    params.update(overrides)
    kind = model_kind(params.get("kind", ENCODER_DECODER.name))
    if not kind.has_decoder:
        params["n_decoder_layers"] = 0  # the stacks a model lacks have no layers
    if not kind.has_encoder:
        params["n_encoder_layers"] = 0
    if params.get("share_embeddings") and src_tok.vocab != tgt_tok.vocab:
        merged = sorted(set(src_tok.vocab[4:]) | set(tgt_tok.vocab[4:]))
        src_tok = tgt_tok = type(src_tok)(src_tok.vocab[:4] + merged)
    torch.manual_seed(args.seed)
    config = TransformerConfig(src_vocab_size=len(src_tok), tgt_vocab_size=len(tgt_tok), **params)
    bundle = ModelBundle(Transformer(config), src_tok, tgt_tok, task.to_dict(), {}, name=args.name or task.name)
    return bundle, task, 0


def _lecture_build(args, overrides: dict):
    """(bundle, task, 0) for --preset lecture: the preset's model and curriculum for --task."""
    from model.train.presets import lecture_bundle, lecture_preset

    if args.data or args.text or args.init or overrides:
        given = ["--data" if args.data else "", "--text" if args.text else "", "--init" if args.init else ""]
        raise _UsageError("--preset lecture chooses the model itself: drop "
                          + ", ".join([g for g in given if g] + sorted(overrides)))
    preset = lecture_preset(args.task or "reverse")
    task = preset.build_task(args.batch_size)
    bundle = lecture_bundle(preset, task, args.seed)
    bundle.name = args.name or bundle.name
    return bundle, task, 0


def _train_config(args):
    """TrainConfig from the flags; with --preset lecture its values fill the flags not given
    (and it evaluates every 100 steps, stopping at its target score)."""
    from model.train.presets import lecture_preset
    from model.train.trainer import TrainConfig

    given = dict(steps=args.steps, batch_size=args.batch_size, warmup=args.warmup, lr_scale=args.lr_scale,
                 lr_decay_steps=args.lr_decay_steps, label_smoothing=args.label_smoothing)
    given = {k: v for k, v in given.items() if v is not None}
    common = dict(clip_grad=args.clip_grad, device=args.device, seed=args.seed, eval_size=args.eval_size)
    if args.preset != LECTURE:
        return TrainConfig(**{**TRAIN_DEFAULTS, **given}, **common, eval_every=args.eval_every)
    preset = lecture_preset(args.task or "reverse")
    if args.stop_at is None:
        args.stop_at = preset.target
    common["eval_size"] = preset.eval_size  # the checks on the way; the final evaluation uses --eval-size
    return preset.train_config(**given, **common, eval_every=args.eval_every or 100)


class _UsageError(ValueError):
    pass


def _check_snapshots(args) -> None:
    """--snapshots must not be --out or inside it: saving --out replaces that whole folder."""
    from pathlib import Path

    if not args.snapshots:
        return
    out, snaps = Path(args.out).resolve(), Path(args.snapshots).resolve()
    if snaps == out or out in snaps.parents:
        raise _UsageError(f"--snapshots {args.snapshots} is inside --out {args.out}, which every save replaces; "
                          "choose a folder beside it (e.g. --snapshots runs/NAME-steps)")
    if not args.save_every:
        raise _UsageError("--snapshots keeps the periodic saves: give --save-every N (N > 0)")


def _describe(bundle) -> str:
    c = bundle.config
    return (f"d_model {c.d_model}, heads {c.n_heads}, layers {c.n_encoder_layers}+{c.n_decoder_layers}, "
            f"d_ff {c.d_ff}, max_len {c.max_len}, {'pre' if c.norm_first else 'post'}-LN, "
            f"{bundle.model.num_parameters():,} parameters")


def train(args) -> int:
    import torch

    from model.io.checkpoints import check_save_target, save_checkpoint
    from model.io.snapshots import save_snapshot
    from model.train.trainer import EvalEvent, Trainer

    if wants_scale(args):  # torchrun, BPE, token batches: model.cli.scale
        return train_scaled(args, _model_overrides(args), Progress)
    check_save_target(args.out)  # before training: a refused --out must not cost the run
    _check_snapshots(args)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.stop_at is not None and not args.eval_every and args.preset is None:
        raise _UsageError("--stop-at needs --eval-every N (how often to check)")
    bundle, task, prev_steps = _build(args)
    if args.name:
        bundle.name = args.name
    cfg = _train_config(args)
    trainer = Trainer(bundle, task, cfg)
    err = sys.stderr
    print(f"task {task.name}: {task.description}", file=err)
    print(f"model: {_describe(bundle)}; device {trainer.metrics()['device']}", file=err)
    progress = None if args.quiet else Progress(cfg.steps, 0)
    t0 = time.perf_counter()

    def save(final: bool = False) -> None:
        metrics = trainer.metrics()
        metrics["steps"] = prev_steps + trainer.step_count
        metrics["command"] = "transformer-explorer train " + " ".join(args.argv)
        bundle.metrics = metrics
        save_checkpoint(bundle, args.out, metrics)
        if args.snapshots:
            save_snapshot(bundle, args.snapshots, metrics["steps"], metrics)

    interrupted = False
    try:
        for event in trainer.events():
            if isinstance(event, EvalEvent):
                msg = f"step {prev_steps + event.step}: eval {event.metric} {event.exact_match:.3f} (n={event.n})"
                if progress:
                    progress.close()
                print(msg, file=err)
                if args.stop_at is not None and event.score >= args.stop_at:
                    print(f"reached --stop-at {args.stop_at}: stopping", file=err)
                    trainer.stop()
                continue
            if progress:
                progress.update(event.step, event.loss, f"  acc {event.token_accuracy:.3f}",
                                force=event.step == cfg.steps)
            if args.save_every and event.step % args.save_every == 0 and event.step < cfg.steps:
                save()
    except KeyboardInterrupt:
        interrupted = True
        print("\ninterrupted: saving what was trained so far", file=err)
    if progress:
        progress.close()
    train_s = time.perf_counter() - t0
    final = trainer.evaluate(args.eval_size)
    save(final=True)
    print(f"trained {trainer.step_count} steps in {train_s:.1f} s; saved {args.out}", file=err)
    for src, tgt, out in final.examples[:3]:
        print(f"  {src!r} → {out!r}" + ("" if out == tgt else f" (expected {tgt!r})"), file=err)
    print(f"eval {final.metric}: {final.exact_match:.3f} (n={final.n})", flush=True)
    return 130 if interrupted else 0


def train_main(argv=None) -> int:
    """Entry point of `transformer-explorer train`; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed usage + the error
        return int(exc.code or 0)
    args.argv = argv
    from model.io.checkpoints import CheckpointError
    from model.nn.config import ConfigError
    from model.data.user_data import DataError
    from model.nn.devices import DeviceError
    from model.data.tasks import TaskError
    from model.io.resume import ResumeError
    from model.data.tokenizers import TokenizerError
    from model.train.trainer import TrainingError

    known = (CheckpointError, ConfigError, DataError, DeviceError, TaskError, TokenizerError, TrainingError,
             ResumeError, _UsageError, OSError)
    try:
        return train(args)
    except known as exc:
        print(f"transformer-explorer train: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("transformer-explorer train: interrupted", file=sys.stderr)
        return 130
