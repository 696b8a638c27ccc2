// RUN: nn-opt %s --split-input-file --nn-autodiff | FileCheck %s
// RUN: nn-opt %s --split-input-file --nn-pack-before-loss --nn-autodiff --canonicalize | FileCheck %s --check-prefix=PACKED

// The objective's gradient: each trained loss is seeded (nn.loss_seed with
// its normalization from nn.loss_terms), the sweep asks each op for its
// VJP in reverse order, and each parameter's gradient is returned, named.

// CHECK-LABEL: nn.graph @tail
// CHECK-SAME: -> (!nn.tensor<[3, 4], f32> {nn.gradient = "w"}, !nn.tensor<[3], f32> {nn.gradient = "b"})
// CHECK: %[[CE:.+]] = nn.cross_entropy %[[L:[^,]+]], %[[Y:[^ ]+]] from logits
// CHECK: nn.mark_loss %[[CE]]
// CHECK: %{{.+}}, %[[INV:.+]] = nn.loss_terms %[[CE]] normalize per_frame
// CHECK: %[[SEED:.+]] = nn.loss_seed %[[CE]], %[[INV]] scale 2.000000e+00
// CHECK: %[[DL:.+]] = nn.cross_entropy_grad %[[SEED]], %[[L]], %[[Y]] from logits
// CHECK: %[[DH:.+]] = nn.linear_grad_input %[[DL]], %{{.+}}
// CHECK: %[[DW:.+]] = nn.linear_grad_weight %[[DL]], %[[H:[^ ]+]]
// CHECK: %[[DB:.+]] = nn.sum_positions %[[DL]]
// CHECK: nn.activation_grad tanh %[[DH]]
// CHECK: nn.return %[[DW]], %[[DB]]

// The packed tail's backward runs on packed rows; its gradient reaches the
// padded input through the VJP of pack, an unpack (zeros at padding),
// which canonicalization removes here as nothing uses it.
// PACKED-LABEL: nn.graph @tail
// PACKED: nn.loss_seed %{{.+}} : !nn.tensor<[N_T], f32>
// PACKED: nn.cross_entropy_grad {{.+}} : !nn.tensor<[N_T, 3], f32>, !nn.tensor<[N_T], i32>
// PACKED: nn.linear_grad_weight {{.+}} : !nn.tensor<[N_T, 3], f32>, !nn.tensor<[N_T, 4], f32>
// PACKED-NOT: nn.unpack
// PACKED: nn.return
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.parameter @b : !nn.tensor<[3], f32>
nn.graph @tail(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %b = nn.param_ref @b : !nn.tensor<[3], f32>
  %h = nn.tanh %x : !nn.tensor<[B, T, 4], f32>
  %l = nn.linear %h, %w, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame scale 2.0 : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

// A parameter read twice gets the sum of both gradients; an error-only
// loss is not seeded; an unnormalized loss is seeded unnormalized.

// CHECK-LABEL: nn.graph @shared
// CHECK-SAME: -> (!nn.tensor<[4, 4], f32> {nn.gradient = "w"})
// CHECK: nn.loss_seed %{{.+}}, %{{.+}} scale 1.000000e+00 unnormalized
// CHECK-NOT: nn.loss_seed
// CHECK: %[[G2:.+]] = nn.linear_grad_weight
// CHECK: %[[G1:.+]] = nn.linear_grad_weight
// CHECK: %[[SUM:.+]] = nn.add %[[G2]], %[[G1]]
// CHECK: nn.return %[[SUM]]
// PACKED-LABEL: nn.graph @shared
nn.parameter @w : !nn.tensor<[4, 4], f32>
nn.graph @shared(%x: !nn.tensor<[B, 4], f32>, %y: !nn.tensor<[B], i32>)
    dims [B: batch] {
  %w = nn.param_ref @w : !nn.tensor<[4, 4], f32>
  %h = nn.linear %x, %w : !nn.tensor<[B, 4], f32>, !nn.tensor<[4, 4], f32>
  %h2 = nn.linear %h, %w : !nn.tensor<[B, 4], f32>, !nn.tensor<[4, 4], f32>
  %ce = nn.cross_entropy %h2, %y from logits : !nn.tensor<[B, 4], f32>, !nn.tensor<[B], i32>
  nn.mark_loss %ce as "ce" normalize sum {use_normalized_loss = false} : !nn.tensor<[B], f32>
  %err = nn.cross_entropy %h, %y from logits : !nn.tensor<[B, 4], f32>, !nn.tensor<[B], i32>
  nn.mark_loss %err as "err" normalize sum as_error : !nn.tensor<[B], f32>
  nn.return
}

// -----

// A call's VJP is a call of the callee's companion @<callee>_vjp: the
// callee's forward again, seeded by the gradient of the call's result (an
// extra argument) and by the callee's own trained loss (its mark_loss is
// gone: the forward call reports it), returning the gradients of the
// arguments the caller wants (not the entry's data input %x) and of the
// parameters it reads. The caller adds them to its own.

// CHECK-LABEL: nn.graph @model(
// CHECK-LABEL: nn.graph @model_vjp(%x: !nn.tensor<[Bm, T, 4], f32>, %y: !nn.tensor<[Bm, T], i32>, %grad_result0: !nn.tensor<[Bm, T, 3], f32>)
// CHECK-SAME: -> (!nn.tensor<[3, 4], f32> {nn.gradient = "w"})
// CHECK-NOT: nn.mark_loss
// CHECK: nn.loss_seed
// CHECK: %[[SUM:.+]] = nn.add %grad_result0, %{{.+}}
// CHECK: %[[GW:.+]] = nn.linear_grad_weight %[[SUM]], %x
// CHECK: nn.return %[[GW]] : !nn.tensor<[3, 4], f32>
// CHECK-LABEL: nn.graph @criterion
// CHECK-SAME: -> (!nn.tensor<[3, 4], f32> {nn.gradient = "w"}, !nn.tensor<[3, 3], f32> {nn.gradient = "v"})
// CHECK: %[[H:.+]] = nn.call @model(%x, %y)
// CHECK: %[[DH:.+]] = nn.linear_grad_input
// CHECK: %[[GV:.+]] = nn.linear_grad_weight
// CHECK: %[[GW:.+]] = nn.call @model_vjp(%x, %y, %[[DH]]) : (!nn.tensor<[B, U, 4], f32>, !nn.tensor<[B, U], i32>, !nn.tensor<[B, U, 3], f32>) -> !nn.tensor<[3, 4], f32>
// CHECK: nn.return %[[GW]], %[[GV]]
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.parameter @v : !nn.tensor<[3, 3], f32>
nn.graph @model(%x: !nn.tensor<[Bm, T, 4], f32>, %y: !nn.tensor<[Bm, T], i32>)
    -> !nn.tensor<[Bm, T, 3], f32> dims [Bm: batch, T: seq(Bm)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %h = nn.linear %x, %w : !nn.tensor<[Bm, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce = nn.cross_entropy %h, %y from logits : !nn.tensor<[Bm, T, 3], f32>, !nn.tensor<[Bm, T], i32>
  nn.mark_loss %ce as "inner" normalize per_frame : !nn.tensor<[Bm, T], f32>
  nn.return %h : !nn.tensor<[Bm, T, 3], f32>
}
nn.graph @criterion(%x: !nn.tensor<[B, U, 4], f32>, %y: !nn.tensor<[B, U], i32>)
    dims [B: batch, U: seq(B)] {
  %v = nn.param_ref @v : !nn.tensor<[3, 3], f32>
  %h = nn.call @model(%x, %y) : (!nn.tensor<[B, U, 4], f32>, !nn.tensor<[B, U], i32>) -> !nn.tensor<[B, U, 3], f32>
  %o = nn.linear %h, %v : !nn.tensor<[B, U, 3], f32>, !nn.tensor<[3, 3], f32>
  %ce = nn.cross_entropy %o, %y from logits : !nn.tensor<[B, U, 3], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ce as "outer" normalize per_frame : !nn.tensor<[B, U], f32>
  nn.return
}

// -----

// A regularization loss over a parameter: its seed is the loss's scale
// (normalize sum), and its gradient adds to the other loss's.
// CHECK-LABEL: nn.graph @l2
// CHECK: %[[W:.+]] = nn.param_ref @w
// CHECK: %[[N:.+]] = nn.param_norm %[[W]] : !nn.tensor<[3, 4], f32>
// CHECK: %[[SEED:.+]] = nn.loss_seed %[[N]], %{{.+}} scale 2.500000e-01 : !nn.tensor<[], f32>
// CHECK: %[[DN:.+]] = nn.param_norm_grad %[[SEED]], %[[W]] : !nn.tensor<[3, 4], f32>
// CHECK: %[[DCE:.+]] = nn.linear_grad_weight
// CHECK: %[[DW:.+]] = nn.add %[[DN]], %[[DCE]] : !nn.tensor<[3, 4], f32>
// CHECK: nn.return %[[DW]] : !nn.tensor<[3, 4], f32>
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.graph @l2(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %n = nn.param_norm %w : !nn.tensor<[3, 4], f32>
  nn.mark_loss %n as "l2" normalize sum scale 0.25 : !nn.tensor<[], f32>
  nn.return
}

// -----

// The Conformer's ops: attention's three gradients come from one
// nn.attention_grad with its attributes, rotary's is the inverse
// rotation, glu's nn.glu_grad, silu's an activation_grad, and a grouped
// convolution's gradient keeps its groups.
// CHECK-LABEL: nn.graph @conformer_ops
// CHECK: %[[R:.+]] = nn.rotary %[[Q:.+]] heads 2 : !nn.tensor<[B, T, 4], f32>
// CHECK: %[[A:.+]] = nn.attention %[[R]], %[[R]], %[[Q]] heads 2 causal left_context 3
// CHECK: %[[P:.+]] = nn.relative_positions
// CHECK: nn.attention %[[A]], %[[A]], %[[Q]] relative %[[R]], %[[P]] heads 1
// CHECK: %[[G:.+]] = nn.glu %{{.+}} : !nn.tensor<[B, T, 8], f32>
// CHECK: %[[C:.+]] = nn.conv1d %[[G]], %{{.+}} stride 1 groups 4
// CHECK: %[[S:.+]] = nn.silu %[[C]]
// CHECK: nn.scale %[[S]] by 5.000000e-01
// CHECK: nn.scale %{{.+}} by 5.000000e-01
// CHECK: nn.activation_grad silu %{{.+}}, %[[C]] : !nn.tensor<[B, T, 4], f32>
// CHECK: nn.conv1d_grad %{{.+}}, %[[G]], %{{.+}} stride 1 groups 4
// CHECK: nn.glu_grad %{{.+}}, %{{.+}} : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 8], f32>
// CHECK: %{{.+}}, %[[REL:.+]]:2 = nn.attention_grad %{{.+}}, %[[A]], %[[A]], %[[Q]] relative %[[R]], %[[P]] heads 1
// CHECK: nn.relative_positions_grad %[[REL]]#1, %{{.+}} : !nn.tensor<[5, 4], f32>, !nn.tensor<[4, 2], f32>
// CHECK: nn.attention_grad %{{.+}}, %[[R]], %[[R]], %[[Q]] heads 2 causal left_context 3
// CHECK: nn.rotary %{{.+}} heads 2 inverse : !nn.tensor<[B, T, 4], f32>
nn.parameter @wq : !nn.tensor<[4, 4], f32>
nn.parameter @wg : !nn.tensor<[8, 4], f32>
nn.parameter @dw : !nn.tensor<[4, 3, 1], f32>
nn.parameter @wpos : !nn.tensor<[4, 2], f32>
nn.graph @conformer_ops(%x: !nn.tensor<[B, T, 4], f32>, %r: !nn.tensor<[B, T, 4], f32>)
    dims [B: batch, T: seq(B)] {
  %wq = nn.param_ref @wq : !nn.tensor<[4, 4], f32>
  %wg = nn.param_ref @wg : !nn.tensor<[8, 4], f32>
  %dw = nn.param_ref @dw : !nn.tensor<[4, 3, 1], f32>
  %q = nn.linear %x, %wq : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[4, 4], f32>
  %qr = nn.rotary %q heads 2 : !nn.tensor<[B, T, 4], f32>
  %a = nn.attention %qr, %qr, %q heads 2 causal left_context 3 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
  %wpos = nn.param_ref @wpos : !nn.tensor<[4, 2], f32>
  %rp = nn.relative_positions %wpos : !nn.tensor<[4, 2], f32> -> !nn.tensor<[5, 4], f32>
  %ra = nn.attention %a, %a, %q relative %qr, %rp heads 1 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[5, 4], f32>
  %p = nn.linear %ra, %wg : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[8, 4], f32>
  %g = nn.glu %p : !nn.tensor<[B, T, 8], f32>
  %c = nn.conv1d %g, %dw stride 1 groups 4 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[4, 3, 1], f32>) -> !nn.tensor<[B, T, 4], f32>
  %s = nn.silu %c : !nn.tensor<[B, T, 4], f32>
  %sh = nn.scale %s by 0.5 : !nn.tensor<[B, T, 4], f32>
  %e = nn.mse %sh, %r : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
  nn.mark_loss %e as "mse" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}
