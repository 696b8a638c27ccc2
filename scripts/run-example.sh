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
# minimum expected risk over its N-best lists, in one command. Last, speech
# from audio: the spoken-word task synthesized by eSpeak NG (dev voices
# never heard in training), imported into normalized log-mel features,
# a Conformer trained with CTC for 10 epochs
# (examples/speech/conformer_ctc.mlir, packed after its subsampling), the
# dev word error rate (`wer`, computed in the graph) falling each epoch,
# and the last checkpoint decoded into words by nn-decode.
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
echo "== speech from audio: the spoken-word task (digits), a Conformer with CTC, dev word error rate per epoch"
speech="${NN_BUILD_DIR:-build}/speech.work"
rm -rf "$speech"
"$bin/nn-data" synthesize speech "$speech/audio" --vocabulary digits \
    --train-utterances 3000 --dev-utterances 100 --test-utterances 100 \
    --seed 1 2>/dev/null
tokens="$speech/audio/tokens.txt"
"$bin/nn-data" import "$speech/audio/train" "$speech/train.npz" \
    --num-mel-bins 40 --vocab "$tokens" --threads 2 --cmvn global 2>/dev/null
"$bin/nn-data" import "$speech/audio/dev" "$speech/dev.npz" \
    --num-mel-bins 40 --vocab "$tokens" --cmvn-stats "$speech/train.cmvn.npz" \
    2>/dev/null
"$bin/nn-train" examples/speech/conformer_ctc.mlir --entry ctc \
    --data "$speech/train.npz" --dev "$speech/dev.npz" --batch-size 16 \
    --epochs 10 --lr cosine:peak=2e-3,warmup=100,total=1880,final=1e-4 \
    --save "$speech/checkpoints" --keep 1 --seed 1 \
    --tensorboard "$speech/tensorboard"
# The last checkpoint decoded and spelled as words; its word error rate
# is the last epoch's dev `wer` above.
"$bin/nn-decode" examples/speech/conformer_ctc.mlir --entry decode \
    --params "$(ls "$speech"/checkpoints/step-*.npz | tail -n 1)" \
    --data "$speech/dev.npz" --vocab "$tokens" --out "$speech/dev.txt" \
    2>"$speech/decode.log"
echo "nn-decode, last checkpoint: dev $(tail -n 1 "$speech/decode.log"); the first hypotheses:"
head -n 3 "$speech/dev.txt"
echo "TensorBoard scalars of the run: $speech/tensorboard (bench/plot-tensorboard.py draws them)"
