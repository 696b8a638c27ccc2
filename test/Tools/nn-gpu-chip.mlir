// --gpu-chip is checked against the processors LLVM's NVPTX backend knows
// (from sm_30 on: the kernels use warp shuffles) before anything is
// compiled: a chip it does not know is an error naming the chip and
// listing the valid ones, exit 1, where LLVM aborted ("Cannot select:
// intrinsic"). `not` fails on a crash, so these also check there is none.
// The check needs no CUDA toolkit; compiling for a valid chip does (and
// compiles only: nothing here runs on a GPU).
// RUN: not nn-run %s --compile-only --target cuda --gpu-chip sm_0 2>&1 | FileCheck %s --check-prefix=SM0 -DTOOL=nn-run
// RUN: not nn-run %s --target cuda --gpu-chip sm_abc 2>&1 | FileCheck %s --check-prefix=ABC -DTOOL=nn-run
// RUN: not nn-run %s --compile-only --target cuda --gpu-chip sm_21 2>&1 | FileCheck %s --check-prefix=SM21
// RUN: not nn-train %S/Inputs/segments-small.mlir --compile-only --target cuda --gpu-chip sm_0 2>&1 | FileCheck %s --check-prefix=SM0 -DTOOL=nn-train
// RUN: not nn-train %S/Inputs/segments-small.mlir --synthetic segments --steps 1 --batch-size 2 --target cuda --gpu-chip sm_abc 2>&1 | FileCheck %s --check-prefix=ABC -DTOOL=nn-train
// RUN: %if cuda-toolkit %{ nn-run %s --compile-only --target cuda --gpu-chip sm_90 | FileCheck %s --check-prefix=VALID %}
// RUN: %if cuda-toolkit %{ nn-run %s --compile-only --target cuda --gpu-chip sm_30 | FileCheck %s --check-prefix=VALID %}
// RUN: %if cuda-toolkit %{ nn-train %S/Inputs/segments-small.mlir --compile-only --target cuda --gpu-chip sm_90 | FileCheck %s --check-prefix=VALIDTRAIN %}

// SM0: [[TOOL]]: unknown GPU architecture 'sm_0': the cuda target compiles for sm_30, {{.*}}sm_80, {{.*}}sm_90{{.*}} (what LLVM's NVPTX backend knows, from sm_30 on: the kernels use warp shuffles)
// SM0-NOT: LLVM ERROR
// ABC: [[TOOL]]: unknown GPU architecture 'sm_abc': the cuda target compiles for sm_30,
// ABC-NOT: LLVM ERROR
// LLVM knows sm_21, but selects no warp shuffle for it.
// SM21: unknown GPU architecture 'sm_21': the cuda target compiles for sm_30,
// SM21-NOT: LLVM ERROR
// VALID: compiled @g for cuda: {{[1-9][0-9]*}} kernels
// VALIDTRAIN: compiled the train step of @am for cuda: {{[1-9][0-9]*}} kernels

nn.parameter @w : !nn.tensor<[5, 3], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[5, 3], f32>
  %z = nn.linear %x, %w : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[5, 3], f32>
  %ce = nn.cross_entropy %z, %y from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}
