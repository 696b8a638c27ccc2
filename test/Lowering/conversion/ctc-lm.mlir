// RUN: nn-opt %s --nn-convert-to-linalg | FileCheck %s

// ctc_beam_search with shallow fusion: the workspace sized by the runtime
// and started; the LM's first step on the start symbol and zero states on
// all B·beam rows, log-softmaxed; a loop over the padded frames in which a
// runtime step writes each slot's parent and appended label, the LM's
// output and state are gathered by parent, and the LM runs (once, on all
// rows) only when a slot appended a label, its rows taken where one was
// appended; then the N-best lists with the end scores.

// CHECK-LABEL: func.func @g
// CHECK-SAME: (%[[B:.+]]: index, %[[T:.+]]: index, %[[LEN:.+]]: tensor<?xi32>, %[[Z:.+]]: tensor<?x?x5xf32>, %[[EMBED:.+]]: tensor<5x4xf32>, %[[REC:.+]]: tensor<4x4xf32>, %[[OUT:.+]]: tensor<5x4xf32>)
// CHECK: %[[ROWS:.+]] = arith.muli %[[B]], %c3
// CHECK: %[[BYTES:.+]] = call @nn_search_ctc_workspace_bytes_v1(%{{.+}}, %c3_i32, %{{.+}}) : (i64, i32, i64) -> i64
// CHECK: %[[WS:.+]] = memref.alloc(%{{.+}}) : memref<?xi64>
// CHECK: call @nn_ctc_step_begin_site0(%[[WS]], %[[B]], %{{.+}})
// CHECK: %[[FIRST:.+]]:2 = call @lm(%[[ROWS]], %{{.+}}, %{{.+}}, %[[EMBED]], %[[REC]], %[[OUT]])
// CHECK: %[[LP:.+]] = linalg.generic {{.+}} ins(%[[FIRST]]#0, %{{.+}}, %{{.+}} :
// CHECK: %[[LOOP:.+]]:2 = scf.for %[[TI:.+]] = %{{.+}} to %[[T]] {{.+}} iter_args(%[[ROW:.+]] = %[[LP]], %[[STATE:.+]] = %[[FIRST]]#1) -> (tensor<?x5xf32>, tensor<?x4xf32>)
// CHECK:   %[[PARENTS:.+]] = memref.alloc(%[[ROWS]]) : memref<?xi32>
// CHECK:   %[[APPENDED:.+]] = memref.alloc(%[[ROWS]]) : memref<?xi32>
// CHECK:   %[[ROWBUF:.+]] = bufferization.to_memref %[[ROW]] read_only
// CHECK:   func.call @nn_ctc_step_site0(%{{.+}}, %{{.+}}, %[[WS]], %[[ROWBUF]], %[[PARENTS]], %[[APPENDED]], %{{.+}}, %[[TI]])
// CHECK:   %[[P:.+]] = bufferization.to_tensor %[[PARENTS]] restrict writable
// CHECK:   %[[A:.+]] = bufferization.to_tensor %[[APPENDED]] restrict writable
// CHECK:   %[[GROW:.+]] = linalg.generic {{.+}} outs(
// CHECK:     tensor.extract %[[P]]
// CHECK:     tensor.extract %[[ROW]]
// CHECK:   %[[GSTATE:.+]] = linalg.generic {{.+}} outs(
// CHECK:     tensor.extract %[[P]]
// CHECK:     tensor.extract %[[STATE]]
// CHECK:   scf.if %{{.+}} -> (tensor<?x5xf32>, tensor<?x4xf32>) {
// CHECK:     %[[IN:.+]] = linalg.generic {{.+}} ins(%[[A]] : tensor<?xi32>)
// CHECK:     %[[MASK:.+]] = linalg.generic {{.+}} ins(%[[A]] : tensor<?xi32>)
// CHECK:     %[[NEXT:.+]]:2 = func.call @lm(%[[ROWS]], %[[IN]], %[[GSTATE]], %[[EMBED]], %[[REC]], %[[OUT]])
// CHECK:     linalg.generic {{.+}} ins(%[[MASK]], %{{.+}}, %[[GROW]] :
// CHECK:     linalg.generic {{.+}} ins(%[[MASK]], %[[NEXT]]#1, %[[GSTATE]] :
// CHECK:   } else {
// CHECK:     scf.yield %[[GROW]], %[[GSTATE]]
// CHECK: %[[FINAL:.+]] = bufferization.to_memref %[[LOOP]]#0 read_only
// CHECK: call @nn_ctc_step_finish_site0(%{{.+}}, %{{.+}}, %[[WS]], %[[FINAL]],

// The step: the scores and search settings, then the length bonus 0.25,
// the LM rows (32-bit, their strides), the weight 0.5, the frame and the
// three step buffers; the finish passes the end class 0.
// CHECK-LABEL: func.func private @nn_ctc_step_site0
// CHECK-DAG: %[[BONUS:.+]] = arith.constant 2.500000e-01 : f64
// CHECK-DAG: %[[WEIGHT:.+]] = arith.constant 5.000000e-01 : f64
// CHECK: call @nn_search_ctc_step_v1(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c32_i32{{.*}}, %[[BONUS]], %{{.+}}, %c32_i32{{.*}}, %{{.+}}, %{{.+}}, %[[WEIGHT]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) : (!llvm.ptr, i64, i64, i64, i32, i64, i64, i64, i64, i32, i64, i64, i64, i32, i32, i32, i32, f64, f64, f64, i64, i32, i64, i64, f64, i64, i64, i64, i64) -> ()
// CHECK-LABEL: func.func private @nn_ctc_step_finish_site0
// CHECK: call @nn_search_ctc_finish_v1({{.+}}) : (!llvm.ptr, i64, i64, i64, i32, i64, i64, i64, i64, i32, i64, i64, i64, i32, i32, i32, i32, f64, f64, f64, i64, i32, i64, i64, f64, i32, i64, i64, i64, i64, i64, i64) -> ()

nn.parameter @embed : !nn.tensor<[5, 4], f32>
nn.parameter @rec : !nn.tensor<[4, 4], f32>
nn.parameter @out : !nn.tensor<[5, 4], f32>
nn.graph @lm(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>)
    -> (!nn.tensor<[S, 5], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  %e = nn.param_ref @embed : !nn.tensor<[5, 4], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[S], i32>, !nn.tensor<[5, 4], f32>
  %r = nn.param_ref @rec : !nn.tensor<[4, 4], f32>
  %hr = nn.linear %h, %r : !nn.tensor<[S, 4], f32>, !nn.tensor<[4, 4], f32>
  %a = nn.add %x, %hr : !nn.tensor<[S, 4], f32>
  %n = nn.tanh %a : !nn.tensor<[S, 4], f32>
  %w = nn.param_ref @out : !nn.tensor<[5, 4], f32>
  %z = nn.linear %n, %w : !nn.tensor<[S, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %z, %n : !nn.tensor<[S, 5], f32>, !nn.tensor<[S, 4], f32>
}
nn.graph @g(%z: !nn.tensor<[B, T, 5], f32>) -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed] {
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 3 merge sum lm @lm from logits weight 0.5 start 0 end 0 length_bonus 0.25
      : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}
