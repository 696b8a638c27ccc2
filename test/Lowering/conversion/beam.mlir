// RUN: nn-opt %s --split-input-file --nn-convert-to-linalg | FileCheck %s

// The beam ops (PackPatterns.cpp) and the dims of a flattened batch
// (deriveBoundDims, LinalgBuilder.cpp).

// H = flatten(B, K) at entry: the offsets (exclusive prefix sum of K's
// lengths, whose total is H's size) and each entry's owner; TH = T lifted
// reads T's length of the owner. flatten_beam and unflatten_beam copy each
// sequence's first len_K(b) rows to or from its offset (unflatten into
// zeros); repeat_beam gathers through the owners; sum_beam adds the
// len_K(b) entries from b's offset.
// CHECK-LABEL: func.func @beam_layout
// CHECK-SAME: (%[[B:.+]]: index, %[[T:.+]]: index, %[[TLEN:.+]]: tensor<?xi32>, %{{.+}}: index, %[[KLEN:.+]]: tensor<?xi32>, %[[X:.+]]: tensor<?x?x2xf32>, %[[Z:.+]]: tensor<?x?x2xf32>)
// CHECK: %[[OFFSETS:.+]]:2 = scf.for %[[I:.+]] = %{{.+}} to %[[B]] {{.+}} -> (tensor<?xi32>, index)
// CHECK:   tensor.insert
// CHECK:   tensor.extract %[[KLEN]][%[[I]]]
// CHECK: %[[OWNER:.+]]:2 = scf.for {{.+}} to %[[B]]
// CHECK:   scf.for
// CHECK:     tensor.insert
// CHECK: linalg.generic {{.+}} ins(%[[OWNER]]#0 : tensor<?xi32>)
// CHECK:   tensor.extract %[[TLEN]]
// CHECK: %[[FLAT:.+]]:2 = scf.for {{.+}} to %[[B]]
// CHECK:   tensor.extract_slice %[[X]]
// CHECK:   tensor.insert_slice {{.+}} : tensor<?x2xf32> into tensor<?x2xf32>
// CHECK: linalg.fill
// CHECK: %[[UNFLAT:.+]]:2 = scf.for {{.+}} to %[[B]]
// CHECK:   tensor.extract_slice %[[FLAT]]#0
// CHECK:   tensor.insert_slice {{.+}} : tensor<?x2xf32> into tensor<?x?x2xf32>
// CHECK: %[[REP:.+]] = linalg.generic {{.+}} ins(%[[OWNER]]#0 : tensor<?xi32>)
// CHECK:   tensor.extract %[[Z]]
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[OFFSETS]]#0, %[[KLEN]] : tensor<?xi32>, tensor<?xi32>)
// CHECK:   scf.for
// CHECK:     tensor.extract %[[REP]]
// CHECK:     arith.addf
// CHECK: return %[[UNFLAT]]#0, %[[SUM]]
nn.graph @beam_layout(%x: !nn.tensor<[B, K, 2], f32>, %z: !nn.tensor<[B, T, 2], f32>)
    -> (!nn.tensor<[B, K, 2], f32>, !nn.tensor<[B, T, 2], f32>)
    dims [B: batch, T: seq(B), K: seq(B), H: batch = flatten(B, K), TH: seq(H) = T] {
  %f = nn.flatten_beam %x : !nn.tensor<[B, K, 2], f32> -> !nn.tensor<[H, 2], f32>
  %u = nn.unflatten_beam %f : !nn.tensor<[H, 2], f32> -> !nn.tensor<[B, K, 2], f32>
  %r = nn.repeat_beam %z : !nn.tensor<[B, T, 2], f32> -> !nn.tensor<[H, TH, 2], f32>
  %s = nn.sum_beam %r : !nn.tensor<[H, TH, 2], f32> -> !nn.tensor<[B, T, 2], f32>
  nn.return %u, %s : !nn.tensor<[B, K, 2], f32>, !nn.tensor<[B, T, 2], f32>
}

// -----

// An N-best search: K's lengths are the runtime's counts, H follows where
// the search binds them, Y's lengths are gathered per entry from the
// [B, beam] lengths, and the results are sliced to the longest list and
// hypothesis. Both lengths are returned after the results.
// CHECK-LABEL: func.func @nbest
// CHECK: call @nn_ctc_prefix_search_site0
// CHECK: %[[COUNTS:.+]] = bufferization.to_tensor %{{.+}} : memref<?xi32>
// CHECK: %[[KPAD:.+]] = scf.for {{.+}} -> (index)
// CHECK:   tensor.extract %[[COUNTS]]
// CHECK: %[[YLEN:.+]] = linalg.generic
// CHECK: %[[YPAD:.+]] = scf.for {{.+}} -> (index)
// CHECK: %[[LABELS:.+]] = tensor.extract_slice %{{.+}}[0, 0, 0] [%{{.+}}, %[[KPAD]], %[[YPAD]]] [1, 1, 1]
// CHECK: %[[SCORES:.+]] = tensor.extract_slice %{{.+}}[0, 0] [%{{.+}}, %[[KPAD]]] [1, 1]
// CHECK: return %[[LABELS]], %[[SCORES]], %[[COUNTS]], %[[YLEN]] : tensor<?x?x?xi32>, tensor<?x?xf32>, tensor<?xi32>, tensor<?xi32>
nn.graph @nbest(%z: !nn.tensor<[B, T, 5], f32>)
    -> (!nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>)
    dims [B: batch, T: seq(B), K: seq(B) computed, H: batch = flatten(B, K), Y: seq(H) computed] {
  %h, %s = nn.ctc_beam_search %z from logits blank 0 beam 4 merge sum
      : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
  nn.return %h, %s : !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
}
