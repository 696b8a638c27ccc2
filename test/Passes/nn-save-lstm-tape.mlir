// RUN: nn-opt %s --nn-save-lstm-tape | FileCheck %s
// (In the pipeline: nn-save-lstm-tape-pipeline.mlir.)

// Two gradients of one lstm share its tape; an lstm_grad whose forward is
// not in the graph (its operands differ) keeps recomputing.
// CHECK-LABEL: nn.graph @shared
// CHECK: %{{.+}}, %[[TAPE:.+]] = nn.lstm_with_tape forward %x,
// CHECK-NOT: nn.lstm forward
// CHECK: nn.lstm_grad forward %dy, %x, {{.+}} tape %[[TAPE]] :
// CHECK: nn.lstm_grad forward %dz, %x, {{.+}} tape %[[TAPE]] :
// CHECK: nn.lstm_grad forward %dy, %dz, %wi, %wh, %b :
nn.graph @shared(%x: !nn.tensor<[B, T, 4], f32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>, %dy: !nn.tensor<[B, T, 4], f32>, %dz: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>) dims [B: batch, T: seq(B)] {
  %y = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  %dx1, %dwi1, %dwh1, %db1 = nn.lstm_grad forward %dy, %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  %dx2, %dwi2, %dwh2, %db2 = nn.lstm_grad forward %dz, %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  %dx3, %dwi3, %dwh3, %db3 = nn.lstm_grad forward %dy, %dz, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  nn.return %y, %dwi1, %dwi2, %dwi3 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>
}
