// The per-sequence recursions (viterbi_align, transducer_loss and its
// gradient, transducer_align) are scf.forall loops over the batch: after
// bufferization nn-parallel-loops makes each an outermost scf.parallel
// marked nn.sequences (threads on the CPU, whatever the work estimate),
// and without threads they become plain loops.
// RUN: nn-opt %s --pass-pipeline='builtin.module(nn-optimize{pack=false},nn-to-buffers,nn-parallel-loops)' | FileCheck %s
// RUN: nn-opt %s --pass-pipeline='builtin.module(nn-cpu{threads=false})' | FileCheck %s --check-prefix=NOTHREADS --implicit-check-not=omp.
// RUN: nn-opt %s --pass-pipeline='builtin.module(nn-optimize{pack=false},nn-to-buffers,nn-parallel-loops,nn-sequences-to-openmp)' | FileCheck %s --check-prefix=OMP

// CHECK-LABEL: func.func @viterbi
// CHECK-NOT: scf.forall
// CHECK: scf.parallel
// CHECK: } {nn.sequences}
// CHECK-LABEL: func.func @transducer
// CHECK-NOT: scf.forall
// CHECK-COUNT-3: } {nn.sequences}
// NOTHREADS: llvm.func @viterbi
// NOTHREADS: llvm.func @transducer
// With threads, each sequence's recursion over its frames is the body of
// an OpenMP loop over the sequences, which hands them out one at a time:
// OMP-LABEL: func.func @viterbi
// OMP: omp.wsloop schedule(dynamic)
// OMP-NEXT: omp.loop_nest (%[[SEQ:.+]]) : index
// OMP: memref.load %{{.+}}[%[[SEQ]]] : memref<?xi32>
// OMP: scf.for
// OMP-LABEL: func.func @transducer
// OMP-COUNT-3: omp.wsloop schedule(dynamic)

nn.graph @viterbi(%x: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, U], i32>) -> (!nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %a, %s = nn.viterbi_align %x, %y from log_probs topology ctc blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  nn.return %a, %s : !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
}

nn.graph @transducer(%g: !nn.tensor<[B], f32>, %j: !nn.tensor<[J, 4], f32>, %y: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B], f32>, !nn.tensor<[J, 4], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  %l = nn.transducer_loss %j, %y from logits topology rnnt blank 0 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32>
  %d = nn.transducer_loss_grad %g, %j, %y from logits topology rnnt blank 0 : !nn.tensor<[B], f32>, !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32>
  %a, %s = nn.transducer_align %j, %y from logits topology rna blank 0 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
  nn.return %l, %d, %a, %s : !nn.tensor<[B], f32>, !nn.tensor<[J, 4], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
}
