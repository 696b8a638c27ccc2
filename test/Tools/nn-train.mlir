// nn-train's command-line contract and checkpoints, on a small model.
// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-train %S/Inputs/segments-small.mlir --synthetic segments --steps 4 --seed 3 --json --epoch-steps 2 --dev-batches 1 --batch-size 4 > %t/straight.json
// RUN: %python %S/Inputs/check-train-json.py %t/straight.json 1 4 ce,fer,ctc | FileCheck %s --check-prefix=CONTRACT
// CONTRACT: steps 1..4, 2 dev evaluations
// RUN: nn-train %S/Inputs/segments-small.mlir --synthetic segments --steps 4 --seed 3 --json --no-pack --epoch-steps 2 --dev-batches 1 --batch-size 4 > %t/padded.json
// RUN: %python %S/Inputs/check-train-json.py %t/padded.json 1 4 ce,fer,ctc | FileCheck %s --check-prefix=CONTRACT

// Checkpoints every 2 steps keeping the last one; resuming from it gives
// the uninterrupted run's steps 3 and 4 exactly (the same JSON lines).
// RUN: nn-train %S/Inputs/segments-small.mlir --synthetic segments --steps 2 --seed 3 --json --epoch-steps 2 --dev-batches 1 --batch-size 4 --save %t/ckpt --keep 1 > %t/first.json
// RUN: ls %t/ckpt | FileCheck %s --check-prefix=SAVED
// SAVED: step-00000002.npz
// RUN: %python -c "import numpy as np, sys; z = np.load(sys.argv[1]); print(int(z['nn.train.step']), int(z['nn.train.batches']), z['out.w'].shape, z['optimizer/adam_v/out.w'].shape)" %t/ckpt/step-00000002.npz | FileCheck %s --check-prefix=NUMPY
// NUMPY: 2 2 (6, 16) (6, 16)
// RUN: nn-train %S/Inputs/segments-small.mlir --synthetic segments --steps 4 --seed 3 --json --epoch-steps 2 --dev-batches 1 --batch-size 4 --resume %t/ckpt > %t/resumed.json
// RUN: tail -n 3 %t/straight.json > %t/straight-tail.json
// RUN: diff %t/straight-tail.json %t/resumed.json

// Plain lines with --verbose, dev evaluations by loss name.
// RUN: nn-train %S/Inputs/segments-small.mlir --synthetic segments --steps 2 --epoch-steps 2 --dev-batches 1 --batch-size 4 --verbose 2>&1 | FileCheck %s --check-prefix=VERBOSE
// VERBOSE: step 1 lr 0.001 grad_norm {{[0-9.e+-]+}} ce {{[0-9.]+}} fer {{[0-9.]+}} ctc {{[0-9.]+}} frames {{[0-9]+}}
// VERBOSE: step 2 lr 0.001
// VERBOSE: dev after step 2: ce {{[0-9.]+}} fer {{[0-9.]+}} ctc {{[0-9.]+}}

// Ctrl-C saves a checkpoint and exits (130); --resume continues from it.
// RUN: rm -rf %t/interrupted
// (Interrupted after its first step, not after a fixed time: under load,
// compiling alone took longer than the 8 s an earlier version waited.)
// RUN: not %python %S/Inputs/interrupt-after-first-line.py nn-train %S/Inputs/segments-small.mlir --synthetic segments --steps 100000000 --batch-size 2 --dev-batches 1 --json --save %t/interrupted 2> %t/interrupt.log
// RUN: FileCheck %s --check-prefix=INTERRUPT < %t/interrupt.log
// INTERRUPT: nn-train: interrupted after step {{[0-9]+}}; checkpoint in {{.+}}interrupted (--resume {{.+}}interrupted continues)
// RUN: ls %t/interrupted | FileCheck %s --check-prefix=SAVED-ON-INTERRUPT
// SAVED-ON-INTERRUPT: step-{{[0-9]+}}.npz

// --losses picks the trained losses and their scales: with ce alone the
// first step's gradient norm is ce's, and at scale 0.5 exactly half of it
// (the same initial parameters and batch); ctc is still reported.
// RUN: nn-train %S/Inputs/segments-small.mlir --synthetic segments --steps 1 --seed 3 --json --batch-size 4 --dev-batches 1 --losses ce > %t/ce.json
// RUN: nn-train %S/Inputs/segments-small.mlir --synthetic segments --steps 1 --seed 3 --json --batch-size 4 --dev-batches 1 --losses ce=0.5 > %t/ce-half.json
// RUN: %python -c "import json, sys; a, b = (json.loads(open(p).readline()) for p in sys.argv[1:]); assert 'ctc' in a['losses'], a; r = b['grad_norm'] / a['grad_norm']; assert abs(r - 0.5) < 1e-5, r; print('half the gradient')" %t/ce.json %t/ce-half.json | FileCheck %s --check-prefix=LOSSES
// LOSSES: half the gradient
// RUN: not nn-train %S/Inputs/segments-small.mlir --synthetic segments --steps 1 --losses ce=-1 2>&1 | FileCheck %s --check-prefix=LOSSES-NEGATIVE
// LOSSES-NEGATIVE: nn-train: --losses: the scale of 'ce' must be a finite number >= 0, got '-1'
// RUN: not nn-train %S/Inputs/segments-small.mlir --synthetic segments --steps 1 --losses ce,ce 2>&1 | FileCheck %s --check-prefix=LOSSES-TWICE
// LOSSES-TWICE: nn-train: --losses: 'ce' is named twice
// RUN: not nn-train %S/Inputs/segments-small.mlir --synthetic segments --steps 1 --losses nosuch 2>&1 | FileCheck %s --check-prefix=LOSSES-UNKNOWN
// LOSSES-UNKNOWN: nn-train: loss 'nosuch' is marked nowhere in the model (it marks ce, ctc, fer)
// RUN: not nn-train --stages %S/Inputs/stages/stages.json --losses ce 2>&1 | FileCheck %s --check-prefix=LOSSES-STAGES
// LOSSES-STAGES: nn-train: --stages takes every setting from the stage file; drop --losses

// Errors, before anything trains.
// RUN: not nn-train %S/Inputs/segments-small.mlir --steps 1 2>&1 | FileCheck %s --check-prefix=NO-DATA
// A FIFO (no writer) or /dev/zero as the model, the data or --init-from is
// refused at once by what it is.
// RUN: rm -f %t.fifo && mkfifo %t.fifo
// RUN: not timeout 60 nn-train %t.fifo --synthetic segments --steps 1 2>&1 | FileCheck %s --check-prefix=FIFO-MODEL
// FIFO-MODEL: nn-train: cannot read the model: '{{.+}}.fifo' is a FIFO, not a regular file
// RUN: not timeout 60 nn-train %S/Inputs/segments-small.mlir --data /dev/zero --steps 1 2>&1 | FileCheck %s --check-prefix=ZERO-DATA
// ZERO-DATA: nn-train: {{.*}}'/dev/zero' is a character device, not a regular file
// RUN: not timeout 60 nn-train %S/Inputs/segments-small.mlir --data %t.fifo --steps 1 2>&1 | FileCheck %s --check-prefix=FIFO-DATA
// FIFO-DATA: nn-train: {{.*}}'{{.+}}.fifo' is a FIFO, not a regular file
// RUN: not timeout 60 nn-train %S/Inputs/segments-small.mlir --synthetic segments --steps 1 --init-from /dev/zero 2>&1 | FileCheck %s --check-prefix=ZERO-INIT
// ZERO-INIT: nn-train: {{.*}}'/dev/zero' is a character device, not a regular file
// NO-DATA: nn-train: no data: give --data DIR (nn-data writes datasets) or --synthetic segments
// RUN: not nn-train %S/Inputs/segments-small.mlir --synthetic words --steps 1 2>&1 | FileCheck %s --check-prefix=TASK
// TASK: nn-train: unknown synthetic task 'words' (expected segments)
// RUN: not nn-train %S/Inputs/segments-small.mlir --synthetic segments --lr cosine:peak=-1 2>&1 | FileCheck %s --check-prefix=LR
// LR: nn-train: --lr:
// RUN: not nn-train %S/Inputs/segments-small.mlir --synthetic segments --optimizer lion 2>&1 | FileCheck %s --check-prefix=OPTIMIZER
// OPTIMIZER: nn-train: for the --optimizer option: unknown optimizer 'lion' (expected sgd, adam or adamw)
// RUN: not nn-train %s --synthetic segments --steps 1 2>&1 | FileCheck %s --check-prefix=INPUTS
// INPUTS: nn-train: input 'targets' of graph @other is not one the segment task fills (features, frame_labels, labels)
// RUN: not nn-train %S/Inputs/segments-small.mlir --synthetic segments --steps 1 --resume %t/nothing-here 2>&1 | FileCheck %s --check-prefix=RESUME
// RUN: not nn-train %S/Inputs/segments-small.mlir --synthetic segments --steps 1 --resume %t/ckpt/step-00000002.npz --init-from %t/missing.npz 2>&1 | FileCheck %s --check-prefix=INIT
// RESUME: nn-train: {{.*}}nothing-here
// INIT: nn-train: {{.*}}missing.npz

nn.parameter @w : !nn.tensor<[4, 3], f32>
nn.graph @other(%features: !nn.tensor<[B, T, 3], f32>, %targets: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[4, 3], f32>
  %l = nn.linear %features, %w : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>
  %ce = nn.cross_entropy %l, %targets from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}
