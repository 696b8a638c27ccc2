#!/usr/bin/env bash
# The main job: install what is missing, build, and run example 1 (a BLSTM
# acoustic model with frame-wise cross entropy and CTC) on a seeded
# synthetic batch, with pack-before-loss and without: same losses, and the
# packed run computes its loss tail on the real frames only.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
run=("${NN_BUILD_DIR:-build}/bin/nn-run" examples/blstm_ce_ctc.mlir
     --batch 16 --min-len 20 --max-len 120 --dim-len U=5:20 --seed 1 --timing)
echo "== packed (default)"
"${run[@]}"
echo "== padded (--no-pack)"
"${run[@]}" --no-pack
