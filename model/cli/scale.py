"""`transformer-explorer train` at the paper's scale: the flags and the loop of a torchrun run.

    torchrun --nproc-per-node 8 -m model.cli train --data wmt14.en-de.tsv --tokenizer bpe \\
        --vocab-size 37000 --batch-tokens 25000 --share-embeddings --layers 6 --d-model 512 \\
        --heads 8 --d-ff 2048 --steps 100000 --warmup 4000 --out runs/base --keep-last 5

Any of --batch-tokens, --tokenizer bpe, --resume or a torchrun launch takes this path (`model.cli`
decides). Rank 0 learns the vocabulary and sends it to the others, prints progress and writes:
OUT (the checkpoint the app opens), OUT.resume/ (weights, Adam, schedule, data positions) and, with
--keep-last K, OUT.steps/step-<N>/ for `transformer-explorer average`.
"""
from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path


def add_scale_arguments(p) -> None:
    from model.train.scaled import PRECISIONS

    g = p.add_argument_group("at scale (torchrun, BPE, token batches; see README 'Training at the paper's scale')")
    g.add_argument("--vocab-size", type=int, default=37000, help="BPE vocabulary size for --tokenizer bpe (37000)")
    g.add_argument("--batch-tokens", type=int, default=None, metavar="N",
                   help="tokens per step per side (source and target), all processes together (paper: 25000)")
    g.add_argument("--accumulate", type=int, default=1, help="micro-batches per process per step (gradient accumulation)")
    g.add_argument("--precision", choices=PRECISIONS, default="auto", help="auto: bf16 autocast on CUDA, fp32 elsewhere")
    g.add_argument("--compile", action="store_true", help="torch.compile the model")
    g.add_argument("--resume", action="store_true", help="carry on from OUT.resume/ (after a crash or to train longer)")
    g.add_argument("--keep-last", type=int, default=0, metavar="K",
                   help="also keep the last K saved checkpoints in OUT.steps/ (for `transformer-explorer average`)")
    g.add_argument("--bleu-data", metavar="HELDOUT.tsv", help="at the end: beam-search BLEU on this TSV (sacrebleu)")
    g.add_argument("--bleu-size", type=int, default=0, help="score only the first N pairs of --bleu-data (0: all)")
    g.add_argument("--beam", type=int, default=4, help="beam size for --bleu-data (paper: 4)")
    g.add_argument("--alpha", type=float, default=0.6, help="length penalty α for --bleu-data (paper: 0.6)")
    g.add_argument("--buffer-pairs", type=int, default=20000, help="pairs sorted by length together")


def wants_scale(args) -> bool:
    from model.train.distributed import launched_by_torchrun

    return bool(args.batch_tokens or args.tokenizer == "bpe" or args.resume or launched_by_torchrun())


def _learn_vocabulary(args):
    """(source, target) tokenizers learned from the TSV in one streaming pass (BPE: shared)."""
    from model.data.batching import tsv_lines
    from model.data.bpe import BPETokenizer, corpus_texts
    from model.data.tokenizers import TOKENIZERS

    # One pass over the whole file before training: a malformed line stops the run now, not at hour 5.
    pairs = (pair for _, _, pair in tsv_lines(args.data, max_line_chars=None) if pair is not None)
    if args.tokenizer == "bpe":
        tok = BPETokenizer.train(corpus_texts(pairs), args.vocab_size)
        return tok, tok
    cls = TOKENIZERS[args.tokenizer]
    sources, targets = zip(*pairs)
    src, tgt = cls.from_texts(sources), cls.from_texts(targets)
    if args.share_embeddings and src != tgt:
        src = tgt = cls.from_texts(list(sources) + list(targets))
    return src, tgt


def _bundle(args, overrides: dict, procs):
    """A new model with a vocabulary learned by rank 0 and sent to all, or the one --resume continues."""
    import json

    import torch

    from model.inference.bundle import ModelBundle
    from model.io.checkpoints import _tokenizer, check_save_target, load_checkpoint
    from model.nn.config import TransformerConfig
    from model.train.distributed import broadcast_text
    from model.nn.transformer import Transformer

    if args.resume:
        return load_checkpoint(args.out, device="cpu")
    text = None
    if procs.is_main:
        check_save_target(args.out)
        src, tgt = _learn_vocabulary(args)
        text = json.dumps({"src": src.to_dict(), "tgt": tgt.to_dict()})
    shared = json.loads(broadcast_text(text, procs))
    src, tgt = _tokenizer(shared["src"]), _tokenizer(shared["tgt"])
    params = dict(d_model=512, n_heads=8, d_ff=2048, n_encoder_layers=6, n_decoder_layers=6, dropout=0.1, max_len=256)
    params.update({k: v for k, v in overrides.items() if k != "kind"})
    torch.manual_seed(args.seed)  # the same initial weights on every rank (DDP also copies rank 0's)
    config = TransformerConfig(src_vocab_size=len(src), tgt_vocab_size=len(tgt), **params)
    name = args.name or Path(args.data).stem
    task = {"name": name, "params": {"data": str(args.data), "tokenizer": args.tokenizer}, "at_scale": True,
            "description": f"Parallel data: {args.data}", "examples": _examples(args.data),
            "max_src_len": config.max_len - 1, "max_tgt_len": min(50, config.max_len - 2)}  # the app decodes ≤ that + 8
    return ModelBundle(Transformer(config), src, tgt, task, {}, name=name)


def _examples(path, n: int = 3) -> list[str]:
    from model.data.batching import tsv_lines

    found = []
    for _, _, pair in tsv_lines(path, max_line_chars=None):
        if pair is not None:
            found.append(pair[0])
        if len(found) == n:
            break
    return found


def train_scaled(args, overrides: dict, progress_cls) -> int:
    """The loop of a (possibly distributed) run; returns the exit status."""
    from model.data.batching import SlotPosition
    from model.train.distributed import setup, teardown
    from model.io.resume import read_state, restore
    from model.train.scaled import ScaleConfig, ScaledTrainer
    from model.train.trainer import TrainingError

    if not args.data:
        raise TrainingError("training at scale reads a TSV: give --data PAIRS.tsv (source<TAB>target lines)")
    if overrides.get("kind", "encoder_decoder") != "encoder_decoder" or args.init:
        raise TrainingError("training at scale trains the paper's encoder-decoder from scratch (or --resume)")
    procs = setup(args.device)
    try:
        bundle = _bundle(args, overrides, procs)
        from model.train.defaults import TRAIN_DEFAULTS  # None on the parser (so a preset can tell them apart)
        given = {k: getattr(args, k) for k in ("steps", "warmup", "lr_scale", "lr_decay_steps", "label_smoothing")}
        given = {k: TRAIN_DEFAULTS[k] if v is None else v for k, v in given.items()}
        cfg = ScaleConfig(steps=given["steps"], batch_tokens=args.batch_tokens or 25000, accumulate=args.accumulate,
                          warmup=given["warmup"], lr_scale=given["lr_scale"], lr_decay_steps=given["lr_decay_steps"],
                          label_smoothing=given["label_smoothing"],
                          clip_grad=args.clip_grad, precision=args.precision, compile=args.compile, seed=args.seed,
                          buffer_pairs=args.buffer_pairs)
        state = read_state(args.out) if args.resume else None
        positions = None
        if state is not None:
            info = state[0]
            if info["n_slots"] != cfg.slots(procs.world_size):
                raise TrainingError(f"--resume needs processes × --accumulate = {info['n_slots']} as saved, "
                                    f"got {cfg.slots(procs.world_size)}")
            positions = [SlotPosition(*row) for row in info["positions"]]
        trainer = ScaledTrainer(bundle.model, args.data, bundle.src_tokenizer, bundle.tgt_tokenizer, cfg, procs,
                                positions)
        if state is not None:
            restore(state[0], state[1], state[2], bundle.model, trainer.optimizer, trainer.scheduler, procs.rank)
            trainer.step_count, trainer.elapsed = state[0]["step"], state[0].get("train_seconds", 0.0)
        return _loop(args, bundle, trainer, procs, progress_cls)
    finally:
        teardown()


def _loop(args, bundle, trainer, procs, progress_cls) -> int:
    err = sys.stderr
    main = procs.is_main
    if main:
        c = bundle.config
        print(f"{procs.world_size} process(es) on {procs.device.type}; model d_model {c.d_model}, layers "
              f"{c.n_encoder_layers}+{c.n_decoder_layers}, vocab {c.src_vocab_size}, "
              f"{bundle.model.num_parameters():,} parameters; {trainer.config.batch_tokens} tokens/step "
              f"({trainer.config.micro_budget(procs.world_size)} per micro-batch), "
              f"{'bf16' if trainer.bf16 else 'fp32'}", file=err)
    start = trainer.step_count
    progress = progress_cls(trainer.config.steps - start, start) if main and not args.quiet else None
    t0 = time.perf_counter()
    while trainer.step_count < trainer.config.steps:
        event = trainer.step()
        if progress:
            progress.update(event.step, event.loss, f"  {event.tokens_per_s:,.0f} tok/s",
                            force=event.step == trainer.config.steps)
        if args.save_every and event.step % args.save_every == 0 and event.step < trainer.config.steps:
            save_all(args, bundle, trainer, procs)
    if progress:
        progress.close()
    save_all(args, bundle, trainer, procs)
    if main:
        last = trainer.last_step
        print(f"trained to step {trainer.step_count} in {time.perf_counter() - t0:.1f} s; saved {args.out}", file=err)
        if last is not None:
            rate = trainer.tokens_read / max(trainer.elapsed, 1e-9)  # source + target tokens, all ranks
            print(f"loss: {last.loss:.4f}\ntokens_per_s: {rate:.0f}", flush=True)
    if args.bleu_data and main:
        from model.train.bleu import evaluate_bleu

        score, triples = evaluate_bleu(bundle, args.bleu_data, args.beam, args.alpha, args.bleu_size or None)
        for src, ref, out in triples[:3]:
            print(f"  {src!r} → {out!r} (reference {ref!r})", file=err)
        print(f"bleu: {score:.2f} (beam {args.beam}, alpha {args.alpha}, n={len(triples)})", flush=True)
    return 0


def save_all(args, bundle, trainer, procs) -> None:
    """Gather what every rank holds, then rank 0 writes OUT.resume/, OUT and OUT.steps/step-N."""
    from model.io.averaging import numbered_checkpoints, step_folder, steps_dir
    from model.io.checkpoints import save_checkpoint
    from model.train.distributed import barrier
    from model.io.resume import save_state

    positions, rng, dropped = trainer.positions(), trainer.rng_states(), trainer.dropped()
    if procs.is_main:
        last = trainer.last_step
        metrics = {"steps": trainer.step_count, "train_seconds": round(trainer.elapsed, 2),
                   "processes": procs.world_size, "device": procs.device.type, "dropped_pairs": dropped,
                   "train_config": trainer.config.to_dict(), "objective": "seq2seq",
                   "command": "transformer-explorer train " + " ".join(getattr(args, "argv", []))}
        if last is not None:
            metrics.update(loss=last.loss, token_accuracy=last.token_accuracy, tokens_per_s=round(last.tokens_per_s))
        bundle.metrics = metrics
        info = {"step": trainer.step_count, "train_seconds": trainer.elapsed, "n_slots": trainer.n_slots,
                "positions": positions, "world_size": procs.world_size, "data": str(args.data)}
        save_state(args.out, bundle.model, trainer.optimizer, trainer.scheduler, info, rng)
        save_checkpoint(bundle, args.out, metrics)
        if args.keep_last:
            save_checkpoint(bundle, step_folder(args.out, trainer.step_count), metrics)
            for old in numbered_checkpoints(steps_dir(args.out))[:-args.keep_last]:
                shutil.rmtree(old, ignore_errors=True)
    barrier(procs)


__all__ = ["add_scale_arguments", "wants_scale", "train_scaled", "save_all"]
