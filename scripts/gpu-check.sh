#!/usr/bin/env bash
# Every GPU check in one script, for a machine with an NVIDIA GPU.
#
#   scripts/gpu-check.sh              on a machine with a GPU and the build
#                                     dependencies: build, the gpu-labelled
#                                     tests (NCCL's sums over the GPUs
#                                     among them, where libnccl.so.2
#                                     loads), every example on cuda vs cpu,
#                                     the GPU benchmark (nn-gpu-bench)
#   scripts/gpu-check.sh bundle DIR   here (no GPU needed): compile every
#                                     example (forward, and with gradients),
#                                     the stage recipes' alignment graphs,
#                                     example 1's train step and the loss
#                                     tail for cuda,
#                                     run them on the CPU for the expected
#                                     values, and put the artifacts, nn-exec
#                                     and its libraries into DIR
#   scripts/gpu-check.sh run DIR      on a GPU machine without MLIR (it
#                                     needs none): run the bundle's
#                                     GPU artifacts and compare with the CPU
#                                     values (rel 1e-4); train example 1 for
#                                     a few steps and compare each step's
#                                     losses (rel 1e-3); time the loss tail
#
# Results are printed; "GPU CHECK PASSED" ends a run that passed.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${NN_BUILD_DIR:-build}
EXAMPLES=(blstm_ce_ctc conv_encoder_decoupled_loss shared_tail_two_losses)
# The alignment graphs (entry @align) of the stage recipes
# (nn.viterbi_align with a prior; nn.transducer_align over a packed joint),
# forward only.
declare -A ALIGNERS=([recipe-align]=examples/recipe/align.mlir
                     [recipe-rna-align]=examples/recipe-rna/model.mlir)
# Seeded synthetic batches per example (U: label lengths for CTC).
SHAPE=(--batch 6 --min-len 20 --max-len 60 --seed 3)
# Label lengths each example's CTC can align (T6 = T / 6 in example 2).
declare -A LABELS=([blstm_ce_ctc]="--dim-len U=2:8"
                   [conv_encoder_decoupled_loss]="--dim-len Uc=1:3"
                   [recipe-align]="--dim-len U=2:8"
                   [recipe-rna-align]="--dim-len U=2:8")
# shape EXAMPLE: the nn-exec flags of its synthetic batch.
shape() { echo "${SHAPE[*]} ${LABELS[$1]:-}"; }

# compare.py EXPECTED.json ACTUAL.json: losses and output moments within
# rel 1e-4 (abs 1e-5).
compare() {
  python3 - "$1" "$2" <<'PY'
import json, math, sys
expected, actual = (json.load(open(p)) for p in sys.argv[1:3])
def close(a, b):
    if math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b):
        return str(a) == str(b)
    return abs(a - b) <= 1e-5 + 1e-4 * max(abs(a), abs(b))
bad = []
for key in ("losses", "outputs"):
    for e, a in zip(expected[key], actual[key]):
        for field in ("sum", "normalized", "sum_squares"):
            if field in e and not close(e[field], a[field]):
                bad.append(f"{key} {e['name']} {field}: cpu {e[field]} vs cuda {a[field]}")
print(("MISMATCH " + "; ".join(bad)) if bad else "match (rel 1e-4)")
sys.exit(1 if bad else 0)
PY
}

# compare_training EXPECTED ACTUAL: nn-exec --train lines (one JSON object
# per step), every loss and the gradient norm within rel 1e-3 (float
# rounding compounds over the steps: kernels and the CPU sum in different
# orders).
compare_training() {
  python3 - "$1" "$2" <<'PY'
import json, math, sys
expected, actual = ([json.loads(l) for l in open(p)] for p in sys.argv[1:3])
bad = [] if len(expected) == len(actual) else [f"{len(actual)} steps, expected {len(expected)}"]
def close(a, b):
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return abs(a - b) <= 1e-5 + 1e-3 * max(abs(a), abs(b))
for e, a in zip(expected, actual):
    pairs = [("grad_norm", e["grad_norm"], a["grad_norm"])]
    pairs += [(k, e["losses"][k], a["losses"].get(k, "missing")) for k in e["losses"]]
    bad += [f"step {e['step']} {k}: cpu {x} vs cuda {y}" for k, x, y in pairs if not close(x, y)]
print(("MISMATCH " + "; ".join(bad)) if bad else f"{len(actual)} steps match (rel 1e-3)")
sys.exit(1 if bad else 0)
PY
}
TRAIN=(--train 5 --batch 6 --seed 2 --json)

bundle() {
  local dir=$1
  scripts/build.sh
  mkdir -p "$dir"
  cp "$BUILD/bin/nn-exec" "$dir/"
  # nn-exec's libraries that a machine without the build lacks: the runtime
  # and Abseil (run_bundle puts $dir on LD_LIBRARY_PATH).
  ldd "$BUILD/bin/nn-exec" | awk '$3 ~ /lib(NN|absl)/ {print $3}' |
    xargs -r cp -L -t "$dir/"
  # Each example forward, and forward+backward (every parameter's
  # gradient, compared through the outputs' moments).
  for example in "${EXAMPLES[@]}"; do
    for pack in pack no-pack; do
      for mode in fwd grads; do
        local flag=() name="$example.$pack.$mode"
        [[ $pack == no-pack ]] && flag+=(--no-pack)
        [[ $mode == grads ]] && flag+=(--grads "$dir/unused.npz")
        "$BUILD/bin/nn-run" "examples/$example.mlir" "${flag[@]}" --compile-only \
          --target=cuda --emit-artifact="$dir/$name.cuda.so" >/dev/null
        "$BUILD/bin/nn-run" "examples/$example.mlir" "${flag[@]}" --compile-only \
          --emit-artifact="$dir/$name.cpu.so" >/dev/null
        # shellcheck disable=SC2046 # shape prints words
        "$BUILD/bin/nn-exec" "$dir/$name.cpu.so" $(shape "$example") --json \
          >"$dir/$name.expected.json"
        rm "$dir/$name.cpu.so"
      done
    done
  done
  for name in "${!ALIGNERS[@]}"; do
    for pack in pack no-pack; do
      local flag=(); [[ $pack == no-pack ]] && flag=(--no-pack)
      "$BUILD/bin/nn-run" "${ALIGNERS[$name]}" --entry=align "${flag[@]}" --compile-only \
        --target=cuda --emit-artifact="$dir/$name.$pack.fwd.cuda.so" >/dev/null
      "$BUILD/bin/nn-run" "${ALIGNERS[$name]}" --entry=align "${flag[@]}" --compile-only \
        --emit-artifact="$dir/$name.cpu.so" >/dev/null
      # shellcheck disable=SC2046 # shape prints words
      "$BUILD/bin/nn-exec" "$dir/$name.cpu.so" $(shape "$name") --json \
        >"$dir/$name.$pack.fwd.expected.json"
      rm "$dir/$name.cpu.so"
    done
  done
  # Example 1's train step (Adam, dropout), packed and padded: the CPU's
  # trajectory is the expected one.
  for pack in pack no-pack; do
    local flag=(); [[ $pack == no-pack ]] && flag=(--no-pack)
    "$BUILD/bin/nn-train" examples/blstm_ce_ctc.mlir "${flag[@]}" --compile-only \
      --target=cuda --emit-artifacts="$dir/train.$pack.cuda" >/dev/null
    "$BUILD/bin/nn-train" examples/blstm_ce_ctc.mlir "${flag[@]}" --compile-only \
      --emit-artifacts="$dir/train.$pack.cpu" >/dev/null
    "$BUILD/bin/nn-exec" "$dir/train.$pack.cpu/train-step.so" "${TRAIN[@]}" \
      >"$dir/train.$pack.expected.jsonl"
    rm -r "$dir/train.$pack.cpu" "$dir/train.$pack.cuda/eval.so"
  done
  # The loss tail of the benchmark (V = 1000, 10000), at its lengths.
  local lengths
  lengths=$("$BUILD/bin/nn-bench" --benchmark_filter=none 2>/dev/null |
            sed -n 's/^lengths: //p')
  echo "$lengths" >"$dir/tail.lengths"
  for vocabulary in 1000 10000; do
    "$BUILD/bin/nn-bench" --emit-tail "$vocabulary" >"$dir/tail$vocabulary.mlir"
    for pack in pack no-pack; do
      local flag=(); [[ $pack == no-pack ]] && flag=(--no-pack)
      "$BUILD/bin/nn-run" "$dir/tail$vocabulary.mlir" "${flag[@]}" \
        --compile-only --target=cuda \
        --emit-artifact="$dir/tail$vocabulary.$pack.cuda.so" >/dev/null
    done
  done
  cp "$0" "$dir/gpu-check.sh"
  echo "bundle in $dir ($(du -sh "$dir" | cut -f1))"
}

run_bundle() {
  local dir=$1 failed=0
  export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>/dev/null || true
  for expected in "$dir"/*.expected.json; do
    local base=${expected%.expected.json} example
    example=$(basename "$base"); example=${example%%.*}
    echo "== $(basename "$base") on cuda"
    # shellcheck disable=SC2046
    if "$dir/nn-exec" "$base.cuda.so" $(shape "$example") --json \
         >"$base.cuda.json"; then
      compare "$expected" "$base.cuda.json" || failed=1
    else
      failed=1
    fi
  done
  for pack in pack no-pack; do
    echo "== example 1 train step, $pack, ${TRAIN[*]} on cuda"
    if "$dir/nn-exec" "$dir/train.$pack.cuda/train-step.so" "${TRAIN[@]}" \
         >"$dir/train.$pack.cuda.jsonl"; then
      compare_training "$dir/train.$pack.expected.jsonl" \
        "$dir/train.$pack.cuda.jsonl" || failed=1
    else
      failed=1
    fi
  done
  local lengths; lengths=$(cat "$dir/tail.lengths")
  for vocabulary in 1000 10000; do
    for pack in no-pack pack; do
      echo "== loss tail V=$vocabulary $pack (B = 32, LibriSpeech lengths)"
      "$dir/nn-exec" "$dir/tail$vocabulary.$pack.cuda.so" --lengths "$lengths" \
        --repeat 20 || failed=1
    done
  done
  finish $failed
}

full() {
  local failed=0 dir
  scripts/build.sh
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>/dev/null || true
  (cd "$BUILD" && ctest -L gpu --output-on-failure) || failed=1
  dir=$(mktemp -d)
  for example in "${EXAMPLES[@]}"; do
    for flags in "" --no-pack "--grads $dir/unused.npz" \
                 "--no-pack --grads $dir/unused.npz"; do
      echo "== $example ${flags:-(packed)} cuda vs cpu"
      # shellcheck disable=SC2086 # flags are words
      "$BUILD/bin/nn-run" "examples/$example.mlir" $flags --compile-only \
        --emit-artifact="$dir/cpu.so" >/dev/null
      # shellcheck disable=SC2086
      "$BUILD/bin/nn-run" "examples/$example.mlir" $flags --compile-only \
        --target=cuda --emit-artifact="$dir/cuda.so" >/dev/null
      # shellcheck disable=SC2046
      "$BUILD/bin/nn-exec" "$dir/cpu.so" $(shape "$example") --json \
        >"$dir/cpu.json"
      # shellcheck disable=SC2046
      if "$BUILD/bin/nn-exec" "$dir/cuda.so" $(shape "$example") --json \
           >"$dir/cuda.json"; then
        compare "$dir/cpu.json" "$dir/cuda.json" || failed=1
      else
        failed=1
      fi
    done
  done
  for name in "${!ALIGNERS[@]}"; do
    echo "== $name cuda vs cpu"
    "$BUILD/bin/nn-run" "${ALIGNERS[$name]}" --entry=align --compile-only \
      --emit-artifact="$dir/cpu.so" >/dev/null
    "$BUILD/bin/nn-run" "${ALIGNERS[$name]}" --entry=align --compile-only --target=cuda \
      --emit-artifact="$dir/cuda.so" >/dev/null
    # shellcheck disable=SC2046
    "$BUILD/bin/nn-exec" "$dir/cpu.so" $(shape "$name") --json >"$dir/cpu.json"
    # shellcheck disable=SC2046
    if "$BUILD/bin/nn-exec" "$dir/cuda.so" $(shape "$name") --json \
         >"$dir/cuda.json"; then
      compare "$dir/cpu.json" "$dir/cuda.json" || failed=1
    else
      failed=1
    fi
  done
  for pack in pack no-pack; do
    local flag=(); [[ $pack == no-pack ]] && flag=(--no-pack)
    echo "== example 1 train step, $pack, cuda vs cpu"
    "$BUILD/bin/nn-train" examples/blstm_ce_ctc.mlir "${flag[@]}" --compile-only \
      --emit-artifacts="$dir/train-cpu" >/dev/null
    "$BUILD/bin/nn-train" examples/blstm_ce_ctc.mlir "${flag[@]}" --compile-only \
      --target=cuda --emit-artifacts="$dir/train-cuda" >/dev/null
    "$BUILD/bin/nn-exec" "$dir/train-cpu/train-step.so" "${TRAIN[@]}" \
      >"$dir/train-cpu.jsonl"
    if "$BUILD/bin/nn-exec" "$dir/train-cuda/train-step.so" "${TRAIN[@]}" \
         >"$dir/train-cuda.jsonl"; then
      compare_training "$dir/train-cpu.jsonl" "$dir/train-cuda.jsonl" ||
        failed=1
    else
      failed=1
    fi
  done
  "$BUILD/bin/nn-gpu-bench" --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true || failed=1
  finish $failed
}

finish() {
  if [[ $1 == 0 ]]; then echo "GPU CHECK PASSED"; else echo "GPU CHECK FAILED"; exit 1; fi
}

case "${1:-full}" in
  full) full ;;
  bundle) bundle "${2:?bundle DIR}" ;;
  run) run_bundle "${2:?run DIR}" ;;
  *) echo "usage: $0 [full | bundle DIR | run DIR]" >&2; exit 2 ;;
esac
