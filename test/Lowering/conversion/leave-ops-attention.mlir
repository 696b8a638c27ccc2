// RUN: nn-opt %s --nn-convert-to-linalg="leave-ops=nn.attention_grad" --verify-diagnostics
// RUN: nn-opt %s --nn-convert-to-linalg="leave-ops=nn.attention_grad,nn.attention_with_stats" | FileCheck %s

// An attention gradient that reads saved stats verifies only with the
// nn.attention_with_stats that made them: left alone, it is an error at
// the gradient (a lowered forward would hand it casts); left with its
// forward, both stay and meet the lowered IR through casts.
// CHECK-LABEL: func.func @saved
// CHECK: %[[Y:.+]], %[[S:.+]] = nn.attention_with_stats
// CHECK: nn.attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} saved %[[Y]], %[[S]] heads 2 causal
// CHECK: return
nn.graph @saved(%q: !nn.tensor<[B, T, 8], f32>, %dy: !nn.tensor<[B, T, 8], f32>)
    -> (!nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>) dims [B: batch, T: seq(B)] {
  %y, %ys = nn.attention_with_stats %q, %q, %q heads 2 causal : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 2], f32>
  // expected-error @+1 {{leave-ops: this 'nn.attention_grad' reads the saved output of an 'nn.attention_with_stats' that is converted: leave both, or neither}}
  %dq, %dk, %dv = nn.attention_grad %dy, %q, %q, %q saved %y, %ys heads 2 causal : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 2], f32>
  nn.return %y, %dq : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>
}
