#!/usr/bin/env bash
# Peak resident memory of `nn-run --grads` on the loss tail of nn-bench
# (linear 512 -> V, log_softmax, cross entropy; B = 32 at the benchmark's
# LibriSpeech lengths) at V = 1000 and V = 10000, and the difference: what
# the tool itself adds on top of the compiled tail's gradients
# (docs/loss-tail.md, "nn-run --grads memory"). Each figure is the median
# of 3 runs of /usr/bin/time -v ("Maximum resident set size").
#
#   bench/nn-run-grads-rss.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$build/bin/nn-bench" --benchmark_filter=none 2>/dev/null |
  sed -n 's/^lengths: //p' | tr ',' '\n' >"$out/lengths"
declare -A peak
for vocabulary in 1000 10000; do
  "$build/bin/nn-bench" --emit-tail "$vocabulary" >"$out/tail$vocabulary.mlir"
  runs=()
  for run in 1 2 3; do
    /usr/bin/time -v "$build/bin/nn-run" "$out/tail$vocabulary.mlir" \
      --batch 32 --lengths-from "$out/lengths" --seed 1 \
      --grads "$out/grads$vocabulary.npz" >/dev/null 2>"$out/time"
    runs+=("$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$out/time")")
  done
  peak[$vocabulary]=$(printf '%s\n' "${runs[@]}" | sort -n | sed -n 2p)
  echo "V = $vocabulary: peak RSS $((peak[$vocabulary] / 1024)) MiB" \
       "(runs: ${runs[*]} KiB), grads archive" \
       "$(($(stat -c %s "$out/grads$vocabulary.npz") / 1048576)) MiB"
done
echo "V = 10000 minus V = 1000: $(((peak[10000] - peak[1000]) / 1024)) MiB"
