// Example (1) verifies and prints back the same text (round trip).
// RUN: nn-opt %nn_src/examples/blstm_ce_ctc.mlir | FileCheck %s
// RUN: nn-opt %nn_src/examples/blstm_ce_ctc.mlir | nn-opt | nn-opt --mlir-print-op-generic | nn-opt > /dev/null

// CHECK-LABEL: nn.graph @blstm_am
// CHECK-SAME: dims [B: batch, T: seq(B), U: seq(B)]
// CHECK: %[[H1:.+]] = nn.lstm bidirectional
// CHECK: %[[H2:.+]] = nn.lstm bidirectional
// CHECK: %[[LOGITS:.+]] = nn.linear %[[H2]]
// CHECK-SAME: : !nn.tensor<[B, T, 512], f32>
// CHECK: %[[CE:.+]] = nn.cross_entropy %[[LOGITS]], %{{.+}} from logits label_smoothing 1.000000e-01
// CHECK: nn.mark_loss %[[CE]] as "ce" normalize per_frame
// CHECK: %[[CTC_LOGITS:.+]] = nn.linear %[[H2]]
// CHECK: %[[CTC:.+]] = nn.ctc_loss %[[CTC_LOGITS]], %{{.+}} from logits blank 500
// CHECK: nn.mark_loss %[[CTC]] as "ctc" normalize per_sequence scale 5.000000e-01
// CHECK: nn.return %[[LOGITS]]
