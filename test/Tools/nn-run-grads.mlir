// nn-run --grads writes the gradient of the training objective per
// parameter (float32, keyed by name) and --outputs every graph result
// (output<i>, lengths.<dim>); both checked against numpy in float64, packed
// and padded. NaN fills the padded frames of x.
// REQUIRES: numpy
// RUN: %python %S/Inputs/make_npz.py %t
// RUN: nn-run %s --inputs %t/batch.npz --params %t/params.npz --grads %t/grads.npz --outputs %t/outputs.npz --json | FileCheck %s
// RUN: %python %S/Inputs/check_grads.py %t/batch.npz %t/params.npz %t/grads.npz %t/outputs.npz
// The archives, streamed to the file member by member, are valid zip files
// to Python's own reader (every member's CRC checked) and leave no partial
// file behind.
// RUN: %python -c "import sys, zipfile; [print(sorted(zipfile.ZipFile(f).namelist()), zipfile.ZipFile(f).testzip()) for f in sys.argv[1:]]" %t/grads.npz %t/outputs.npz | FileCheck %s --check-prefix=ZIP
// RUN: not ls %t/grads.npz.partial %t/outputs.npz.partial
// ZIP: ['out.b.npy', 'out.w.npy'] None
// ZIP-NEXT: ['lengths.T.npy', 'output0.npy'] None
// RUN: nn-run %s --no-pack --inputs %t/batch.npz --params %t/params.npz --grads %t/grads-padded.npz --outputs %t/outputs-padded.npz
// RUN: %python %S/Inputs/check_grads.py %t/batch.npz %t/params.npz %t/grads-padded.npz %t/outputs-padded.npz
// CHECK: "gradients": [{"name": "out.w", "l2_norm": {{[0-9.e+-]+}}}, {"name": "out.b", "l2_norm": {{[0-9.e+-]+}}}]

nn.parameter @"out.w" : !nn.tensor<[4, 3], f32>
nn.parameter @"out.b" : !nn.tensor<[4], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>)
    -> !nn.tensor<[B, T, 4], f32>
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @"out.w" : !nn.tensor<[4, 3], f32>
  %b = nn.param_ref @"out.b" : !nn.tensor<[4], f32>
  %z = nn.linear %x, %w, %b : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>, !nn.tensor<[4], f32>
  %ce = nn.cross_entropy %z, %y from logits label_smoothing 1.000000e-01 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return %z : !nn.tensor<[B, T, 4], f32>
}
