// nn-train's rules for checkpoint directories, counters and settings:
// nothing a user saved is deleted, and no setting trains silently wrong.
// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t

// A run saves into an empty directory; a second run that does not resume
// from it refuses to write there (its retention would delete the first
// run's checkpoints, and a later --resume would continue the wrong run).
// RUN: nn-train %s --synthetic segments --steps 2 --epoch-steps 2 --dev-batches 1 --batch-size 2 --save %t/first --keep 1 --json > /dev/null
// RUN: not nn-train %s --synthetic segments --steps 1 --dev-batches 1 --batch-size 2 --save %t/first 2>&1 | FileCheck %s --check-prefix=FOREIGN
// FOREIGN: nn-train: --save '{{.+}}first' holds checkpoints of another run (step-00000002.npz): --resume {{.+}}first continues that run; or save to another directory
// RUN: ls %t/first | FileCheck %s --check-prefix=KEPT
// KEPT: step-00000002.npz

// Retention and --resume order checkpoints by their batch count as a
// number: past 10^8 batches the names stop sorting as strings
// (step-99999999 after step-100000000). A checkpoint at batch 99999999,
// resumed for one batch with --keep 1, leaves the newer one only.
// RUN: mkdir -p %t/late
// RUN: %python -c "import numpy as np, sys; z = dict(np.load(sys.argv[1])); z['nn.train.step'] = np.int64(99999999); z['nn.train.batches'] = np.int64(99999999); np.savez(sys.argv[2], **z)" %t/first/step-00000002.npz %t/late/step-99999999.npz
// RUN: nn-train %s --synthetic segments --steps 100000000 --dev-batches 1 --batch-size 2 --resume %t/late --save %t/late --keep 1 --json > %t/late.json
// RUN: ls %t/late | FileCheck %s --check-prefix=NEWEST
// NEWEST-NOT: step-99999999.npz
// NEWEST: step-100000000.npz
// NEWEST-NOT: step-99999999.npz
// RUN: FileCheck %s --check-prefix=ONE-STEP < %t/late.json
// ONE-STEP: {"step": 100000000,

// --keep 0 would delete the last checkpoint too.
// RUN: not nn-train %s --synthetic segments --steps 1 --keep 0 --save %t/none 2>&1 | FileCheck %s --check-prefix=KEEP
// KEEP: nn-train: --keep 0 would delete every checkpoint, the last one too; keep at least 1

// --save at a regular file fails before the first step, not at the end.
// RUN: echo notes > %t/notes.txt
// RUN: not nn-train %s --synthetic segments --steps 1000000 --json --save %t/notes.txt > %t/file.json 2> %t/file.err
// RUN: FileCheck %s --check-prefix=FILE < %t/file.err
// FILE: nn-train: --save '{{.+}}notes.txt' exists and is not a directory
// RUN: count 0 < %t/file.json
// RUN: FileCheck %s --check-prefix=NOTES < %t/notes.txt
// NOTES: notes

// Non-finite updates are never applied nor saved: a learning rate near the
// f32 range times gradients of about 1000 (features of that noise)
// overflows the parameters while the losses and gradients are finite.
// Skipped steps are counted, the checkpoint stays finite, and a run that
// skipped every step is an error (it trained nothing).
// RUN: not nn-train %s --synthetic segments --noise 1000 --steps 3 --epoch-steps 3 --dev-batches 1 --batch-size 2 --optimizer sgd --lr constant:peak=3e38 --on-nonfinite skip --save %t/huge --json > %t/huge.json 2> %t/huge.err
// RUN: FileCheck %s --check-prefix=NOTHING < %t/huge.err
// NOTHING: nn-train: every one of the 3 batches of this run was skipped (a non-finite loss, gradient norm or update), so the parameters did not change; lower the learning rate or check the data
// RUN: %python -c "import numpy as np, sys; z = np.load(sys.argv[1]); print('finite', all(np.isfinite(z[k]).all() for k in z.files))" %t/huge/step-00000003.npz | FileCheck %s --check-prefix=FINITE
// FINITE: finite True
// RUN: FileCheck %s --check-prefix=SKIPPED < %t/huge.json
// SKIPPED: "applied": false
// RUN: not nn-train %s --synthetic segments --noise 1000 --steps 3 --dev-batches 1 --batch-size 2 --optimizer sgd --lr constant:peak=3e38 2>&1 | FileCheck %s --check-prefix=STOP
// STOP: nn-train: step 1: the training loss, the gradient norm or the updated parameters are not finite (objective {{[0-9.]+}}, grad_norm {{[0-9.]+}}, updated_norm inf) on batch 0 of the synthetic task (seed 0); stopping (--on-nonfinite=skip skips such batches)

// Settings a run cannot hold are errors before it starts.
// RUN: not nn-train %s --synthetic segments --lr constant:peak=1e39 2>&1 | FileCheck %s --check-prefix=RATE
// RATE: nn-train: --lr: learning-rate schedule 'constant:peak=1e39': peak must be a positive number at most 3.4e38 (the train step's learning rate is f32)
// RUN: not nn-train %s --synthetic segments --epochs 4294967295 2>&1 | FileCheck %s --check-prefix=EPOCHS
// EPOCHS: nn-train: --epochs 4294967295 of 100 batches each is outside [1, 2147483647] batches, what a run counts
// RUN: not nn-train %s --synthetic segments --steps 4294967295 2>&1 | FileCheck %s --check-prefix=STEPS
// STEPS: nn-train: --steps 4294967295 is outside [0, 2147483647], the batches a run counts
// RUN: not nn-train %s --synthetic segments --steps 1 --steps 1000000000 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: nn-train: --steps is given more than once; give it once
// RUN: not nn-train %s --synthetic segments --beta1 '' 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: nn-train: for the --beta1 option: '' is not a finite number
// RUN: not nn-train %s --synthetic segments --epsilon inf 2>&1 | FileCheck %s --check-prefix=INF
// INF: nn-train: for the --epsilon option: 'inf' is not a finite number
// RUN: not nn-train %s --synthetic segments --weight-decay 1e999 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: nn-train: for the --weight-decay option: '1e999' is not a finite number

// A parameter under a name checkpoints keep a counter under fails before
// training, not at the first save.
// RUN: sed -e 's/@"out.w"/@"nn.train.step"/g' %s > %t/reserved.mlir
// RUN: not nn-train %t/reserved.mlir --synthetic segments --steps 1000000 --json 2>&1 | FileCheck %s --check-prefix=RESERVED
// RESERVED: nn-train: graph @g has a parameter named 'nn.train.step', the key checkpoints keep their counters under; rename it

nn.parameter @"out.w" : !nn.tensor<[4, 3], f32>
nn.graph @g(%features: !nn.tensor<[B, T, 3], f32>, %frame_labels: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @"out.w" : !nn.tensor<[4, 3], f32>
  %l = nn.linear %features, %w : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>
  %ce = nn.cross_entropy %l, %frame_labels from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}
