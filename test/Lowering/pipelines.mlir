// The registered pipelines, stage by stage and whole; the unfused tail's
// stages, then the fused one's (docs/loss-tail.md).
// RUN: nn-opt %s --pass-pipeline='builtin.module(nn-optimize)' | FileCheck %s --check-prefix=PACK
// RUN: nn-opt %s --pass-pipeline='builtin.module(nn-optimize{pack=false})' | FileCheck %s --check-prefix=NOPACK
// RUN: nn-opt %s --pass-pipeline='builtin.module(nn-optimize{fuse-loss-tail=false},nn-to-buffers)' | FileCheck %s --check-prefix=BUFFERS
// RUN: nn-opt %s --pass-pipeline='builtin.module(nn-cpu{fuse-loss-tail=false})' | FileCheck %s --check-prefix=CPU
// RUN: nn-opt %s --pass-pipeline='builtin.module(nn-cpu{blas=false})' | FileCheck %s --check-prefix=LOOPS
// RUN: nn-opt %s --pass-pipeline='builtin.module(nn-optimize,nn-to-buffers)' | FileCheck %s --check-prefix=FUSED
// RUN: nn-opt %s --pass-pipeline='builtin.module(nn-cpu)' | FileCheck %s --check-prefix=FUSEDCPU
// RUN: nn-opt %s --pass-pipeline='builtin.module(nn-cpu)' | FileCheck %s --check-prefix=THREADS
// RUN: nn-opt %s --pass-pipeline='builtin.module(nn-cpu{threads=false})' | FileCheck %s --check-prefix=NOTHREADS

// Threads: the outer loops of generated nests are OpenMP regions (outlined
// when the LLVM dialect is translated), or none with threads=false.
// THREADS: omp.parallel
// THREADS: omp.wsloop
// NOTHREADS-NOT: omp.

// By default the tail fuses: a loop over blocks of rows whose GEMM reads a
// block of the packed input (strided rows) and calls the GEMM library.
// FUSED-LABEL: func.func @tail
// FUSED: scf.for
// FUSED: linalg.matmul_transpose_b ins({{.+}} : memref<?x8xf32, strided<[8, 1], offset: ?>>, memref<6x8xf32>)
// FUSEDCPU: llvm.func @tail
// FUSEDCPU: llvm.call @nn_cpu_sgemm

// PACK: nn.pack
// PACK: nn.mark_loss {{.+}} : !nn.tensor<[N_T], f32>
// NOPACK-NOT: nn.pack
// NOPACK: nn.mark_loss {{.+}} : !nn.tensor<[B, T], f32>

// BUFFERS-LABEL: func.func @tail
// BUFFERS-SAME: (%{{.+}}: index, %{{.+}}: index, %{{.+}}: memref<?xi32>, %{{.+}}: memref<?x?x8xf32>, %{{.+}}: memref<?x?xi32>, %{{.+}}: memref<6x8xf32>) -> (memref<f64>, memref<f64>)
// BUFFERS-NOT: tensor.
// BUFFERS: linalg.matmul_transpose_b ins({{.+}} : memref<?x8xf32>, memref<6x8xf32>)

// f32 exp and log are polynomials (vectorizable), not libm calls:
// CPU-NOT: unrealized_conversion_cast
// CPU-NOT: memrefCopy
// CPU-NOT: llvm.intr.exp
// CPU-NOT: llvm.intr.log
// f32 GEMMs call the runtime's oneDNN sgemm (gemm-library=onednn).
// CPU: llvm.func @nn_cpu_sgemm
// CPU: llvm.func @tail
// CPU: llvm.call @nn_cpu_sgemm
// CPU: llvm.func @_mlir_ciface_tail

// BUFFERS: arith.addf {{.+}} fastmath<reassoc>
// LOOPS-NOT: cblas
// LOOPS: llvm.func @_mlir_ciface_tail

nn.parameter @w : !nn.tensor<[6, 8], f32>
nn.graph @tail(%h: !nn.tensor<[B, T, 8], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[6, 8], f32>
  %logits = nn.linear %h, %w : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[6, 8], f32>
  %lp = nn.log_softmax %logits : !nn.tensor<[B, T, 6], f32>
  %ce = nn.cross_entropy %lp, %y from log_probs : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}
