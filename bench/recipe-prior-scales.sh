#!/usr/bin/env bash
# The CTC recipe (examples/recipe) at several prior scales of its align
# stage, in one work directory: the CTC stage runs once, the alignment and
# the frame-wise stage once per scale. Prints stage 3's first and last dev
# evaluation (the first is the CTC model's) and how the dev alignments fit
# the segment task's truth (bench/alignment_stats.py; needs numpy).
#   bench/recipe-prior-scales.sh [WORK_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/tmp/recipe-prior-scales}
bin=${NN_BUILD_DIR:-build}/bin
python=/usr/bin/python3
for scale in 0 0.5 1 2; do
  file=examples/recipe/scale-$scale.json
  sed "s/\"scale\": [0-9.]*}/\"scale\": $scale}/" examples/recipe/recipe.json > "$file"
  "$bin/nn-train" --stages "$file" --work-dir "$work" --json > "$work.$scale.jsonl"
  rm "$file"
  echo "== prior scale $scale"
  grep '"stage": "ce", "eval"' "$work.$scale.jsonl" | sed -n '1p;$p'
  "$python" bench/alignment_stats.py "$work/data/dev.align/shard-00000.npz" \
      "$work/data/dev/shard-00000.npz"
done
