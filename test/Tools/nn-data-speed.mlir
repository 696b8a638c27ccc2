// nn-data import --speed-perturb: each utterance once per factor, ids of
// factors other than 1 prefixed as Kaldi's perturb_data_dir_speed.sh does;
// bad factors are errors before any audio is read.
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-data synthesize speech %t/audio --vocabulary digits --train-utterances 3 --dev-utterances 1 --test-utterances 1 --held-out-voices 1 --max-words 2 --seed 4 >/dev/null 2>&1
// RUN: nn-data import %t/audio/train %t/train.npz --num-mel-bins 8 --speed-perturb 0.9,1.0,1.1 2>/dev/null | FileCheck %s
// CHECK: wrote 9 utterances (sp0.9-{{.+}}-train-{{[0-9]+}} .. sp1.1-{{.+}}-train-{{[0-9]+}}) to {{.+}}train.npz
// RUN: not nn-data import %t/audio/train %t/x.npz --speed-perturb 0.9,3 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: nn-data: --speed-perturb: speed factor 3 is outside [0.5, 2]
// RUN: not nn-data import %t/audio/train %t/x.npz --speed-perturb 1.1,1.1 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: nn-data: --speed-perturb: speed factor 1.1 is given twice
// RUN: not ls %t/x.npz
