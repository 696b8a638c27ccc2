// The transducer ops (prepend_start, the packed and padded join and its
// gradient, on padded and on packed operands, RNN-T and RNA losses from
// logits and log-probs, and their gradients, the RNA and RNN-T alignments,
// the gathers along an RNN-T path and their gradients) compile
// for the GPU, and every kernel assembles with ptxas for sm_90 and sm_80.
// No GPU needed; nothing here has run on a GPU.
// REQUIRES: ptxas, cuda-toolkit
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-run %s --target=cuda --compile-only --emit-gpu-code=%t/a90 | FileCheck %s
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_90 %t/a90 | FileCheck %s --check-prefix=OK90
// RUN: nn-run %s --target=cuda --gpu-chip=sm_80 --compile-only --emit-gpu-code=%t/a80
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_80 %t/a80 | FileCheck %s --check-prefix=OK80
// CHECK: compiled @g for cuda:
// CHECK-DAG: kernel g_k{{[0-9]+}}_transducer_join
// CHECK-DAG: kernel g_k{{[0-9]+}}_transducer_loss_grad
// OK90: ptxas -arch=sm_90: {{[1-9][0-9]*}} kernel modules, 0 failed
// OK80: ptxas -arch=sm_80: {{[1-9][0-9]*}} kernel modules, 0 failed
nn.graph @g(%e: !nn.tensor<[B, T, 4], f32>, %p: !nn.tensor<[B, U1, 4], f32>, %l: !nn.tensor<[B, U], i32>, %g: !nn.tensor<[B], f32>)
    -> (!nn.tensor<[B, U1], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>, !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>,
        !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>, !nn.tensor<[B, A], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1), N_T: packed(B, T), N_U1: packed(B, U1), A: seq(B) computed] {
  %s = nn.prepend_start %l start 0 : !nn.tensor<[B, U], i32> -> !nn.tensor<[B, U1], i32>
  %j = nn.transducer_join %e, %p : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[J, 4], f32>
  %r = nn.transducer_loss %j, %l from logits topology rnnt blank 0 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32>
  %dj = nn.transducer_loss_grad %g, %j, %l from logits topology rnnt blank 0 : !nn.tensor<[B], f32>, !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32>
  %de, %dp = nn.transducer_join_grad %dj : !nn.tensor<[J, 4], f32> -> !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>
  %jd = nn.transducer_join %e, %p : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[B, T, U1, 4], f32>
  %lp = nn.log_softmax %jd : !nn.tensor<[B, T, U1, 4], f32>
  %a = nn.transducer_loss %lp, %l from log_probs topology rna blank 3 zero_infinity : !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32>
  %da = nn.transducer_loss_grad %g, %lp, %l from log_probs topology rna blank 3 zero_infinity : !nn.tensor<[B], f32>, !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32>
  %al, %as = nn.transducer_align %j, %l from logits topology rna blank 0 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
  %pe = nn.pack %e : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[N_T, 4], f32>
  %pp = nn.pack %p : !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[N_U1, 4], f32>
  %jp = nn.transducer_join %pe, %pp : !nn.tensor<[N_T, 4], f32>, !nn.tensor<[N_U1, 4], f32> -> !nn.tensor<[J, 4], f32>
  %djp = nn.transducer_loss_grad %g, %jp, %l from logits topology rnnt blank 0 : !nn.tensor<[B], f32>, !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32>
  %dpe, %dpp = nn.transducer_join_grad %djp : !nn.tensor<[J, 4], f32> -> !nn.tensor<[N_T, 4], f32>, !nn.tensor<[N_U1, 4], f32>
  %ude = nn.unpack %dpe : !nn.tensor<[N_T, 4], f32> -> !nn.tensor<[B, T, 4], f32>
  %udp = nn.unpack %dpp : !nn.tensor<[N_U1, 4], f32> -> !nn.tensor<[B, U1, 4], f32>
  %rl, %rs = nn.transducer_align %j, %l from logits topology rnnt blank 0 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, A], i32>, !nn.tensor<[B], f32>
  %fe = nn.gather_states %e, %rl blank 0 by_blanks : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, A], i32> -> !nn.tensor<[B, A, 4], f32>
  %fp = nn.gather_states %p, %rl blank 0 : !nn.tensor<[B, U1, 4], f32>, !nn.tensor<[B, A], i32> -> !nn.tensor<[B, A, 4], f32>
  %dfe = nn.gather_states_grad %fe, %rl blank 0 by_blanks : !nn.tensor<[B, A, 4], f32>, !nn.tensor<[B, A], i32> -> !nn.tensor<[B, T, 4], f32>
  %dfp = nn.gather_states_grad %fp, %rl blank 0 : !nn.tensor<[B, A, 4], f32>, !nn.tensor<[B, A], i32> -> !nn.tensor<[B, U1, 4], f32>
  nn.return %s, %r, %a, %de, %dp, %da, %al, %as, %ude, %udp, %rl, %rs, %dfe, %dfp : !nn.tensor<[B, U1], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>, !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>,
      !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>, !nn.tensor<[B, A], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>
}
