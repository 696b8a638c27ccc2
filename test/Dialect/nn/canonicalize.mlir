// nn folds: pack(unpack(p)) is p; scale by 1 and dropout with rate 0
// are their input; attention stats nothing reads are not computed.
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

// -----

// Once its gradient is gone, an attention with stats is a plain attention
// with every operand and attribute; stats still read stay.
// CHECK-LABEL: nn.graph @stats_unread
// CHECK: %[[A:.+]] = nn.attention %q, %q, %q relative %r, %p seed %s heads 2 scale 5.000000e-01 causal dropout 1.000000e-01 dropout_key 3 :
// CHECK: %[[C:.+]] = nn.attention %q, %q, %q heads 2 left_context 4 right_context 1 chunk_size 8 left_chunks 2 :
// CHECK: %[[B:.+]], %[[S:.+]] = nn.attention_with_stats %q, %q, %q heads 2 left_context 4 :
// CHECK: nn.return %[[A]], %[[C]], %[[B]], %[[S]]
nn.graph @stats_unread(%q: !nn.tensor<[B, T, 8], f32>, %r: !nn.tensor<[B, T, 8], f32>, %p: !nn.tensor<[5, 8], f32>, %s: !nn.tensor<[], i32>)
    -> (!nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 2], f32>) dims [B: batch, T: seq(B)] {
  %y, %ys = nn.attention_with_stats %q, %q, %q relative %r, %p seed %s heads 2 scale 5.000000e-01 causal dropout 1.000000e-01 dropout_key 3 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[5, 8], f32>, !nn.tensor<[], i32> -> !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 2], f32>
  %c, %cs = nn.attention_with_stats %q, %q, %q heads 2 left_context 4 right_context 1 chunk_size 8 left_chunks 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 2], f32>
  %z, %zs = nn.attention_with_stats %q, %q, %q heads 2 left_context 4 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 2], f32>
  nn.return %y, %c, %z, %zs : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 2], f32>
}

// -----

// A gradient that reads the stats dies with its uses; the stats then
// have no reader, and the forward is a plain attention again.
// CHECK-LABEL: nn.graph @gradient_dead
// CHECK-NOT: nn.attention_with_stats
// CHECK: %[[Y:.+]] = nn.attention %q, %q, %q heads 2 causal :
// CHECK-NOT: nn.attention_grad
// CHECK: nn.return %[[Y]]
nn.graph @gradient_dead(%q: !nn.tensor<[B, T, 8], f32>, %dy: !nn.tensor<[B, T, 8], f32>)
    -> !nn.tensor<[B, T, 8], f32> dims [B: batch, T: seq(B)] {
  %y, %ys = nn.attention_with_stats %q, %q, %q heads 2 causal : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 2], f32>
  %dq, %dk, %dv = nn.attention_grad %dy, %q, %q, %q saved %y, %ys heads 2 causal : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 2], f32>
  nn.return %y : !nn.tensor<[B, T, 8], f32>
}
