// Temporary artifacts live in a per-process $TMPDIR/nn-artifacts-XXXXXX
// directory that goes at exit, on success and on error; one a killed
// process left (its lock free) is reclaimed by the next compile, and a
// live-looking name that is not a directory of ours is left alone.
// RUN: rm -rf %t && mkdir -p %t/tmp/nn-artifacts-dead01 %t/keep
// RUN: echo x > %t/tmp/nn-artifacts-dead01/lock
// RUN: echo x > %t/tmp/nn-artifacts-dead01/nn-artifact-old.so
// RUN: ln -s %t/keep %t/tmp/nn-artifacts-link01
// RUN: echo x > %t/tmp/nn-artifact-unrelated.so
// RUN: env TMPDIR=%t/tmp nn-run %s --batch 2 --max-len 3 | FileCheck %s
// RUN: ls -A %t/tmp | FileCheck %s --check-prefix=LEFT
// RUN: not env TMPDIR=%t/tmp nn-run %s --dim-len U=1:3 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: env TMPDIR=%t/tmp nn-run %s --batch 2 --emit-artifact %t/kept.so > /dev/null
// RUN: ls -A %t/tmp | FileCheck %s --check-prefix=LEFT
// RUN: ls %t/kept.so

// CHECK: loss ce =
// ERR: --dim-len names 'U'
// LEFT-NOT: nn-artifacts-dead01
// LEFT-NOT: nn-init-
// LEFT: nn-artifact-unrelated.so
// LEFT-NEXT: nn-artifacts-link01
// LEFT-NOT: {{.}}

nn.parameter @w : !nn.tensor<[5, 3], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[5, 3], f32>
  %z = nn.linear %x, %w : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[5, 3], f32>
  %ce = nn.cross_entropy %z, %y from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}
