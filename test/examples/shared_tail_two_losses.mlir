// Example (3) verifies: two frame-wise losses share the hidden layer.
// RUN: nn-opt %nn_src/examples/shared_tail_two_losses.mlir | FileCheck %s
// RUN: nn-opt %nn_src/examples/shared_tail_two_losses.mlir | nn-opt > /dev/null

// CHECK-LABEL: nn.graph @two_heads
// CHECK: %[[H:.+]] = nn.lstm forward
// CHECK: %[[Z:.+]] = nn.linear %[[H]]
// CHECK: %[[A:.+]] = nn.tanh %[[Z]]
// CHECK: nn.linear %[[A]]
// CHECK: nn.mark_loss %{{.+}} as "ce" normalize per_frame
// CHECK: nn.linear %[[A]]
// CHECK: nn.mark_loss %{{.+}} as "mse" normalize per_frame scale 2.500000e-01
