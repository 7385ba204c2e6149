#!/usr/bin/env bash
# Everything that needs a CUDA GPU, in one run of a few minutes (on a GPU machine):
#
#   scripts/gpu_check.sh                  # PYTHON=.venv/bin/python by default
#
# 1. the `gpu` tests (tests/test_cuda.py and the other tests marked gpu): every panel's work —
#    frames with every decoding strategy, attribution, head surgery, the logit lens, compare,
#    a short Trainer run, the leak lab, the training probe — with the model on CUDA, against the CPU;
# 2. benchmarks/train_throughput.py --device cuda: ours ÷ torch.nn.Transformer and the MFU;
# 3. benchmarks/lecture_demo.py --device cuda: the training panel's lecture preset, seconds to
#    its confirmed target.
# Prints `name: value` lines (gpu, gpu_tests_passed, gpu_tests_failed, mfu,
# train_throughput_ratio, lecture_demo_seconds, …); exits non-zero if a test failed.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
export PYTHONPATH=$PWD QT_QPA_PLATFORM=offscreen
status=0

"$PY" - <<'PY' || { echo "gpu: none (torch sees no CUDA device)"; exit 2; }
import sys, torch
if not torch.cuda.is_available():
    sys.exit(1)
print(f"gpu: {torch.cuda.get_device_name(0)}")
print(f"torch: {torch.__version__} (CUDA {torch.version.cuda})")
PY

log=$(mktemp)
start=$(date +%s)
"$PY" -m pytest -q -p no:cacheprovider -m gpu tests/ 2>&1 | tee "$log" | tail -25
rc=${PIPESTATUS[0]}
passed=$(grep -Eo '[0-9]+ passed' "$log" | tail -1 | grep -Eo '[0-9]+' || echo 0)
failed=$(grep -Eo '[0-9]+ failed' "$log" | tail -1 | grep -Eo '[0-9]+' || echo 0)
skipped=$(grep -Eo '[0-9]+ skipped' "$log" | tail -1 | grep -Eo '[0-9]+' || echo 0)
echo "gpu_tests_passed: ${passed:-0}"
echo "gpu_tests_failed: ${failed:-0}"
echo "gpu_tests_skipped: ${skipped:-0}"
echo "gpu_tests_seconds: $(( $(date +%s) - start ))"
[ "$rc" -ne 0 ] && status=1

echo "== train throughput (d_model 256, 3+3 layers)"
"$PY" benchmarks/train_throughput.py --device cuda --repeats 3 --steps 20 --batch-size 128 2>&1 \
  | grep -E '^(gpu|mfu|ours|torch|train_throughput_ratio):' | sed 's/^mfu:/mfu_small:/; s/^train_throughput_ratio:/train_throughput_ratio_small:/'
echo "== train throughput (the paper's base: d_model 512, 6+6 layers, batch 512)"
"$PY" benchmarks/train_throughput.py --device cuda --repeats 3 --steps 10 --batch-size 512 --d-model 512 \
  --heads 8 --layers 6 --d-ff 2048 2>&1 | grep -E '^(mfu|ours|torch|train_throughput_ratio):'

echo "== lecture preset on CUDA (training panel, offscreen)"
"$PY" benchmarks/lecture_demo.py --device cuda --limit 120 2>&1 | grep -E '^(device|panel shows|reached|pattern_seconds|lecture_demo_seconds):|confirmation'
echo "gpu_check_seconds: $(( $(date +%s) - start ))"
rm -f "$log"
exit $status
