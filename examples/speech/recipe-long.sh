#!/usr/bin/env bash
# The spoken-word task's longer recipe (docs/speech-task.md): ten times the
# main job's training speakers' utterances, speed perturbation at import,
# the same model (examples/speech/ctc.mlir: SpecAugment, two BLSTM layers,
# CTC) trained longer, and the test set, whose voices neither training nor
# dev heard, decoded into words at the end. About 25 minutes on 2 cores.
#
#   examples/speech/recipe-long.sh [WORK_DIR]   (default build/speech-long.work)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${NN_BUILD_DIR:-build}/bin"
work="${1:-${NN_BUILD_DIR:-build}/speech-long.work}"
epochs=12
batch=16
speeds=0.9,1.0,1.1
train_utterances=10000

rm -rf "$work"
"$bin/nn-data" synthesize speech "$work/audio" --vocabulary digits \
    --train-utterances "$train_utterances" --dev-utterances 200 \
    --test-utterances 200 --held-out-voices 3 --seed 1
tokens="$work/audio/tokens.txt"
"$bin/nn-data" import "$work/audio/train" "$work/train" --shard-utterances 5000 \
    --num-mel-bins 40 --vocab "$tokens" --speed-perturb "$speeds" --threads 2 \
    --cmvn global
for split in dev test; do
  "$bin/nn-data" import "$work/audio/$split" "$work/$split.npz" \
      --num-mel-bins 40 --vocab "$tokens" --cmvn-stats "$work/train/cmvn.npz"
done

# Batches per epoch: the training copies (three speeds) in batches of 16.
steps=$(( epochs * (train_utterances * 3 + batch - 1) / batch ))
"$bin/nn-train" examples/speech/ctc.mlir --entry ctc \
    --data "$work/train" --dev "$work/dev.npz" --batch-size "$batch" \
    --epochs "$epochs" --lr "cosine:peak=3e-3,warmup=200,total=$steps,final=1e-5" \
    --save "$work/checkpoints" --keep 1 --seed 1 \
    --tensorboard "$work/tensorboard"

last="$(ls "$work"/checkpoints/step-*.npz | tail -n 1)"
for split in dev test; do
  "$bin/nn-decode" examples/speech/ctc.mlir --entry decode --params "$last" \
      --data "$work/$split.npz" --vocab "$tokens" --out "$work/$split.txt" \
      2>"$work/decode-$split.log"
  echo "nn-decode, last checkpoint, $split: $(tail -n 1 "$work/decode-$split.log")"
done
