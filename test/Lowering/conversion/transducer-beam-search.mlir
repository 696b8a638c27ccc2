// RUN: nn-opt %s --split-input-file --nn-convert-to-linalg | FileCheck %s

// transducer_beam_search (TransducerDecodePatterns.cpp): the runtime sizes
// the workspace, which the IR allocates and the start call initializes;
// the predictor's first step runs on all B * beam slot rows; per frame
// (rna: one round) the joiner runs on all rows, log_softmax, then the
// runtime's step; the rows are gathered by parent and the predictor runs
// when any row appended a label. The finish call writes the N-best lists.
// CHECK-LABEL: func.func @rna
// CHECK: %[[BYTES:.+]] = call @nn_search_transducer_workspace_bytes_v1(
// CHECK: %[[WS:.+]] = memref.alloc(%{{.+}}) : memref<?xi8>
// CHECK: call @nn_transducer_beam_start_site0(%[[WS]],
// CHECK: call @pred(
// CHECK: scf.for
// CHECK:   call @joint(
// CHECK:   call @nn_transducer_beam_step_site0(%[[WS]],
// CHECK:   scf.if
// CHECK:     call @pred(
// CHECK: call @nn_transducer_beam_finish_site0(%[[WS]],
// CHECK-NOT: end_frame
// CHECK-LABEL: func.func private @nn_transducer_beam_step_site0
// CHECK: llvm.mlir.addressof @nn_transducer_beam_step_site0_origin
// CHECK: call @nn_search_transducer_step_v1(
nn.parameter @embed : !nn.tensor<[5, 4], f32>
nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>)
    -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  %e = nn.param_ref @embed : !nn.tensor<[5, 4], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[S], i32>, !nn.tensor<[5, 4], f32>
  %a = nn.add %x, %h : !nn.tensor<[S, 4], f32>
  %n = nn.tanh %a : !nn.tensor<[S, 4], f32>
  nn.return %n, %n : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.parameter @out : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %w = nn.param_ref @out : !nn.tensor<[5, 4], f32>
  %z = nn.linear %h, %w : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %z : !nn.tensor<[R, 5], f32>
}
nn.graph @rna(%enc: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>)
    dims [B: batch, T: seq(B), K: seq(B) computed, H: batch = flatten(B, K),
          Y: seq(H) computed] {
  %y, %s = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rna blank 0 start 0 beam 4
      : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
  nn.return %y, %s : !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
}

// -----

// rnnt: a round loop inside the frame loop, each round's rows stashed
// (tensor.insert_slice) for the frame's result set; after the rounds the
// end-of-frame call picks the next slots, gathered from the stash. The
// best-only form slices row 0 of the N-best lists.
// CHECK-LABEL: func.func @rnnt
// CHECK: scf.for
// CHECK:   scf.for
// CHECK:     scf.if
// CHECK:       tensor.insert_slice
// CHECK:       call @joint(
// CHECK:       call @nn_transducer_beam_step_site0(
// CHECK:   call @nn_transducer_beam_end_frame_site0(
// CHECK: call @nn_transducer_beam_finish_site0(
// CHECK: tensor.extract_slice
// CHECK-LABEL: func.func private @nn_transducer_beam_end_frame_site0
// CHECK: call @nn_search_transducer_end_frame_v1(
nn.parameter @embed : !nn.tensor<[5, 4], f32>
nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>)
    -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  %e = nn.param_ref @embed : !nn.tensor<[5, 4], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[S], i32>, !nn.tensor<[5, 4], f32>
  %a = nn.add %x, %h : !nn.tensor<[S, 4], f32>
  nn.return %a, %a : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.parameter @out : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %w = nn.param_ref @out : !nn.tensor<[5, 4], f32>
  %z = nn.linear %h, %w : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %z : !nn.tensor<[R, 5], f32>
}
nn.graph @rnnt(%enc: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed] {
  %y, %s = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 beam 2 max_symbols 3
      : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}
