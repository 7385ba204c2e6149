"""`transformer-explorer train …`: headless training (no Qt), e.g. on a GPU box over ssh.

    transformer-explorer train --task reverse --out runs/reverse --steps 4000
    transformer-explorer train --data pairs.tsv --tokenizer word --out runs/mine --device cuda
    transformer-explorer train --task facts --kind encoder_only --out runs/bert   # BERT-like MLM
    transformer-explorer train --task facts --kind decoder_only --out runs/gpt    # GPT-like LM
    transformer-explorer train --text lines.txt --kind decoder_only --out runs/mygpt
    transformer-explorer train --preset lecture --task reverse --out runs/lecture   # fast settings
    torchrun --nproc-per-node 8 -m model.cli train --data wmt.tsv --tokenizer bpe --batch-tokens 25000 …
        (the paper's scale, the same loop in token batches: model.cli.scale)

Prints a progress bar to stderr, saves the checkpoint to --out (also every --save-every
steps; with --snapshots DIR each of those saves is also kept as DIR/step-000100/ …) and ends
with `eval exact_match: 0.995 (n=1000)` on held-out inputs. Errors print one
clear line and exit non-zero, never a traceback.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from model.cli.build import LECTURE, UsageError, build_run, check_snapshots, train_config
from model.cli.build import train_config as _train_config  # noqa: F401 - the name tests and scripts use
from model.cli.scale import add_scale_arguments
from model.nn.kinds import MODEL_KINDS

USAGE_EXAMPLE = "transformer-explorer train --task reverse --out runs/reverse --steps 4000"


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


def _describe(bundle) -> str:
    c = bundle.config
    return (f"d_model {c.d_model}, heads {c.n_heads}, layers {c.n_encoder_layers}+{c.n_decoder_layers}, "
            f"d_ff {c.d_ff}, max_len {c.max_len}, {'pre' if c.norm_first else 'post'}-LN, "
            f"{bundle.model.num_parameters():,} parameters")


def train(args) -> int:
    """One training loop for every run: a toy task in one process, or the paper's WMT run in
    token batches over many (torchrun); model.cli.build says what each run is made of."""
    import torch

    from model.cli.scale import restore_state, resume_positions
    from model.train.distributed import setup, teardown
    from model.train.trainer import Trainer

    try:
        check_before_work(args)
    except Exception as exc:
        exc.every_rank = True  # the same flags and files on every rank: the same error
        raise
    if args.threads:
        torch.set_num_threads(args.threads)
    procs = setup(args.device)
    try:
        bundle, task, prev_steps, state = build_run(args, procs)
        cfg = train_config(args)
        trainer = Trainer(bundle, task, cfg, data=args.data if cfg.by_tokens else None, procs=procs,
                          positions=resume_positions(state, cfg, procs))
        if state is not None:
            restore_state(state, trainer)
        return _loop(args, bundle, trainer, prev_steps)
    finally:
        teardown()


def check_before_work(args) -> None:
    """Everything the flags and files can say is wrong, said before any data is read or any
    torchrun rank waits for another (model.cli.flags): every rank fails alike, at once."""
    from model.cli.build import _model_overrides
    from model.cli.flags import check_readable, check_resume_sizes, check_train_flags, check_train_outputs
    from model.cli.scale import check_scale_config, wants_scale
    from model.data.user_data import DataError

    check_train_flags(args)
    check_snapshots(args)
    scale = wants_scale(args)
    if args.stop_at is not None and not args.eval_every and args.preset is None:
        raise UsageError("--stop-at needs --eval-every N (how often to check)")
    if args.stop_at is not None and scale:
        raise UsageError("--stop-at checks a held-out task's score; token batches of a TSV have none")
    for path in (args.data, args.text, args.bleu_data):
        if path:
            check_readable(path, DataError)
    overrides = _model_overrides(args)
    check_resume_sizes(args, overrides)
    if scale and not args.resume:
        check_scale_config(args, overrides)
    check_train_outputs(args, scale)


def _loop(args, bundle, trainer, prev_steps: int) -> int:
    from model.train.trainer import EvalEvent

    err, cfg, main = sys.stderr, trainer.config, trainer.procs.is_main
    if main:
        _announce(bundle, trainer)
    start = trainer.step_count
    progress = Progress(cfg.steps - start, start) if main and not args.quiet else None
    t0 = time.perf_counter()
    interrupted = False
    try:
        for event in trainer.events():
            if isinstance(event, EvalEvent):
                if progress:
                    progress.close()
                if main:
                    print(f"step {prev_steps + event.step}: eval {event.metric} {event.exact_match:.3f} "
                          f"(n={event.n})", file=err)
                if args.stop_at is not None and event.score >= args.stop_at:
                    _stop_if_confirmed(args, trainer, event, prev_steps)
                continue
            if progress:
                progress.update(event.step, event.loss, f"  acc {event.token_accuracy:.3f}  "
                                f"{event.tokens_per_s:,.0f} tok/s", force=event.step == cfg.steps)
            if args.save_every and event.step % args.save_every == 0 and event.step < cfg.steps:
                save_all(args, bundle, trainer, prev_steps)
    except KeyboardInterrupt:
        if trainer.procs.distributed:  # the other ranks are not stopped alike: no collective save
            raise
        interrupted = True
        print("\ninterrupted: saving what was trained so far", file=err)
    if progress:
        progress.close()
    train_s = time.perf_counter() - t0
    final = None
    if trainer.task is not None:
        last = trainer.last_eval  # a confirmed --stop-at check of these pairs at this step is the final score
        same = last is not None and last.step == trainer.step_count and last.n == args.eval_size
        final = last if same else trainer.evaluate(args.eval_size)
    save_all(args, bundle, trainer, prev_steps)
    if main:
        _report(args, bundle, trainer, final, train_s, prev_steps)
    return 130 if interrupted else 0


def _stop_if_confirmed(args, trainer, event, prev_steps: int) -> None:
    """A periodic check reached --stop-at: score it again on as many held-out pairs as the
    final evaluation (at least CONFIRM_SIZE), and stop only if that holds too, so the score the
    run ends with is the one that stopped it."""
    from model.train.target import CONFIRM_SIZE, confirm

    size = max(CONFIRM_SIZE, args.eval_size)
    checked = confirm(trainer, event, args.stop_at, size)
    main, err = trainer.procs.is_main, sys.stderr
    if checked.score >= args.stop_at:
        if main:
            print(f"reached --stop-at {args.stop_at}: {checked.metric} {checked.score:.3f} on {checked.n} "
                  f"held-out pairs: stopping", file=err)
        trainer.stop()
    elif main:
        print(f"step {prev_steps + event.step}: not confirmed on {checked.n} held-out pairs "
              f"({checked.score:.3f} < {args.stop_at}): training on", file=err)


def _announce(bundle, trainer) -> None:
    cfg, procs, err = trainer.config, trainer.procs, sys.stderr
    if trainer.task is not None:
        print(f"task {trainer.task.name}: {trainer.task.description}", file=err)
    batch = (f"{cfg.batch_tokens} tokens/step ({cfg.micro_budget(procs.world_size)} per micro-batch)"
             if cfg.by_tokens else f"{cfg.batch_size} sentences/step")
    print(f"model: {_describe(bundle)}; device {trainer.metrics()['device']}, {procs.world_size} process(es), "
          f"{batch}, {'bf16' if trainer.bf16 else 'fp32'}", file=err)


def _report(args, bundle, trainer, final, train_s: float, prev_steps: int) -> None:
    """The end of a run: held-out exact match (a task) or loss and throughput (token batches),
    then BLEU when --bleu-data is given."""
    err = sys.stderr
    print(f"trained to step {prev_steps + trainer.step_count} in {train_s:.1f} s; saved {args.out}", file=err)
    if final is not None:
        for src, tgt, out in final.examples[:3]:
            print(f"  {src!r} → {out!r}" + ("" if out == tgt else f" (expected {tgt!r})"), file=err)
        print(f"eval {final.metric}: {final.exact_match:.3f} (n={final.n})", flush=True)
    elif trainer.last_step is not None:
        rate = trainer.tokens_read / max(trainer.elapsed, 1e-9)  # source + target tokens, all ranks
        print(f"loss: {trainer.last_step.loss:.4f}\ntokens_per_s: {rate:.0f}", flush=True)
    if args.bleu_data:
        from model.train.bleu import evaluate_bleu

        score, triples = evaluate_bleu(bundle, args.bleu_data, args.beam, args.alpha, args.bleu_size or None)
        for src, ref, out in triples[:3]:
            print(f"  {src!r} → {out!r} (reference {ref!r})", file=err)
        print(f"bleu: {score:.2f} (beam {args.beam}, alpha {args.alpha}, n={len(triples)})", flush=True)


def save_all(args, bundle, trainer, prev_steps: int = 0) -> None:
    """Every rank calls it: what the ranks hold is gathered, then rank 0 writes OUT (and
    OUT.resume/ for token batches, OUT.steps/step-N with --keep-last, DIR/step-N with
    --snapshots)."""
    from model.cli.scale import save_resume_state
    from model.io.averaging import prune_steps, step_folder
    from model.io.checkpoints import save_checkpoint
    from model.io.snapshots import save_snapshot
    from model.train.distributed import barrier

    by_tokens = trainer.config.by_tokens
    if by_tokens:
        positions, rng, dropped = trainer.positions(), trainer.rng_states(), trainer.dropped()
    if trainer.procs.is_main:
        metrics = trainer.metrics()
        metrics["steps"] = prev_steps + trainer.step_count
        metrics["command"] = "transformer-explorer train " + " ".join(getattr(args, "argv", []))
        if by_tokens:
            metrics["dropped_pairs"] = dropped
            save_resume_state(args, trainer, positions, rng)
        bundle.metrics = metrics
        save_checkpoint(bundle, args.out, metrics)
        if getattr(args, "snapshots", None):
            save_snapshot(bundle, args.snapshots, metrics["steps"], metrics)
        if getattr(args, "keep_last", 0):
            save_checkpoint(bundle, step_folder(args.out, metrics["steps"]), metrics)
            prune_steps(args.out, args.keep_last)
    barrier(trainer.procs)


def is_first_rank() -> bool:
    """Rank 0 of a torchrun launch, or the one process of a run without it."""
    return os.environ.get("RANK", "0") == "0"


def train_main(argv=None) -> int:
    """Entry point of `transformer-explorer train`; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed usage + the error
        return int(exc.code or 0)
    args.argv = argv
    from model.data.tasks import TaskError
    from model.data.tokenizers import TokenizerError
    from model.data.user_data import DataError
    from model.io.checkpoints import CheckpointError
    from model.io.resume import ResumeError
    from model.nn.config import ConfigError
    from model.nn.devices import DeviceError
    from model.train.trainer import TrainingError

    known = (CheckpointError, ConfigError, DataError, DeviceError, TaskError, TokenizerError, TrainingError,
             ResumeError, UsageError, OSError)
    try:
        return train(args)
    except known as exc:
        if is_first_rank():
            print(f"transformer-explorer train: error: {exc}", file=sys.stderr)
        elif not getattr(exc, "every_rank", False):  # an error of this rank alone (rank 0's is printed there)
            print(f"transformer-explorer train: error: rank {os.environ.get('RANK')}: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, UsageError) else 1
    except KeyboardInterrupt:
        print("transformer-explorer train: interrupted", file=sys.stderr)
        return 130
