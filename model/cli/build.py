"""The model, task and TrainConfig that `transformer-explorer train`'s flags describe.

A run batched by sentences trains a model of the toy sizes (d_model 64) on a built-in task,
a TSV or a text (or continues --init, or takes --preset lecture's model and curriculum); a run
that reads its TSV in token batches builds the paper-base model of model.cli.scale instead.
"""
from __future__ import annotations

from model.cli.flags import UsageError
from model.nn.kinds import ENCODER_DECODER, model_kind
from model.train.config import TRAIN_DEFAULTS

LECTURE = "lecture"  # model.train.presets.LECTURE (that module loads torch: not imported before it is needed)


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
    from model.data.tasks import get_task
    from model.data.user_data import text_task, tsv_task

    if args.data:
        return tsv_task(args.data, args.tokenizer)
    if args.text:
        return text_task(args.text, args.tokenizer)
    return get_task(args.task) if args.task else None


def build_run(args, procs):
    """(bundle, task, previous steps, resume state) from the arguments: the at-scale model of
    model.cli.scale when the run reads its TSV in token batches, else a model for the task."""
    from model.cli.scale import scale_bundle, wants_scale
    from model.io.checkpoints import check_save_target

    if wants_scale(args):
        bundle, state = scale_bundle(args, _model_overrides(args), procs)
        return bundle, None, 0, state
    check_save_target(args.out)  # before training: a refused --out must not cost the run
    bundle, task, prev_steps = _build(args)
    if args.name:
        bundle.name = args.name
    return bundle, task, prev_steps, None


def _build(args):
    """(bundle, task, previous steps) of a run batched by sentences."""
    import torch

    from model.inference.bundle import ModelBundle
    from model.io.checkpoints import load_checkpoint
    from model.nn.config import TransformerConfig
    from model.nn.transformer import Transformer
    from model.train.trainer import task_from_info

    overrides = _model_overrides(args)
    if sum(bool(x) for x in (args.task, args.data, args.text)) > 1:
        raise UsageError("give one of --task, --data, --text")
    if args.text and not args.init and model_kind(overrides.get("kind", ENCODER_DECODER.name)).has_cross_attention:
        raise UsageError("--text trains a language model: add --kind encoder_only (masked LM) or "
                          "--kind decoder_only (next-token LM)")
    if args.init:
        if overrides:
            raise UsageError(f"--init continues a checkpoint with its own sizes; drop {', '.join(sorted(overrides))}")
        bundle = load_checkpoint(args.init)
        task = _named_task(args) or task_from_info(bundle.task)
        src_tok, tgt_tok = task.build_tokenizers()
        if args.data or args.task or args.text:
            unknown = (set(src_tok.vocab) - set(bundle.src_tokenizer.vocab)) | (
                set(tgt_tok.vocab) - set(bundle.tgt_tokenizer.vocab))
            if unknown:
                raise UsageError(f"the task uses symbols the checkpoint's vocabulary lacks: {sorted(unknown)[:8]}")
        bundle.task = task.to_dict()
        return bundle, task, int(bundle.metrics.get("steps", 0) or 0)
    if args.preset == LECTURE:
        return _lecture_build(args, overrides)
    task = _named_task(args)
    if task is None:
        raise UsageError("say what to learn: --task NAME (copy, reverse, sort, addition, dates, translation, "
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
        raise UsageError("--preset lecture chooses the model itself: drop "
                          + ", ".join([g for g in given if g] + sorted(overrides)))
    preset = lecture_preset(args.task or "reverse")
    task = preset.build_task(args.batch_size)
    bundle = lecture_bundle(preset, task, args.seed)
    bundle.name = args.name or bundle.name
    return bundle, task, 0


def train_config(args):
    """TrainConfig from the flags; with --preset lecture its values fill the flags not given
    (and it evaluates every 100 steps, stopping at its target score). A run that reads its TSV
    in token batches (model.cli.scale.wants_scale) gets --batch-tokens, 25000 if not given."""
    from model.cli.scale import wants_scale
    from model.train.presets import lecture_preset
    from model.train.trainer import TrainConfig

    given = dict(steps=args.steps, batch_size=args.batch_size, warmup=args.warmup, lr_scale=args.lr_scale,
                 lr_decay_steps=args.lr_decay_steps, label_smoothing=args.label_smoothing)
    given = {k: v for k, v in given.items() if v is not None}
    common = dict(clip_grad=args.clip_grad, device=args.device, seed=args.seed, eval_size=args.eval_size,
                  batch_tokens=(args.batch_tokens or 25000) if wants_scale(args) else 0, accumulate=args.accumulate,
                  precision=args.precision, compile=args.compile, buffer_pairs=args.buffer_pairs)
    if args.preset != LECTURE:
        return TrainConfig(**{**TRAIN_DEFAULTS, **given}, **common, eval_every=args.eval_every)
    preset = lecture_preset(args.task or "reverse")
    if args.stop_at is None:
        args.stop_at = preset.target
    common["eval_size"] = preset.eval_size  # the checks on the way; the final evaluation uses --eval-size
    return preset.train_config(**given, **common, eval_every=args.eval_every or 100)


def check_snapshots(args) -> None:
    """--snapshots must not be --out or inside it: saving --out replaces that whole folder."""
    from pathlib import Path

    if not args.snapshots:
        return
    out, snaps = Path(args.out).resolve(), Path(args.snapshots).resolve()
    if snaps == out or out in snaps.parents:
        raise UsageError(f"--snapshots {args.snapshots} is inside --out {args.out}, which every save replaces; "
                          "choose a folder beside it (e.g. --snapshots runs/NAME-steps)")
    if not args.save_every:
        raise UsageError("--snapshots keeps the periodic saves: give --save-every N (N > 0)")


__all__ = ["LECTURE", "UsageError", "build_run", "train_config", "check_snapshots"]
