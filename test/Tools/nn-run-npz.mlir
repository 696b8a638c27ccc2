// Inputs and parameters from files numpy wrote (numpy.savez,
// numpy.savez_compressed and numpy.save, by whichever numpy is installed);
// the losses are checked against values computed by numpy itself.
// REQUIRES: numpy
// RUN: %python %S/Inputs/make_npz.py %t
// RUN: nn-run %s --inputs %t/batch.npz --params %t/params.npz --json > %t/out.json
// RUN: %python %S/Inputs/check_losses.py %t/out.json %t/expected.json
// RUN: nn-run %s --input x=%t/x.npy --input y=%t/y.npy --input lengths.T=%t/len.npy --param out.w=%t/w.npy --param out.b=%t/b.npy --json > %t/out-npy.json
// RUN: %python %S/Inputs/check_losses.py %t/out-npy.json %t/expected.json
// RUN: nn-run %s --inputs %t/compressed.npz --params %t/params.npz --json > %t/out-compressed.json
// RUN: %python %S/Inputs/check_losses.py %t/out-compressed.json %t/expected.json
// RUN: not nn-run %s --inputs %t/wrong.npz --params %t/params.npz 2>&1 | FileCheck %s --check-prefix=WRONG
// RUN: not nn-run %s --input x=%t/x.npy --input y=%t/y.npy --input lengths.T=%t/biglen.npy --params %t/params.npz 2>&1 | FileCheck %s --check-prefix=BIGLEN
// WRONG: nn-run: input 'x' has dtype f64, expected f32
// BIGLEN: nn-run: 'lengths.T' holds length 4294967296 for sequence 0, outside [0, 2147483647]

nn.parameter @"out.w" : !nn.tensor<[4, 3], f32>
nn.parameter @"out.b" : !nn.tensor<[4], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @"out.w" : !nn.tensor<[4, 3], f32>
  %b = nn.param_ref @"out.b" : !nn.tensor<[4], f32>
  %z = nn.linear %x, %w, %b : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>, !nn.tensor<[4], f32>
  %ce = nn.cross_entropy %z, %y from logits label_smoothing 1.000000e-01 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}
