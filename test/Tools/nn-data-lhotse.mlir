// nn-data import of a Lhotse cut manifest (.jsonl): the same utterances,
// features and labels as the Kaldi directory it was written from.
// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-data synthesize speech %t/audio --vocabulary digits --train-utterances 4 --dev-utterances 1 --test-utterances 1 --held-out-voices 1 --max-words 2 --seed 6 >/dev/null 2>&1
// RUN: %pyexe %S/Inputs/make-cuts.py %t/audio/train %t/cuts.jsonl
// RUN: nn-data import %t/cuts.jsonl %t/lhotse.npz --num-mel-bins 8 --vocab %t/audio/tokens.txt 2>/dev/null | FileCheck %s
// CHECK: wrote 4 utterances
// RUN: nn-data import %t/audio/train %t/kaldi.npz --num-mel-bins 8 --vocab %t/audio/tokens.txt 2>/dev/null
// RUN: %python -c "import numpy as np, sys; a, b = np.load(sys.argv[1]), np.load(sys.argv[2]); assert sorted(a.files) == sorted(b.files); assert all(np.array_equal(a[k], b[k]) for k in a.files); print('same arrays')" %t/lhotse.npz %t/kaldi.npz | FileCheck %s --check-prefix=SAME
// SAME: same arrays
