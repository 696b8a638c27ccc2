// A small CTC model learns the spoken-word task from audio: trained on 800
// utterances of one or two digits, examples/speech/ctc.mlir decodes dev,
// spoken by voices the training never heard, far better than chance.
// Chance: the untrained model's first evaluation (cer 0.98, wer 1), or
// guessing one digit per word (a word error rate of 0.9). The run reaches
// cer 0.13 and wer 0.38 with this seed in about 20 s on two cores; the
// bounds leave room above that.
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-data synthesize speech %t/audio --vocabulary digits --train-utterances 800 --dev-utterances 60 --test-utterances 1 --held-out-voices 2 --max-words 2 --seed 4 >/dev/null 2>&1
// RUN: nn-data import %t/audio/train %t/train.npz --num-mel-bins 40 --vocab %t/audio/tokens.txt --threads 2 --cmvn global >/dev/null 2>&1
// RUN: nn-data import %t/audio/dev %t/dev.npz --num-mel-bins 40 --vocab %t/audio/tokens.txt --cmvn-stats %t/train.cmvn.npz >/dev/null 2>&1
// RUN: nn-train %nn_src/examples/speech/ctc.mlir --entry ctc --data %t/train.npz --dev %t/dev.npz --batch-size 8 --epochs 12 --lr cosine:peak=4e-3,warmup=30,total=1200,final=1e-4 --seed 1 > %t/fit.log 2>&1
// RUN: %pyexe %S/Inputs/learned.py %t/fit.log 0.3 0.65 | FileCheck %s
// CHECK: dev after step 1200: cer
