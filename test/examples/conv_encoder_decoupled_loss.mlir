// Example (2) verifies: the criterion graph calls the encoder graph and the
// call binds the encoder's derived dims to the criterion's.
// RUN: nn-opt %nn_src/examples/conv_encoder_decoupled_loss.mlir | FileCheck %s
// RUN: nn-opt %nn_src/examples/conv_encoder_decoupled_loss.mlir | nn-opt > /dev/null

// CHECK-LABEL: nn.graph @conv_encoder
// CHECK-SAME: dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T6: seq(B) = ceildiv(T2, 3)]
// CHECK: nn.conv1d %{{.+}} stride 2 : {{.+}} -> !nn.tensor<[B, T2, 256], f32>
// CHECK: nn.pool max %{{.+}} window 3 stride 3 : {{.+}} -> !nn.tensor<[B, T6, 256], f32>
// CHECK-LABEL: nn.graph @criterion
// CHECK: %[[LOGITS:.+]] = nn.call @conv_encoder(%{{.+}}) : (!nn.tensor<[Bc, Tc, 80], f32>) -> !nn.tensor<[Bc, Tc6, 128], f32>
// CHECK: %[[CE:.+]] = nn.cross_entropy %[[LOGITS]]
// CHECK: nn.mark_loss %[[CE]] as "ce" normalize per_frame : !nn.tensor<[Bc, Tc6], f32>
// CHECK: %[[CTC:.+]] = nn.ctc_loss %[[LOGITS]], %{{.+}} from logits blank 0 zero_infinity
// CHECK: nn.mark_loss %[[CTC]], %{{.+}} as "ctc" normalize custom
