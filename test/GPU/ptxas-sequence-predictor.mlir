// A transducer's prediction network written once, in the sequence form
// (embedding, dropout, two forward LSTMs, a projection), drives greedy
// decoding and beam search compiled for the GPU: its derived step graph's
// cell ops are kernels like any frame-wise op, and every kernel assembles
// with ptxas for sm_90. No GPU needed.
// REQUIRES: ptxas, cuda-toolkit
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-run %s --target=cuda --compile-only --emit-gpu-code=%t/a90 | FileCheck %s
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_90 %t/a90 | FileCheck %s --check-prefix=OK90
// CHECK: compiled @decode for cuda:
// The derived step graph @"predictor.step" names its kernels in PTX's
// alphabet.
// CHECK: kernel predictor_step_k{{[0-9]+}}_linear
// CHECK: kernel {{.*}}transducer_greedy_decode
// CHECK: kernel {{.*}}transducer_beam_search
// OK90: ptxas -arch=sm_90: {{[1-9][0-9]*}} kernel modules, 0 failed
nn.parameter @embed : !nn.tensor<[5, 3], f32>
nn.parameter @"l1.w_ih" : !nn.tensor<[16, 3], f32>
nn.parameter @"l1.w_hh" : !nn.tensor<[16, 4], f32>
nn.parameter @"l1.b" : !nn.tensor<[16], f32>
nn.parameter @"l2.w_ih" : !nn.tensor<[8, 4], f32>
nn.parameter @"l2.w_hh" : !nn.tensor<[8, 2], f32>
nn.parameter @"l2.b" : !nn.tensor<[8], f32>
nn.parameter @proj : !nn.tensor<[4, 2], f32>
nn.parameter @out : !nn.tensor<[5, 4], f32>
nn.graph @predictor(%y: !nn.tensor<[S, U], i32>) -> !nn.tensor<[S, U, 4], f32>
    dims [S: batch, U: seq(S)] {
  %e = nn.param_ref @embed : !nn.tensor<[5, 3], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[S, U], i32>, !nn.tensor<[5, 3], f32>
  %d = nn.dropout %x rate 0.1 : !nn.tensor<[S, U, 3], f32>
  %wi = nn.param_ref @"l1.w_ih" : !nn.tensor<[16, 3], f32>
  %wh = nn.param_ref @"l1.w_hh" : !nn.tensor<[16, 4], f32>
  %b = nn.param_ref @"l1.b" : !nn.tensor<[16], f32>
  %h1 = nn.lstm forward %d, %wi, %wh, %b : !nn.tensor<[S, U, 3], f32>, !nn.tensor<[16, 3], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  %wi2 = nn.param_ref @"l2.w_ih" : !nn.tensor<[8, 4], f32>
  %wh2 = nn.param_ref @"l2.w_hh" : !nn.tensor<[8, 2], f32>
  %b2 = nn.param_ref @"l2.b" : !nn.tensor<[8], f32>
  %h2 = nn.lstm forward %h1, %wi2, %wh2, %b2 : !nn.tensor<[S, U, 4], f32>, !nn.tensor<[8, 4], f32>, !nn.tensor<[8, 2], f32>, !nn.tensor<[8], f32>
  %p = nn.param_ref @proj : !nn.tensor<[4, 2], f32>
  %o = nn.linear %h2, %p : !nn.tensor<[S, U, 2], f32>, !nn.tensor<[4, 2], f32>
  nn.return %o : !nn.tensor<[S, U, 4], f32>
}
nn.graph @joiner(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %w = nn.param_ref @out : !nn.tensor<[5, 4], f32>
  %t = nn.tanh %h : !nn.tensor<[R, 4], f32>
  %z = nn.linear %t, %w : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %z : !nn.tensor<[R, 5], f32>
}
nn.graph @decode(%enc: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B, Z], i32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed, Z: seq(B) computed] {
  %y, %s = nn.transducer_greedy_decode %enc predictor @predictor joiner @joiner topology rnnt blank 0 start 0 max_symbols 2
      : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %z, %zs = nn.transducer_beam_search %enc predictor @predictor joiner @joiner topology rna blank 0 start 0 beam 2
      : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
  nn.return %y, %z : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, Z], i32>
}
