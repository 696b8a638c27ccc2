// RUN: nn-opt %s --split-input-file --nn-convert-to-linalg | FileCheck %s

// Attention within each sequence (AttentionPatterns.cpp): per sequence, per
// head, blocks of 64 queries and 512 keys with an online softmax; the score
// GEMM multiplies a block of at most 64 queries by a block of at most 512
// keys, so no [Tq, Tk] matrix is ever formed.

// Each sequence reads its own rows; the key loop of a causal mask with a
// left context stops after the block's last query and starts at its
// first one's context. Two passes over a block's scores, in place: the
// mask with the row maximum, then the weights with their row sums.
// CHECK-LABEL: func.func @self
// CHECK: scf.forall (%[[B:.+]]) in
// CHECK:   %[[Q:.+]] = tensor.extract_slice %{{.+}}[%[[B]], 0, 0] [1, %[[TQ:.+]], 8] [1, 1, 1] : tensor<?x?x8xf32> to tensor<?x8xf32>
// CHECK:   scf.for %[[H:.+]] = %{{.+}} to %c2 step %c1
// CHECK:     scf.for %[[I:.+]] = %{{.+}} to %[[TQ]] step %c64
// CHECK:       %[[QB:.+]] = tensor.extract_slice %[[Q]][%[[I]], %{{.+}}] [%{{.+}}, 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
// CHECK:       %[[HI:.+]] = arith.minsi
// CHECK:       %[[LO:.+]] = arith.maxsi
// CHECK:       scf.for %[[J:.+]] = %[[LO]] to %[[HI]] step %c512
// CHECK:         %[[KN:.+]] = arith.minsi %c512
// CHECK:         %[[KB:.+]] = tensor.extract_slice %{{.+}}[%[[J]], %{{.+}}] [%[[KN]], 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
// CHECK:         %[[RAW:.+]] = linalg.matmul_transpose_b ins(%[[QB]], %[[KB]] : tensor<?x4xf32>, tensor<?x4xf32>) outs(%{{.+}} : tensor<?x?xf32>)
// CHECK:         %[[MASKED:.+]]:2 = linalg.generic {{.+}}iterator_types = ["parallel", "reduction"]} outs(%[[RAW]], %{{.+}} : tensor<?x?xf32>, tensor<?xf32>)
// CHECK:           arith.cmpi sge
// CHECK:           arith.select
// CHECK:           arith.maximumf
// CHECK:         linalg.generic {{.+}}iterator_types = ["parallel", "reduction"]} ins(%[[MASKED]]#1 : tensor<?xf32>) outs(%[[MASKED]]#0, %{{.+}} : tensor<?x?xf32>, tensor<?xf32>)
// CHECK:           math.exp
// CHECK:           arith.addf {{.+}} fastmath<reassoc>
// CHECK:         linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<?x?xf32>, tensor<?x3xf32>)
// CHECK:   scf.forall.in_parallel
// CHECK:     tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%[[B]], 0, 0] [1, %{{.+}}, 6] [1, 1, 1] : tensor<?x6xf32> into tensor<?x?x6xf32>
// CHECK-NOT: tensor<?x?x?xf32>
nn.graph @self(%q: !nn.tensor<[B, T, 8], f32>, %k: !nn.tensor<[B, T, 8], f32>, %v: !nn.tensor<[B, T, 6], f32>)
    -> !nn.tensor<[B, T, 6], f32> dims [B: batch, T: seq(B)] {
  %y = nn.attention %q, %k, %v heads 2 causal left_context 3 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
  nn.return %y : !nn.tensor<[B, T, 6], f32>
}

// -----

// Packed cross-attention: each sequence's rows start at its offset among
// the packed rows, queries and keys each of their own dim.
// CHECK-LABEL: func.func @cross_packed
// CHECK: scf.forall (%[[B:.+]]) in
// CHECK:   %[[QLEN:.+]] = arith.index_cast
// CHECK:   %[[QOFF:.+]] = arith.index_cast
// CHECK:   tensor.extract_slice %{{.+}}[%[[QOFF]], 0] [%[[QLEN]], 8] [1, 1] : tensor<?x8xf32> to tensor<?x8xf32>
// CHECK:   scf.forall.in_parallel
// CHECK:     tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%[[QOFF]], 0] [%[[QLEN]], 6] [1, 1] : tensor<?x6xf32> into tensor<?x6xf32>
nn.graph @cross_packed(%q: !nn.tensor<[M, 8], f32>, %k: !nn.tensor<[N, 8], f32>, %v: !nn.tensor<[N, 6], f32>)
    -> !nn.tensor<[M, 6], f32> dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T), M: packed(B, U)] {
  %y = nn.attention %q, %k, %v heads 2 : !nn.tensor<[M, 8], f32>, !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 6], f32>
  nn.return %y : !nn.tensor<[M, 6], f32>
}

// -----

// The gradient recomputes each query block's softmax (a first key loop),
// sums dy . out per query (reassociated), then forms the weights'
// gradients in a second one, the weights exp(scale s - lse) in one pass
// over the raw scores (mask and exponential fused): dv and dk accumulate
// A^T B contractions (loops reduction, parallel, parallel) into their
// rows, dq a GEMM into the block.
// CHECK-LABEL: func.func @grad
// CHECK: scf.forall (%[[B:.+]]) in
// CHECK:   scf.for
// CHECK:     scf.for
// CHECK:       scf.for
// CHECK:         linalg.matmul_transpose_b
// CHECK:       math.log
// CHECK:       arith.addf {{.+}} fastmath<reassoc>
// CHECK:       scf.for
// CHECK:         %[[RAW:.+]] = linalg.matmul_transpose_b
// CHECK:         linalg.generic {{.+}} ins(%[[RAW]], %{{.+}} : tensor<?x?xf32>, tensor<?xf32>)
// CHECK-NEXT:    ^bb0
// CHECK:           arith.mulf
// CHECK-NEXT:      arith.subf
// CHECK-NEXT:      math.exp
// CHECK:         linalg.generic {{.+}}iterator_types = ["reduction", "parallel", "parallel"]
// CHECK:         linalg.matmul_transpose_b
// CHECK:         linalg.matmul ins
// CHECK:         linalg.generic {{.+}}iterator_types = ["reduction", "parallel", "parallel"]
// CHECK:   scf.forall.in_parallel
// CHECK-COUNT-3: tensor.parallel_insert_slice
nn.graph @grad(%dy: !nn.tensor<[B, T, 6], f32>, %q: !nn.tensor<[B, T, 8], f32>, %k: !nn.tensor<[B, T, 8], f32>, %v: !nn.tensor<[B, T, 6], f32>)
    -> (!nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>) dims [B: batch, T: seq(B)] {
  %dq, %dk, %dv = nn.attention_grad %dy, %q, %k, %v heads 2 : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
  nn.return %dq, %dk, %dv : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
}

// -----

// Rotary embeddings: one generic over the packed rows; each row finds its
// sequence by bisection and its frame as the row less the sequence's
// first row, each feature reads its pair partner by index. The angle is
// formed in f64 (the frequency picked by the pair's bits) and reduced to
// [-pi, pi] before the f32 sin and cos.
// CHECK-LABEL: func.func @rotary
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel"]
// CHECK:   arith.subi
// CHECK:   arith.remui
// CHECK:   tensor.extract %{{.+}} : tensor<?x8xf32>
// CHECK:   arith.andi
// CHECK:   arith.select %{{.+}}, %{{.+}}, %{{.+}} : f64
// CHECK:   arith.sitofp %{{.+}} : i64 to f64
// CHECK:   math.floor %{{.+}} : f64
// CHECK:   %[[ARG:.+]] = arith.truncf %{{.+}} : f64 to f32
// CHECK:   math.sin %[[ARG]] : f32
// CHECK:   math.cos %[[ARG]] : f32
nn.graph @rotary(%x: !nn.tensor<[N, 8], f32>, %t: !nn.tensor<[B, T], f32>) -> !nn.tensor<[N, 8], f32>
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %y = nn.rotary %x heads 2 : !nn.tensor<[N, 8], f32>
  nn.return %y : !nn.tensor<[N, 8], f32>
}

// -----

// Relative positions: per block of keys, the block's position queries
// times the table rows of the block's distances (at most 64 + 512 - 1,
// clipped into the table), and the score generic gathers each pair's
// column by its distance (the relative shift); no [T, 2T - 1] matrix.
// CHECK-LABEL: func.func @relative
// CHECK-SAME: %[[TABLE:[a-z0-9]+]]: tensor<9x8xf32>
// CHECK: scf.forall
// CHECK:   scf.for
// CHECK:     scf.for
// CHECK:       scf.for
// CHECK:         arith.maxsi
// CHECK:         arith.minsi %{{.+}}, %c8
// CHECK:         %[[ROWS:.+]] = tensor.extract_slice %[[TABLE]][%{{.+}}, %{{.+}}] [%{{.+}}, 4] [1, 1] : tensor<9x8xf32> to tensor<?x4xf32>
// CHECK:         %[[POS:.+]] = linalg.matmul_transpose_b ins(%{{.+}}, %[[ROWS]] : tensor<?x4xf32>, tensor<?x4xf32>)
// CHECK:         linalg.matmul_transpose_b
// CHECK:         linalg.generic
// CHECK:           tensor.extract %[[POS]][%{{.+}}, %{{.+}}] : tensor<?x?xf32>
// CHECK:           arith.addf
nn.graph @relative(%q: !nn.tensor<[B, T, 8], f32>, %r: !nn.tensor<[B, T, 8], f32>, %p: !nn.tensor<[9, 8], f32>)
    -> !nn.tensor<[B, T, 8], f32> dims [B: batch, T: seq(B)] {
  %y = nn.attention %q, %q, %q relative %r, %p heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[9, 8], f32>
  nn.return %y : !nn.tensor<[B, T, 8], f32>
}

// -----

// The gradient scatters each score gradient into its distance's column
// (a scalar loop over the block: clipped distances share a column), then
// dr is that block times the table rows and the rows' gradient its
// transpose times the position queries. Each sequence writes its own
// part of the table's gradient, the rows of distances within the longest
// sequence (at most 2 T - 1 of the 9); a reduction sums them after the
// loop, so sequences never race, and the sum goes into a zero table.
// CHECK-LABEL: func.func @relative_grad
// CHECK: %[[FIRST:.+]] = arith.maxsi %c0{{.*}}, %{{.+}} : index
// CHECK: %[[LAST:.+]] = arith.minsi %c8{{.*}}, %{{.+}} : index
// CHECK: %[[USED:.+]] = arith.maxsi
// CHECK: scf.forall
// CHECK:   scf.for
// CHECK:     scf.for
// CHECK:       scf.for
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             tensor.extract
// CHECK:             tensor.extract
// CHECK:             arith.addf
// CHECK:             tensor.insert
// CHECK:         linalg.matmul
// CHECK:         linalg.generic {{.+}}iterator_types = ["reduction", "parallel", "parallel"]
// CHECK:   scf.forall.in_parallel
// CHECK:     tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%{{.+}}, 0, 0] [1, %[[USED]], 8] [1, 1, 1] : tensor<?x8xf32> into tensor<?x?x8xf32>
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}}iterator_types = ["reduction", "parallel", "parallel"]{{.+}}ins(%{{.+}} : tensor<?x?x8xf32>) outs(%{{.+}} : tensor<?x8xf32>)
// CHECK: %[[TABLE:.+]] = tensor.insert_slice %[[SUM]] into %{{.+}}[%[[FIRST]], 0] [%[[USED]], 8] [1, 1] : tensor<?x8xf32> into tensor<9x8xf32>
// CHECK: return %{{.+}}, %[[TABLE]]
nn.graph @relative_grad(%dy: !nn.tensor<[B, T, 8], f32>, %q: !nn.tensor<[B, T, 8], f32>, %r: !nn.tensor<[B, T, 8], f32>, %p: !nn.tensor<[9, 8], f32>)
    -> (!nn.tensor<[B, T, 8], f32>, !nn.tensor<[9, 8], f32>) dims [B: batch, T: seq(B)] {
  %dq, %dk, %dv, %dr, %dp = nn.attention_grad %dy, %q, %q, %q relative %r, %p heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[9, 8], f32>
  nn.return %dr, %dp : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[9, 8], f32>
}

// -----

// The table: sinusoids of the distances -4 ... 4 (a generic of sin and
// cos of angles reduced in f64, as rotary's), times the weight.
// CHECK-LABEL: func.func @relative_positions
// CHECK: linalg.generic
// CHECK:   math.floor %{{.+}} : f64
// CHECK:   %[[ARG:.+]] = arith.truncf %{{.+}} : f64 to f32
// CHECK-DAG:   math.sin %[[ARG]] : f32
// CHECK-DAG:   math.cos %[[ARG]] : f32
// CHECK:   arith.select
// CHECK: linalg.matmul_transpose_b ins(%{{.+}}, %{{.+}} : tensor<9x6xf32>, tensor<8x6xf32>) outs(%{{.+}} : tensor<9x8xf32>)
nn.graph @relative_positions(%w: !nn.tensor<[8, 6], f32>) -> !nn.tensor<[9, 8], f32> dims [B: batch] {
  %p = nn.relative_positions %w : !nn.tensor<[8, 6], f32> -> !nn.tensor<[9, 8], f32>
  nn.return %p : !nn.tensor<[9, 8], f32>
}

// -----

// Dropout of the weights in training: the seed and key are hashed once;
// per block, a generic hashes each weight's (sequence, head, query, key)
// and keeps it against the threshold (ceil(0.25 * 2^24) = 4194304) before
// the weighted sum; the row sums use every weight.
// CHECK-LABEL: func.func @dropout
// CHECK: %[[SEED:.+]] = tensor.extract %{{.+}}[] : tensor<i32>
// CHECK: scf.forall
// CHECK:   scf.for
// CHECK:     scf.for
// CHECK:       scf.for
// CHECK:         linalg.generic
// CHECK:           math.exp
// CHECK:         linalg.generic
// CHECK:           arith.xori
// CHECK:           arith.shrui %{{.+}}, %c8_i32
// CHECK:           arith.cmpi uge, %{{.+}}, %c4194304_i32
// CHECK:           arith.select
// CHECK:         linalg.matmul
nn.graph @dropout(%q: !nn.tensor<[B, T, 8], f32>, %seed: !nn.tensor<[], i32>)
    -> !nn.tensor<[B, T, 8], f32> dims [B: batch, T: seq(B)] {
  %y = nn.attention %q, %q, %q seed %seed heads 2 dropout 0.25 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[], i32>
  nn.return %y : !nn.tensor<[B, T, 8], f32>
}
