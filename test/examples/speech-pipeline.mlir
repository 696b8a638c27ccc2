// The README's main job on a tiny spoken-word task, end to end with the
// commands and flags it uses: audio synthesized by eSpeak NG, imported
// into normalized log-mel features (the training set's statistics for
// dev), examples/speech/ctc.mlir trained with checkpoints (its dev word
// error rate computed in the graph), and a checkpoint decoded into words
// and scored: the same word error rate. The model learns nothing in
// two steps; what is checked is that every stage runs and hands the next
// what it needs.
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-data synthesize speech %t/audio --vocabulary digits --train-utterances 6 --dev-utterances 3 --test-utterances 1 --held-out-voices 1 --max-words 2 --seed 2 >/dev/null 2>&1
// RUN: nn-data import %t/audio/train %t/train.npz --num-mel-bins 40 --vocab %t/audio/tokens.txt --cmvn global 2>/dev/null | FileCheck %s --check-prefix=TRAIN
// TRAIN: wrote 6 utterances
// TRAIN: written to {{.+}}train.cmvn.npz
// RUN: nn-data import %t/audio/dev %t/dev.npz --num-mel-bins 40 --vocab %t/audio/tokens.txt --cmvn-stats %t/train.cmvn.npz 2>/dev/null | FileCheck %s --check-prefix=DEV
// DEV: wrote 3 utterances
// RUN: nn-train %nn_src/examples/speech/ctc.mlir --entry ctc --data %t/train.npz --dev %t/dev.npz --batch-size 3 --epochs 1 --save %t/ckpt --seed 1 > %t/fit.log 2>&1
// RUN: FileCheck %s --check-prefix=FIT < %t/fit.log
// FIT: dev after step 2: ctc {{[0-9.]+}} cer {{[0-9.]+}} wer {{[0-9.]+}}
// RUN: nn-decode %nn_src/examples/speech/ctc.mlir --entry decode --params %t/ckpt/step-00000002.npz --data %t/dev.npz --vocab %t/audio/tokens.txt --out %t/dev.txt 2> %t/dev.err
// RUN: FileCheck %s --check-prefix=WER < %t/dev.err
// WER: word error rate {{[0-9.]+}}% ({{[0-9]+}} errors / {{[1-9][0-9]*}} words, 3 utterances)
// RUN: count 3 < %t/dev.txt
// The word error rate the graph computed on dev during training is the
// one nn-decode scores for the same checkpoint.
// RUN: %pyexe %S/Inputs/same-wer.py %t/fit.log %t/dev.err | FileCheck %s --check-prefix=SAME
// SAME: same word error rate: {{[0-9]+}}/{{[1-9][0-9]*}}
// RUN: nn-decode %nn_src/examples/speech/ctc.mlir --entry decode --params %t/ckpt/step-00000002.npz --data %t/dev.npz --vocab %t/audio/tokens.txt --json | FileCheck %s --check-prefix=JSON
// JSON: {"utt": "{{.+}}-dev-{{[0-9]+}}", "hyp": [{{.*}}], "score": {{.+}}, "text": "{{.*}}", "ref": [{{.+}}], "ref_text": "{{.+}}", "errors": {{[0-9]+}}, "ref_len": {{[1-9]}}}
// JSON: {"summary": {"utterances": 3, "errors": {{[0-9]+}}, "ref_len": {{[1-9][0-9]*}}, "error_rate": {{[0-9.e+-]+}}, "unit": "word", "losses": {}}}
