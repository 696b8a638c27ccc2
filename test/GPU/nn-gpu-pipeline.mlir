// The GPU pipeline end to end at the IR level (no GPU needed): kernels as
// PTX (or cubin) in gpu.binary ops named after their nn op, the GEMM as a
// call of the runtime's cuBLAS entry point, host code in the LLVM dialect
// with no memref ops left. Buffers only kernels touch come from the
// artifact allocator (device memory); the one the host writes (the
// per-frame normalization) from mgpuMemAlloc (host-visible). The loss
// tail is left unfused here (ptxas-loss-tail.mlir compiles the fused one).
// RUN: nn-opt %s --nn-gpu="fuse-loss-tail=false" | FileCheck %s
// RUN: nn-opt %s --nn-optimize="fuse-loss-tail=false" --nn-to-buffers --nn-gpu-codegen | FileCheck %s
// RUN: nn-opt %s --nn-gpu="gpu-chip=sm_80 fuse-loss-tail=false" | FileCheck %s --check-prefix=SM80
// RUN: nn-opt %s --nn-gpu="blas=false fuse-loss-tail=false" | FileCheck %s --check-prefix=NOBLAS
// RUN: %if ptxas %{ nn-opt %s --nn-gpu="gpu-binary=cubin fuse-loss-tail=false" | FileCheck %s --check-prefix=CUBIN %}

nn.parameter @w : !nn.tensor<[6, 4], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[6, 4], f32>
  %z = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 4], f32>
  %ce = nn.cross_entropy %z, %y from logits : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}

// CHECK: module attributes {gpu.container_module, nn.host_visible_args = {g = array<i64: 2>}}
// CHECK-DAG: llvm.mlir.global internal constant @nn_gemm_origin_0("nn.linear at {{.*}}nn-gpu-pipeline.mlir:18:8\00")
// CHECK-DAG: llvm.func @nn_cuda_sgemm(!llvm.ptr, i32, i32, i32, i32, i32, i32, f32, i64, i32, i64, i32, f32, i64, i32)
// CHECK-LABEL: llvm.func @g(
// CHECK-NOT: memref.
// CHECK: llvm.call @nn_cuda_alloc
// CHECK: llvm.call @nn_cuda_sgemm
// CHECK: gpu.launch_func @g_k{{[0-9]+}}_cross_entropy::@g_k{{[0-9]+}}_cross_entropy
// CHECK: gpu.launch_func @g_k{{[0-9]+}}_mark_loss::@g_k{{[0-9]+}}_mark_loss
// CHECK: llvm.call @mgpuMemAlloc({{.*}}) : (i64, !llvm.ptr, i8) -> !llvm.ptr
// CHECK-NOT: memref.
// CHECK: gpu.binary @g_k0_pack [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, properties = {O = 3 : i32}, assembly = "{{.*}}.version 8.0\0A.target sm_90{{.*}}.visible .entry g_k0_pack(
// Rows of 6 classes are short: a loop per thread. The loss sum over all
// frames is a block reduction (warp shuffles).
// CHECK-NOT: shfl.sync
// CHECK: gpu.binary @g_k{{[0-9]+}}_mark_loss {{.*}}shfl.sync.bfly
// SM80: .target sm_80
// NOBLAS-NOT: nn_cuda_sgemm
// NOBLAS: gpu.binary @g_k{{[0-9]+}}_linear
// CUBIN: gpu.binary @g_k0_pack [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, bin = "
