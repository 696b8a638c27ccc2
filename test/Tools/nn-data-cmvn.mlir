// nn-data import --cmvn: global mean and variance normalization of the
// features, the statistics written beside the data. The training set
// normalizes with its own (each feature then has mean 0 and variance 1
// over its frames, checked in numpy against the same import without
// normalization); dev with the training set's (--cmvn-stats), copied
// beside it.
// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-data synthesize speech %t/task --train-utterances 4 --dev-utterances 2 --test-utterances 2 --held-out-voices 1 --max-words 2 --seed 5 >/dev/null 2>&1
// RUN: nn-data import %t/task/train %t/raw.npz --num-mel-bins 20 --vocab %t/task/tokens.txt 2>/dev/null | FileCheck %s --check-prefix=RAW
// RAW-NOT: normalized
// RUN: not ls %t/raw.cmvn.npz
// RUN: nn-data import %t/task/train %t/train.npz --num-mel-bins 20 --vocab %t/task/tokens.txt --cmvn global 2>/dev/null | FileCheck %s --check-prefix=TRAIN
// TRAIN: wrote 4 utterances
// TRAIN-NEXT: normalized the features with the global mean and variance of this set ({{[0-9]+}} frames), written to {{.+}}train.cmvn.npz
// RUN: nn-data import %t/task/dev %t/dev --shard-utterances 1 --num-mel-bins 20 --vocab %t/task/tokens.txt --cmvn-stats %t/train.cmvn.npz 2>/dev/null | FileCheck %s --check-prefix=DEV
// DEV: normalized the features with the global mean and variance of '{{.+}}train.cmvn.npz' ({{[0-9]+}} frames), written to {{.+}}dev{{/|\\}}cmvn.npz
// RUN: cmp %t/train.cmvn.npz %t/dev/cmvn.npz
// RUN: nn-data import %t/task/dev %t/dev-raw.npz --num-mel-bins 20 --vocab %t/task/tokens.txt >/dev/null 2>&1
// RUN: %python %S/Inputs/check-cmvn.py %t | FileCheck %s --check-prefix=CHECKED
// CHECKED: train: mean 0 and variance 1 in each of 20 features
// CHECKED: dev: (raw - train mean) / train std

// Bad flags are errors, before any audio is read.
// RUN: not nn-data import %t/task/train %t/x.npz --cmvn utterance 2>&1 | FileCheck %s --check-prefix=MODE
// MODE: nn-data: unknown --cmvn 'utterance' (known: global)
// RUN: not nn-data import %t/task/train %t/x.npz --cmvn global --cmvn-stats %t/train.cmvn.npz 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: nn-data: --cmvn=global computes this set's statistics and --cmvn-stats reads another set's: give one
// RUN: not nn-data import %t/task/dev %t/x.npz --num-mel-bins 40 --cmvn-stats %t/train.cmvn.npz 2>&1 | FileCheck %s --check-prefix=DIM
// DIM: nn-data: {{.+}}train.cmvn.npz: statistics of 20 features, but --num-mel-bins is 40
// RUN: not nn-data import %t/task/dev %t/x.npz --cmvn-stats %t/missing.npz 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: nn-data: {{.+}}missing.npz
// RUN: not ls %t/x.npz
