// RUN: nn-opt %s --split-input-file --nn-dropout-training --verify-diagnostics | FileCheck %s
// RUN: nn-opt %s --split-input-file --nn-dropout-training --nn-pack-before-loss --nn-autodiff=graph=loss --verify-diagnostics | FileCheck %s --check-prefix=GRAD
// RUN: nn-opt %s --split-input-file --nn-dropout-training=batch-offset=true --verify-diagnostics | FileCheck %s --check-prefix=OFFSET

// Training mode: graphs holding a dropout that drops (themselves or
// through calls) get a last argument %dropout_seed, passed down their
// calls; each dropout reads it with a key unique in the module. A dropout
// of rate 0, and a graph without dropout, are left alone.

// CHECK-LABEL: nn.graph @model(%x: !nn.tensor<[Bm, T, 3], f32>, %dropout_seed: !nn.tensor<[], i32>)
// CHECK: nn.dropout %x seed %dropout_seed rate 1.000000e-01 :
// CHECK: nn.dropout %{{.+}} seed %dropout_seed rate 5.000000e-01 key 1 :
// CHECK: nn.dropout %{{.+}} rate 0.000000e+00 :
// CHECK-LABEL: nn.graph @plain(%x: !nn.tensor<[Bp, 3], f32>) -> !nn.tensor<[Bp, 3], f32>
// CHECK-LABEL: nn.graph @loss(%x: !nn.tensor<[B, U, 3], f32>, %y: !nn.tensor<[B, U], i32>, %dropout_seed: !nn.tensor<[], i32>)
// CHECK: nn.call @model(%x, %dropout_seed)
// CHECK: nn.dropout %{{.+}} seed %dropout_seed rate 2.500000e-01 key 2 :

// With batch-offset the seed also holds the index of the batch's first
// sequence in the whole batch (a data-parallel rank's part).
// OFFSET-LABEL: nn.graph @model(%x: !nn.tensor<[Bm, T, 3], f32>, %dropout_seed: !nn.tensor<[2], i32>)
// OFFSET: nn.dropout %x seed %dropout_seed rate 1.000000e-01 : !nn.tensor<[Bm, T, 3], f32>, !nn.tensor<[2], i32>
// OFFSET-LABEL: nn.graph @loss(
// OFFSET: nn.call @model(%x, %dropout_seed)

// The backward applies the same op, same key, to the gradient: the same
// mask. In the packed tail it runs on packed rows.
// GRAD-LABEL: nn.graph @loss
// GRAD: %[[P:.+]] = nn.pack %{{.+}} : !nn.tensor<[B, U, 3], f32>
// GRAD: nn.dropout %[[P]] seed %dropout_seed rate 2.500000e-01 key 2 : !nn.tensor<[N_U, 3], f32>, !nn.tensor<[], i32>
// GRAD: nn.cross_entropy_grad
// GRAD: nn.dropout %{{.+}} seed %dropout_seed rate 2.500000e-01 key 2 : !nn.tensor<[N_U, 3], f32>, !nn.tensor<[], i32>
// @model has no parameters and its input is data: no companion is built.
// GRAD-NOT: @model_vjp
nn.graph @model(%x: !nn.tensor<[Bm, T, 3], f32>) -> !nn.tensor<[Bm, T, 3], f32>
    dims [Bm: batch, T: seq(Bm)] {
  %a = nn.dropout %x rate 1.000000e-01 : !nn.tensor<[Bm, T, 3], f32>
  %b = nn.dropout %a rate 5.000000e-01 : !nn.tensor<[Bm, T, 3], f32>
  %c = nn.dropout %b rate 0.000000e+00 : !nn.tensor<[Bm, T, 3], f32>
  nn.return %c : !nn.tensor<[Bm, T, 3], f32>
}
nn.graph @plain(%x: !nn.tensor<[Bp, 3], f32>) -> !nn.tensor<[Bp, 3], f32>
    dims [Bp: batch] {
  nn.return %x : !nn.tensor<[Bp, 3], f32>
}
nn.graph @loss(%x: !nn.tensor<[B, U, 3], f32>, %y: !nn.tensor<[B, U], i32>)
    dims [B: batch, U: seq(B)] {
  %h = nn.call @model(%x) : (!nn.tensor<[B, U, 3], f32>) -> !nn.tensor<[B, U, 3], f32>
  %d = nn.dropout %h rate 2.500000e-01 : !nn.tensor<[B, U, 3], f32>
  %ce = nn.cross_entropy %d, %y from logits : !nn.tensor<[B, U, 3], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, U], f32>
  nn.return
}

// -----

// expected-error @+1 {{nn-dropout-training: graph @taken already has an argument named 'dropout_seed'}}
nn.graph @taken(%dropout_seed: !nn.tensor<[B, 3], f32>) -> !nn.tensor<[B, 3], f32>
    dims [B: batch] {
  %d = nn.dropout %dropout_seed rate 1.000000e-01 : !nn.tensor<[B, 3], f32>
  nn.return %d : !nn.tensor<[B, 3], f32>
}

// -----

// Attention's dropout of its weights draws from the seed too, with its own
// key; a dropout rate of 0 and an attention without dropout are left
// alone. The gradient redraws the weights with the same seed and key; the
// pass packs the attention with its seed, which has no positions.
// CHECK-LABEL: nn.graph @loss(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>, %dropout_seed: !nn.tensor<[], i32>)
// CHECK: nn.attention %x, %x, %x seed %dropout_seed heads 2 dropout 1.000000e-01 :
// CHECK: nn.attention %{{.+}} heads 2 dropout 0.000000e+00 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
// CHECK: nn.attention %{{.+}} heads 1 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
// CHECK: nn.dropout %{{.+}} seed %dropout_seed rate 2.000000e-01 key 1 :
// GRAD-LABEL: nn.graph @loss(%x: !nn.tensor<[B, T, 4], f32>
// GRAD: %[[P:.+]] = nn.pack %x
// GRAD: %[[A:.+]] = nn.attention %[[P]], %[[P]], %[[P]] seed %dropout_seed heads 2 dropout 1.000000e-01 : !nn.tensor<[N_T, 4], f32>, !nn.tensor<[N_T, 4], f32>, !nn.tensor<[N_T, 4], f32>, !nn.tensor<[], i32>
// GRAD: nn.attention_grad %{{.+}}, %[[P]], %[[P]], %[[P]] seed %dropout_seed heads 2 dropout 1.000000e-01 : !nn.tensor<[N_T, 4], f32>, !nn.tensor<[N_T, 4], f32>, !nn.tensor<[N_T, 4], f32>, !nn.tensor<[N_T, 4], f32>, !nn.tensor<[], i32>
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.graph @loss(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %a = nn.attention %x, %x, %x heads 2 dropout 0.1 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
  %b = nn.attention %a, %a, %a heads 2 dropout 0.0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
  %c = nn.attention %b, %b, %b heads 1 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
  %d = nn.dropout %c rate 0.2 : !nn.tensor<[B, T, 4], f32>
  %l = nn.linear %d, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}
