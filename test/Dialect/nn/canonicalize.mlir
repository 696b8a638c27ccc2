// nn folds: pack(unpack(p)) is p; scale by 1 and dropout with rate 0
// are their input.
// RUN: nn-opt %s --canonicalize --split-input-file | FileCheck %s

// CHECK-LABEL: nn.graph @pack_of_unpack
// CHECK-SAME: (%[[P:.+]]: !nn.tensor<[N, 4], f32>)
// CHECK-NOT: nn.unpack
// CHECK-NOT: nn.pack
// CHECK: nn.return %[[P]]
nn.graph @pack_of_unpack(%p: !nn.tensor<[N, 4], f32>) -> !nn.tensor<[N, 4], f32>
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %u = nn.unpack %p : !nn.tensor<[N, 4], f32> -> !nn.tensor<[B, T, 4], f32>
  %q = nn.pack %u : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[N, 4], f32>
  nn.return %q : !nn.tensor<[N, 4], f32>
}

// -----

// unpack(pack(x)) is not x: packing drops what padding held.
// CHECK-LABEL: nn.graph @unpack_of_pack
// CHECK: %[[Q:.+]] = nn.pack
// CHECK: %[[U:.+]] = nn.unpack %[[Q]]
// CHECK: nn.return %[[U]]
nn.graph @unpack_of_pack(%x: !nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T, 4], f32>
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %q = nn.pack %x : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[N, 4], f32>
  %u = nn.unpack %q : !nn.tensor<[N, 4], f32> -> !nn.tensor<[B, T, 4], f32>
  nn.return %u : !nn.tensor<[B, T, 4], f32>
}

// -----

// CHECK-LABEL: nn.graph @scale
// CHECK-SAME: (%[[X:.+]]: !nn.tensor<[B, T, 4], f32>)
// CHECK: %[[H:.+]] = nn.scale %[[X]] by 5.000000e-01
// CHECK: nn.return %[[X]], %[[H]]
nn.graph @scale(%x: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>)
    dims [B: batch, T: seq(B)] {
  %a = nn.scale %x by 1.0 : !nn.tensor<[B, T, 4], f32>
  %b = nn.scale %x by 0.5 : !nn.tensor<[B, T, 4], f32>
  nn.return %a, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
}

// -----

// CHECK-LABEL: nn.graph @dropout
// CHECK-SAME: (%[[X:.+]]: !nn.tensor<[B, T, 4], f32>)
// CHECK: %[[D:.+]] = nn.dropout %[[X]] rate 1.000000e-01
// CHECK: nn.return %[[X]], %[[D]]
nn.graph @dropout(%x: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>)
    dims [B: batch, T: seq(B)] {
  %a = nn.dropout %x rate 0.0 : !nn.tensor<[B, T, 4], f32>
  %b = nn.dropout %x rate 0.1 : !nn.tensor<[B, T, 4], f32>
  nn.return %a, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
}
