// Transducer beam search compiles for the GPU: the joiner's and the
// predictor's layers, the frame + prediction sums, log_softmax, the row
// gathers and selects are kernels; the frame and round loops are host
// loops, and the runtime's search steps (nn_search_transducer_*) read and
// write managed memory on the host. Every kernel assembles with ptxas for
// sm_90. No GPU needed.
// REQUIRES: ptxas, cuda-toolkit
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-run %s --target=cuda --compile-only --emit-gpu-code=%t/a90 | FileCheck %s
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_90 %t/a90 | FileCheck %s --check-prefix=OK90
// CHECK: compiled @g for cuda:
// CHECK: kernel {{.*}}transducer_beam_search
// OK90: ptxas -arch=sm_90: {{[1-9][0-9]*}} kernel modules, 0 failed
nn.parameter @embed : !nn.tensor<[5, 4], f32>
nn.parameter @wp : !nn.tensor<[4, 8], f32>
nn.parameter @bp : !nn.tensor<[4], f32>
nn.parameter @wj : !nn.tensor<[5, 4], f32>
nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>)
    -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  %e = nn.param_ref @embed : !nn.tensor<[5, 4], f32>
  %w = nn.param_ref @wp : !nn.tensor<[4, 8], f32>
  %b = nn.param_ref @bp : !nn.tensor<[4], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[S], i32>, !nn.tensor<[5, 4], f32>
  %c = nn.concat %x, %h : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
  %l = nn.linear %c, %w, %b : !nn.tensor<[S, 8], f32>, !nn.tensor<[4, 8], f32>, !nn.tensor<[4], f32>
  %n = nn.tanh %l : !nn.tensor<[S, 4], f32>
  nn.return %n, %n : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %w = nn.param_ref @wj : !nn.tensor<[5, 4], f32>
  %t = nn.tanh %h : !nn.tensor<[R, 4], f32>
  %z = nn.linear %t, %w : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %z : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), K: seq(B) computed, H: batch = flatten(B, K),
          Y: seq(H) computed, Z: seq(B) computed] {
  %y, %s = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 beam 4 max_symbols 3
      : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
  %z, %zs = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rna blank 2 start 0 beam 3
      : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s, %z, %zs : !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
}
