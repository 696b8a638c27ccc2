// RUN: nn-opt %s --mlir-print-op-generic | FileCheck %s

// The result types the custom forms no longer spell, as inferred from the
// operands (printed in generic form, which spells every type).

// CHECK-LABEL: sym_name = "inferred"
nn.graph @inferred(%x: !nn.tensor<[B, T, 8], f32>, %w: !nn.tensor<[5, 8], f32>,
                   %ids: !nn.tensor<[B, T], i32>, %table: !nn.tensor<[30, 6], f32>,
                   %wi: !nn.tensor<[2, 12, 8], f32>, %wh: !nn.tensor<[2, 12, 3], f32>,
                   %b: !nn.tensor<[2, 12], f32>, %g: !nn.tensor<[8], f32>,
                   %y: !nn.tensor<[B, T], i32>, %l: !nn.tensor<[B, U], i32>,
                   %p: !nn.tensor<[N, 8], f32>)
    dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // CHECK: "nn.linear"{{.+}} -> !nn.tensor<[B, T, 5], f32>
  %lin = nn.linear %x, %w : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[5, 8], f32>
  // CHECK: "nn.linear"{{.+}} -> !nn.tensor<[N, 5], f32>
  %plin = nn.linear %p, %w : !nn.tensor<[N, 8], f32>, !nn.tensor<[5, 8], f32>
  // CHECK: "nn.concat"{{.+}} -> !nn.tensor<[B, T, 13], f32>
  %cat = nn.concat %x, %lin : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 5], f32>
  // CHECK: "nn.embedding"{{.+}} -> !nn.tensor<[B, T, 6], f32>
  %emb = nn.embedding %ids, %table : !nn.tensor<[B, T], i32>, !nn.tensor<[30, 6], f32>
  // CHECK: "nn.lstm"{{.+}} -> !nn.tensor<[B, T, 6], f32>
  %bi = nn.lstm bidirectional %x, %wi, %wh, %b : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[2, 12, 8], f32>, !nn.tensor<[2, 12, 3], f32>, !nn.tensor<[2, 12], f32>
  // CHECK: "nn.layer_norm"{{.+}} -> !nn.tensor<[B, T, 8], f32>
  %ln = nn.layer_norm %x, %g, %g : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[8], f32>, !nn.tensor<[8], f32>
  // CHECK: "nn.reduce"{{.+}} -> !nn.tensor<[B, 8], f32>
  %r = nn.reduce max %x over 1 : !nn.tensor<[B, T, 8], f32>
  // CHECK: "nn.cross_entropy"{{.+}} -> !nn.tensor<[B, T], f32>
  %ce = nn.cross_entropy %lin, %y from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  // CHECK: "nn.mse"{{.+}} -> !nn.tensor<[B, T], f32>
  %mse = nn.mse %x, %ln : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>
  // CHECK: "nn.ctc_loss"{{.+}} -> !nn.tensor<[B], f32>
  %ctc = nn.ctc_loss %lin, %l from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  nn.return
}
