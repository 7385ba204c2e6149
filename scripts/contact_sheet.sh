#!/usr/bin/env bash
# Every panel at a projector size in presentation mode, light and dark, tiled into one PNG
# (docs/contact-sheet-1280x720.png): what a lecturer's back row sees. Needs ImageMagick (montage).
#
#   scripts/contact_sheet.sh [SIZE] [OUT.png]      # default 1280x720 docs/contact-sheet-1280x720.png
set -euo pipefail
SIZE=${1:-1280x720}
OUT=${2:-docs/contact-sheet-$SIZE.png}
PY=${PYTHON:-.venv/bin/python}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
shot() {  # panel theme extra-args…
  local panel=$1 theme=$2; shift 2
  "$PY" -m explorer --panel "$panel" --screenshot "$TMP/$panel-$theme.png" --size "$SIZE" --presentation \
      --theme "$theme" "$@" >/dev/null
}
for theme in light dark; do
  shot architecture $theme --checkpoint dates --input "22 November 2026"
  shot step $theme --checkpoint dates --input "22 November 2026" --step encoder.layers.0.self_attn.weights
  shot attention $theme --checkpoint dates --input "22 November 2026"
  shot positional $theme --checkpoint dates --input "22 November 2026"
  shot decoding $theme --checkpoint reverse --input "transformer"
  shot heads $theme --checkpoint dates --input "Nov 22, 2026" --ablate cross:0:3=zero
  shot lens $theme --checkpoint gpt-facts --input "the duck"
  shot attribution $theme --checkpoint reverse --input "transformer"
  shot compare $theme --checkpoint reverse --compare untrained --input "transformer"
  shot leak $theme --train-seconds 20
  shot training $theme --checkpoint reverse --train-seconds 10
  shot patching $theme --checkpoint reverse --input "transformer"
  shot atlas $theme --checkpoint dates --input "22 November 2026"
  shot induction $theme --train-seconds 45
  shot sampling $theme --checkpoint gpt-facts --input "the frog lives in the"
  shot kvcache $theme --checkpoint gpt-facts --input "the frog lives in the"
  shot modern $theme --checkpoint gpt-facts --input "the duck"
done
names=(architecture step attention positional decoding heads lens attribution compare leak training
       patching atlas induction sampling kvcache modern)
files=()
for n in "${names[@]}"; do files+=("$TMP/$n-light.png" "$TMP/$n-dark.png"); done
montage "${files[@]}" -tile 4x -geometry 640x360+4+4 -background '#888888' "$OUT"
echo "wrote $OUT"
