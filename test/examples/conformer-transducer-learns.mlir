// The Conformer transducer example learns the spoken-word task from audio:
// trained with the RNN-T loss on the 800 utterances of conformer-learns.mlir,
// examples/speech/conformer_transducer.mlir decodes dev by beam search
// (voices the training never heard). With this seed the dev RNN-T loss
// falls from 14.3 to 0.48 per utterance in 1,000 steps (about three
// minutes on two cores, the data's synthesis and import included) and
// beam search reaches cer 0.044 and wer 0.032; the bounds leave
// room above that. Then nn-decode runs the @decode entry on the last
// checkpoint and reports the same word error rate (under 10%).
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-data synthesize speech %t/audio --vocabulary digits --train-utterances 800 --dev-utterances 60 --test-utterances 1 --held-out-voices 2 --max-words 2 --seed 4 >/dev/null 2>&1
// RUN: nn-data import %t/audio/train %t/train.npz --num-mel-bins 40 --vocab %t/audio/tokens.txt --threads 2 --cmvn global >/dev/null 2>&1
// RUN: nn-data import %t/audio/dev %t/dev.npz --num-mel-bins 40 --vocab %t/audio/tokens.txt --cmvn-stats %t/train.cmvn.npz >/dev/null 2>&1
// RUN: nn-train %nn_src/examples/speech/conformer_transducer.mlir --entry rnnt --data %t/train.npz --dev %t/dev.npz --batch-size 8 --epochs 10 --lr cosine:peak=2e-3,warmup=100,total=1000,final=1e-4 --seed 1 --save %t/ckpt --keep 1 > %t/fit.log 2>&1
// RUN: %pyexe %S/Inputs/learned.py %t/fit.log 0.12 0.15 | FileCheck %s
// CHECK: dev after step 1000: cer
// RUN: nn-decode %nn_src/examples/speech/conformer_transducer.mlir --entry decode --params %t/ckpt/step-00001000.npz --data %t/dev.npz --vocab %t/audio/tokens.txt --out %t/dev.txt 2>&1 | FileCheck %s --check-prefix=DECODE
// DECODE: word error rate {{[0-9]\.[0-9]+}}% ({{[0-9]+}} errors / 93 words, 60 utterances)
