// nn-train --lr newbob: a rate per epoch from the dev score, with the rules
// of RETURNN's newbob_multi_epoch (docs/training.md), recomputed by
// check-newbob.py from the run's own dev scores; the epochs' rates and
// scores travel in the checkpoint, so a run interrupted inside an epoch
// and resumed decides exactly as the straight run.
// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-train %S/Inputs/segments-small.mlir --synthetic segments --epochs 8 --seed 3 --json --epoch-steps 2 --dev-batches 1 --batch-size 4 --lr newbob:lr=1e-2,decay=0.5,epochs=2,interval=1,threshold=-0.02,min-epochs-per-lr=2,score=ce,relative-lr=1 > %t/straight.json
// RUN: nn-train %S/Inputs/segments-small.mlir --synthetic segments --steps 9 --seed 3 --json --epoch-steps 2 --dev-batches 1 --batch-size 4 --lr newbob:lr=1e-2,decay=0.5,epochs=2,interval=1,threshold=-0.02,min-epochs-per-lr=2,score=ce,relative-lr=1 --save %t/ckpt > %t/first.json
// RUN: nn-train %S/Inputs/segments-small.mlir --synthetic segments --epochs 8 --seed 3 --json --epoch-steps 2 --dev-batches 1 --batch-size 4 --lr newbob:lr=1e-2,decay=0.5,epochs=2,interval=1,threshold=-0.02,min-epochs-per-lr=2,score=ce,relative-lr=1 --resume %t/ckpt > %t/second.json
// RUN: cat %t/first.json %t/second.json > %t/resumed.json
// RUN: %python %S/Inputs/check-newbob.py %t/straight.json ce 1e-2 0.5 -0.02 2 2 %t/resumed.json | FileCheck %s
// CHECK: 8 epochs, decisions initial kept kept kept decayed kept decayed kept
// CHECK: resumed run equal

// The checkpoint after step 9 holds epochs 1 to 5; the evaluation that
// ends the run inside the fifth scores it (resumed, its end scores it
// again).
// RUN: %python -c "import numpy as np, sys; r = np.load(sys.argv[1])['nn.train.epoch_rates']; print(r.shape, r[:, 0].tolist(), r[:, 1].tolist())" %t/ckpt/step-00000009.npz | FileCheck %s --check-prefix=SAVED
// SAVED: (5, 3) [0.01, 0.01, 0.01, 0.01, 0.005] [1.0, 1.0, 1.0, 1.0, 1.0]

// Plain output: one line per epoch with the decision.
// RUN: nn-train %S/Inputs/segments-small.mlir --synthetic segments --epochs 2 --seed 3 --epoch-steps 2 --dev-batches 1 --batch-size 4 --lr newbob:lr=1e-2,epochs=1 2>&1 | FileCheck %s --check-prefix=PLAIN
// PLAIN: nn-train: epoch 1: learning rate 1.000000e-02 (initial)
// PLAIN: nn-train: epoch 2: learning rate 1.000000e-02 (kept)

// Errors name what is wrong.
// RUN: not nn-train %S/Inputs/segments-small.mlir --synthetic segments --epochs 2 --epoch-steps 2 --batch-size 4 --dev-batches 0 --lr newbob:lr=1e-2 2>&1 | FileCheck %s --check-prefix=NODEV
// NODEV: nn-train: --lr: newbob decides each epoch's rate from the dev score: give dev data
// RUN: not nn-train %S/Inputs/segments-small.mlir --synthetic segments --epochs 2 --epoch-steps 2 --batch-size 4 --lr newbob:score=wer 2>&1 | FileCheck %s --check-prefix=SCORE
// SCORE: nn-train: --lr: newbob: score 'wer' is not a dev loss of graph @am (ce, fer, ctc)
// RUN: not nn-train %S/Inputs/segments-small.mlir --synthetic segments --epochs 2 --epoch-steps 2 --batch-size 4 --lr newbob:lr=0 2>&1 | FileCheck %s --check-prefix=LR
// LR: lr must be a positive number at most 3.4e38
// RUN: not nn-train %S/Inputs/segments-small.mlir --synthetic segments --epochs 2 --epoch-steps 2 --batch-size 4 --lr newbob:lr=1e-2,grow-threshold=0.5 2>&1 | FileCheck %s --check-prefix=GROW
// GROW: newbob's grow-threshold (0.500000) is above its threshold (-0.010000)
