#!/usr/bin/env bash
# The main job: install what is missing, build, and train example 1 (a
# BLSTM acoustic model with frame-wise cross entropy and CTC) for a short
# run on the synthetic segment task, with pack-before-loss: one compiled
# train step (forward, backward and Adam) per batch; the training losses
# every 25 steps and the dev losses every 50 fall. Then one synthetic batch
# through nn-run packed and padded: the same losses, the packed tail on
# the real frames only. Last, the staged recipe (examples/recipe): CTC,
# Viterbi alignment, frame-wise CE on the alignments, dev decoded with the
# CTC model (its label error rate), and the CTC model fine-tuned with
# minimum expected risk over its N-best lists, in one command.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
bin="${NN_BUILD_DIR:-build}/bin"
echo "== training example 1 on the segment task (20 classes, 200 steps, packed)"
"$bin/nn-train" examples/blstm_ce_ctc.mlir --synthetic segments --classes 20 \
    --steps 200 --epoch-steps 50 --dev-batches 2 --seed 1 \
    --lr cosine:peak=3e-3,warmup=20,total=200,final=1e-4 \
    --verbose --log-every 25
run=("$bin/nn-run" examples/blstm_ce_ctc.mlir
     --batch 16 --min-len 20 --max-len 120 --dim-len U=5:20 --seed 1 --timing)
echo "== one batch, packed (default)"
"${run[@]}"
echo "== one batch, padded (--no-pack)"
"${run[@]}" --no-pack
echo "== the staged recipe: CTC, alignment, frame-wise CE, dev decoded, MWER fine-tuning (examples/recipe/recipe.json)"
work="${NN_BUILD_DIR:-build}/recipe.work"
rm -rf "$work"
"$bin/nn-train" --stages examples/recipe/recipe.json --work-dir "$work" \
    --verbose --log-every 128
