// RUN: nn-opt %s --nn-save-attention-stats | FileCheck %s
// RUN: nn-opt %s --pass-pipeline='builtin.module(nn-optimize{grads=true graph=trained})' | FileCheck %s --check-prefix=PIPELINE
// RUN: nn-opt %s --pass-pipeline='builtin.module(nn-optimize{grads=true graph=trained save-attention-stats=false})' | FileCheck %s --check-prefix=RECOMPUTE

// Two gradients of one attention share its stats ([B, T, H]: one log
// normalizer per query and head); a gradient whose attributes differ from
// every forward's (here the mask) and one whose forward has other operands
// keep recomputing.
// CHECK-LABEL: nn.graph @shared
// CHECK: %[[Y:.+]], %[[STATS:.+]] = nn.attention_with_stats %q, %k, %v heads 2 causal : {{.+}} -> !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 2], f32>
// CHECK-NOT: nn.attention %q, %k, %v heads 2 causal
// CHECK: nn.attention_grad %dy, %q, %k, %v saved %[[Y]], %[[STATS]] heads 2 causal :
// CHECK: nn.attention_grad %dz, %q, %k, %v saved %[[Y]], %[[STATS]] heads 2 causal :
// CHECK: nn.attention_grad %dy, %q, %k, %v heads 2 :
// CHECK: nn.attention_grad %dy, %q, %q, %v heads 2 causal :
// CHECK: nn.return %[[Y]]
nn.graph @shared(%q: !nn.tensor<[B, T, 8], f32>, %k: !nn.tensor<[B, T, 8], f32>, %v: !nn.tensor<[B, T, 6], f32>, %dy: !nn.tensor<[B, T, 6], f32>, %dz: !nn.tensor<[B, T, 6], f32>)
    -> (!nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>) dims [B: batch, T: seq(B)] {
  %y = nn.attention %q, %k, %v heads 2 causal : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
  %dq1, %dk1, %dv1 = nn.attention_grad %dy, %q, %k, %v heads 2 causal : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
  %dq2, %dk2, %dv2 = nn.attention_grad %dz, %q, %k, %v heads 2 causal : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
  %dq3, %dk3, %dv3 = nn.attention_grad %dy, %q, %k, %v heads 2 : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
  %dq4, %dk4, %dv4 = nn.attention_grad %dy, %q, %q, %v heads 2 causal : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
  nn.return %y, %dq1, %dq2, %dq3, %dq4 : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>
}

// A gradient that states the default scale (1 / sqrt(4)) is of the
// forward that leaves it out.
// CHECK-LABEL: nn.graph @default_scale_stated
// CHECK: %[[Y:.+]], %[[STATS:.+]] = nn.attention_with_stats %q, %q, %q heads 2 :
// CHECK: nn.attention_grad %dy, %q, %q, %q saved %[[Y]], %[[STATS]] heads 2 scale 5.000000e-01 :
nn.graph @default_scale_stated(%q: !nn.tensor<[B, T, 8], f32>, %dy: !nn.tensor<[B, T, 8], f32>)
    -> (!nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>) dims [B: batch, T: seq(B)] {
  %y = nn.attention %q, %q, %q heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>
  %dq, %dk, %dv = nn.attention_grad %dy, %q, %q, %q heads 2 scale 0.5 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>
  nn.return %y, %dq : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>
}

// Packed frames keep packed stats, [N, H]; relative positions and the
// dropout seed are operands that must match too.
// CHECK-LABEL: nn.graph @packed_relative
// CHECK: %[[Y:.+]], %[[STATS:.+]] = nn.attention_with_stats %q, %q, %v relative %r, %p seed %s heads 4 dropout {{.+}} -> !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 4], f32>
// CHECK: nn.attention_grad %dy, %q, %q, %v relative %r, %p seed %s saved %[[Y]], %[[STATS]] heads 4 dropout
nn.graph @packed_relative(%q: !nn.tensor<[N, 8], f32>, %v: !nn.tensor<[N, 8], f32>, %r: !nn.tensor<[N, 8], f32>, %p: !nn.tensor<[5, 8], f32>, %s: !nn.tensor<[], i32>, %dy: !nn.tensor<[N, 8], f32>)
    -> (!nn.tensor<[N, 8], f32>, !nn.tensor<[N, 8], f32>) dims [B: batch, T: seq(B), N: packed(B, T)] {
  %y = nn.attention %q, %q, %v relative %r, %p seed %s heads 4 dropout 1.000000e-01 : !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 8], f32>, !nn.tensor<[5, 8], f32>, !nn.tensor<[], i32>
  %dq, %dk, %dv, %dr, %dp = nn.attention_grad %dy, %q, %q, %v relative %r, %p seed %s heads 4 dropout 1.000000e-01 : !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 8], f32>, !nn.tensor<[5, 8], f32>, !nn.tensor<[], i32>
  nn.return %y, %dq : !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 8], f32>
}

// Each gradient below differs from the graph's one forward in one thing
// alone (the seed, the table, the dropout rate, its key, the scale, the
// heads), or its forward comes after it: each keeps recomputing.
// CHECK-LABEL: nn.graph @one_difference
// CHECK-NOT: nn.attention_with_stats
// CHECK-NOT: saved
// CHECK-LABEL: nn.graph @forward_after
// CHECK-NOT: nn.attention_with_stats
// CHECK-NOT: saved
// CHECK-LABEL: nn.graph @trained
nn.graph @one_difference(%q: !nn.tensor<[B, T, 8], f32>, %dy: !nn.tensor<[B, T, 8], f32>, %r: !nn.tensor<[B, T, 8], f32>, %p: !nn.tensor<[5, 8], f32>, %p2: !nn.tensor<[5, 8], f32>, %s: !nn.tensor<[], i32>, %s2: !nn.tensor<[], i32>)
    -> !nn.tensor<[B, T, 8], f32> dims [B: batch, T: seq(B)] {
  %y = nn.attention %q, %q, %q relative %r, %p seed %s heads 2 scale 5.000000e-01 dropout 1.000000e-01 dropout_key 1 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[5, 8], f32>, !nn.tensor<[], i32>
  %g1:5 = nn.attention_grad %dy, %q, %q, %q relative %r, %p seed %s2 heads 2 scale 5.000000e-01 dropout 1.000000e-01 dropout_key 1 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[5, 8], f32>, !nn.tensor<[], i32>
  %g2:5 = nn.attention_grad %dy, %q, %q, %q relative %r, %p2 seed %s heads 2 scale 5.000000e-01 dropout 1.000000e-01 dropout_key 1 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[5, 8], f32>, !nn.tensor<[], i32>
  %g3:5 = nn.attention_grad %dy, %q, %q, %q relative %r, %p seed %s heads 2 scale 5.000000e-01 dropout 2.000000e-01 dropout_key 1 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[5, 8], f32>, !nn.tensor<[], i32>
  %g4:5 = nn.attention_grad %dy, %q, %q, %q relative %r, %p seed %s heads 2 scale 5.000000e-01 dropout 1.000000e-01 dropout_key 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[5, 8], f32>, !nn.tensor<[], i32>
  %g5:5 = nn.attention_grad %dy, %q, %q, %q relative %r, %p seed %s heads 2 scale 2.500000e-01 dropout 1.000000e-01 dropout_key 1 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[5, 8], f32>, !nn.tensor<[], i32>
  %g6:5 = nn.attention_grad %dy, %q, %q, %q relative %r, %p seed %s heads 4 scale 5.000000e-01 dropout 1.000000e-01 dropout_key 1 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[5, 8], f32>, !nn.tensor<[], i32>
  nn.return %y : !nn.tensor<[B, T, 8], f32>
}

nn.graph @forward_after(%q: !nn.tensor<[B, T, 8], f32>, %dy: !nn.tensor<[B, T, 8], f32>, %r: !nn.tensor<[B, T, 8], f32>, %p: !nn.tensor<[5, 8], f32>, %s: !nn.tensor<[], i32>)
    -> !nn.tensor<[B, T, 8], f32> dims [B: batch, T: seq(B)] {
  %g:5 = nn.attention_grad %dy, %q, %q, %q relative %r, %p seed %s heads 2 scale 5.000000e-01 dropout 1.000000e-01 dropout_key 1 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[5, 8], f32>, !nn.tensor<[], i32>
  %y = nn.attention %q, %q, %q relative %r, %p seed %s heads 2 scale 5.000000e-01 dropout 1.000000e-01 dropout_key 1 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[5, 8], f32>, !nn.tensor<[], i32>
  nn.return %y : !nn.tensor<[B, T, 8], f32>
}

// In the pipeline with gradients, the attention whose gradient
// nn-autodiff built keeps its stats, and save-attention-stats=false leaves
// the gradient recomputing them.
// PIPELINE-LABEL: nn.graph @trained
// PIPELINE: %[[Y:.+]], %[[STATS:.+]] = nn.attention_with_stats
// PIPELINE-NOT: nn.attention %
// PIPELINE: nn.attention_grad {{.+}} saved %[[Y]], %[[STATS]] heads 2
// RECOMPUTE-LABEL: nn.graph @trained
// RECOMPUTE: nn.attention %
// RECOMPUTE-NOT: saved
// RECOMPUTE: nn.attention_grad
// RECOMPUTE-NOT: saved
nn.parameter @w : !nn.tensor<[8, 8], f32>
nn.graph @trained(%x: !nn.tensor<[B, T, 8], f32>, %t: !nn.tensor<[B, T, 8], f32>) dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[8, 8], f32>
  %q = nn.linear %x, %w : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[8, 8], f32>
  %y = nn.attention %q, %q, %q heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>
  %e = nn.mse %y, %t : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>
  nn.mark_loss %e as "mse" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}
