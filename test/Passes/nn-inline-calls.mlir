// RUN: nn-opt %s --split-input-file --nn-inline-calls=emit-remarks=1 --verify-diagnostics | FileCheck %s
// RUN: nn-opt %s --split-input-file --nn-dropout-training --nn-inline-calls | FileCheck %s --check-prefix=SEED
// RUN: nn-opt %s --split-input-file --nn-inline-calls --nn-pack-before-loss=pack=earliest | FileCheck %s --check-prefix=PACK

// A model over [B, T] called by a loss graph over [B, T]: every callee dim
// binds the caller's dim of the same name and declaration, so the call is
// replaced by the callee's ops (the parameters read by name, as before).
// The callee, left without users, is erased. Packing then reaches through
// the former call: the LSTM runs on packed frames.
// CHECK-NOT: nn.graph @encoder
// CHECK-LABEL: nn.graph @loss
// CHECK-NOT: nn.call
// CHECK: %[[WI:.+]] = nn.param_ref @wi
// CHECK: %[[H:.+]] = nn.lstm forward %x, %[[WI]]
// CHECK: %[[L:.+]] = nn.linear %[[H]]
// CHECK: nn.cross_entropy %[[L]], %y
// PACK-LABEL: nn.graph @loss
// PACK: %[[P:.+]] = nn.pack %x : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[N_T, 3], f32>
// PACK: nn.lstm forward %[[P]]
nn.parameter @wi : !nn.tensor<[16, 3], f32>
nn.parameter @wh : !nn.tensor<[16, 4], f32>
nn.parameter @b : !nn.tensor<[16], f32>
nn.parameter @wo : !nn.tensor<[5, 4], f32>
nn.graph @encoder(%x: !nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T, 4], f32>
    dims [B: batch, T: seq(B)] {
  %wi = nn.param_ref @wi : !nn.tensor<[16, 3], f32>
  %wh = nn.param_ref @wh : !nn.tensor<[16, 4], f32>
  %b = nn.param_ref @b : !nn.tensor<[16], f32>
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[16, 3], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  nn.return %h : !nn.tensor<[B, T, 4], f32>
}
nn.graph @loss(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %h = nn.call @encoder(%x) : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T, 4], f32>
  %wo = nn.param_ref @wo : !nn.tensor<[5, 4], f32>
  %l = nn.linear %h, %wo : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[5, 4], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

// Calls of calls are inlined in turn (@top comes first: its call of
// @middle brings in a call of @inner, inlined in the next round). A dim
// the callee declares for itself (a subsampled length) joins the
// caller's dims, declared the same. Both callees end up without users.
// CHECK-NOT: nn.graph @inner
// CHECK-NOT: nn.graph @middle
// CHECK-LABEL: nn.graph @top
// CHECK-SAME: dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)]
// CHECK-NOT: nn.call
// CHECK: %[[P:.+]] = nn.pool max %x
// CHECK-SAME: -> !nn.tensor<[B, T2, 3], f32>
// CHECK: %[[D:.+]] = nn.tanh %[[P]]
// CHECK: nn.reduce sum %[[D]] over 1
nn.graph @top(%x: !nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, 3], f32>
    dims [B: batch, T: seq(B)] {
  %s = nn.call @middle(%x) : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, 3], f32>
  nn.return %s : !nn.tensor<[B, 3], f32>
}
nn.graph @inner(%x: !nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T2, 3], f32>
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %p = nn.pool max %x window 2 stride 2 : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T2, 3], f32>
  nn.return %p : !nn.tensor<[B, T2, 3], f32>
}
nn.graph @middle(%x: !nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, 3], f32>
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %p = nn.call @inner(%x) : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T2, 3], f32>
  %d = nn.tanh %p : !nn.tensor<[B, T2, 3], f32>
  %s = nn.reduce sum %d over 1 : !nn.tensor<[B, T2, 3], f32>
  nn.return %s : !nn.tensor<[B, 3], f32>
}

// -----

// Dims renamed: the callee's Bc, Tc stand for the caller's B, T in every
// inlined type. A callee dim of its own whose name the caller uses for
// another dim (T2 = ceildiv(T, 3) against the caller's ceildiv(T, 2))
// joins under a new name; one the caller declares the same way under
// another name (T4 = ceildiv(T, 2), the caller's T2) is the caller's.
// CHECK-LABEL: nn.graph @caller
// CHECK-SAME: dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T2_1: seq(B) = ceildiv(T, 3)]
// CHECK-NOT: nn.call
// CHECK: nn.tanh %x : !nn.tensor<[B, T, 3], f32>
// CHECK: nn.pool max %x window 3 stride 3 : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T2_1, 3], f32>
// CHECK: nn.pool max %x window 2 stride 2 : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T2, 3], f32>
nn.graph @renamed(%x: !nn.tensor<[Bc, Tc, 3], f32>) -> !nn.tensor<[Bc, Tc, 3], f32>
    dims [Bc: batch, Tc: seq(Bc)] {
  %t = nn.tanh %x : !nn.tensor<[Bc, Tc, 3], f32>
  nn.return %t : !nn.tensor<[Bc, Tc, 3], f32>
}
nn.graph @redeclared(%x: !nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, 3], f32>
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 3)] {
  %p = nn.pool max %x window 3 stride 3 : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T2, 3], f32>
  %s = nn.reduce sum %p over 1 : !nn.tensor<[B, T2, 3], f32>
  nn.return %s : !nn.tensor<[B, 3], f32>
}
nn.graph @shared(%x: !nn.tensor<[Bs, Ts, 3], f32>) -> !nn.tensor<[Bs, 3], f32>
    dims [Bs: batch, Ts: seq(Bs), T4: seq(Bs) = ceildiv(Ts, 2)] {
  %p = nn.pool max %x window 2 stride 2 : (!nn.tensor<[Bs, Ts, 3], f32>) -> !nn.tensor<[Bs, T4, 3], f32>
  %s = nn.reduce sum %p over 1 : !nn.tensor<[Bs, T4, 3], f32>
  nn.return %s : !nn.tensor<[Bs, 3], f32>
}
nn.graph @caller(%x: !nn.tensor<[B, T, 3], f32>) -> (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, 3], f32>, !nn.tensor<[B, 3], f32>)
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %a = nn.call @renamed(%x) : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T, 3], f32>
  %b = nn.call @redeclared(%x) : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, 3], f32>
  %c = nn.call @shared(%x) : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, 3], f32>
  nn.return %a, %b, %c : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, 3], f32>, !nn.tensor<[B, 3], f32>
}

// -----

// Calls left as they are: a callee that marks a loss (its loss is
// exposed through the call), a row batch bound to packed rows (the
// callee's batch R counts the caller's packed frames N: not a dim it can
// stand for), a sequence dim no argument binds (it would be a new input
// of the caller), a dim whose lengths the callee computes. The callees
// keep their users and stay.
// CHECK-LABEL: nn.graph @marks
// CHECK-LABEL: nn.graph @rows
// CHECK-LABEL: nn.graph @unbound
// CHECK-LABEL: nn.graph @decodes
// CHECK-LABEL: nn.graph @keeps
// CHECK: nn.call @marks
// CHECK: nn.call @rows
// CHECK: nn.call @unbound
// CHECK: nn.call @decodes
nn.graph @marks(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>) -> !nn.tensor<[B, T, 3], f32>
    dims [B: batch, T: seq(B)] {
  %t = nn.tanh %x : !nn.tensor<[B, T, 3], f32>
  %ce = nn.cross_entropy %t, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "inner" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return %t : !nn.tensor<[B, T, 3], f32>
}
nn.graph @rows(%x: !nn.tensor<[R, 3], f32>) -> !nn.tensor<[R, 3], f32>
    dims [R: batch] {
  %t = nn.tanh %x : !nn.tensor<[R, 3], f32>
  nn.return %t : !nn.tensor<[R, 3], f32>
}
nn.graph @unbound(%x: !nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, 3], f32>
    dims [B: batch, T: seq(B), V: seq(B)] {
  %s = nn.reduce sum %x over 1 : !nn.tensor<[B, T, 3], f32>
  nn.return %s : !nn.tensor<[B, 3], f32>
}
nn.graph @decodes(%x: !nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B], f32>
    dims [B: batch, T: seq(B), Y: seq(B) computed] {
  %labels, %score = nn.ctc_greedy_decode %x from logits blank 0 : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %score : !nn.tensor<[B], f32>
}
nn.graph @keeps(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>) -> (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[N, 3], f32>, !nn.tensor<[B, 3], f32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  // expected-remark @below {{not inlined: the callee marks a loss}}
  %c = nn.call @marks(%x, %y) : (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>) -> !nn.tensor<[B, T, 3], f32>
  %p = nn.pack %x : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[N, 3], f32>
  // expected-remark @below {{not inlined: callee dim 'R' cannot stand for caller dim 'N'}}
  %r = nn.call @rows(%p) : (!nn.tensor<[N, 3], f32>) -> !nn.tensor<[N, 3], f32>
  // expected-remark @below {{not inlined: callee dim 'V' is bound by no argument}}
  %s = nn.call @unbound(%x) : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, 3], f32>
  // expected-remark @below {{not inlined: callee dim 'Y' is computed by the callee}}
  %d = nn.call @decodes(%x) : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B], f32>
  nn.return %c, %r, %s, %d : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[N, 3], f32>, !nn.tensor<[B, 3], f32>, !nn.tensor<[B], f32>
}

// -----

// A callee that packs its input declares its own packed dim NP; the
// caller packs the same (B, T) as N: one dim, so the inlined ops use N.
// CHECK-LABEL: nn.graph @packs_too
// CHECK-SAME: dims [B: batch, T: seq(B), N: packed(B, T)]
// CHECK-NOT: nn.call
// CHECK: nn.pack %x : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[N, 3], f32>
// CHECK: nn.tanh %{{.+}} : !nn.tensor<[N, 3], f32>
nn.graph @packer(%x: !nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T, 3], f32>
    dims [B: batch, T: seq(B), NP: packed(B, T)] {
  %p = nn.pack %x : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[NP, 3], f32>
  %t = nn.tanh %p : !nn.tensor<[NP, 3], f32>
  %u = nn.unpack %t : !nn.tensor<[NP, 3], f32> -> !nn.tensor<[B, T, 3], f32>
  nn.return %u : !nn.tensor<[B, T, 3], f32>
}
nn.graph @packs_too(%x: !nn.tensor<[B, T, 3], f32>) -> (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[N, 3], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %c = nn.call @packer(%x) : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T, 3], f32>
  %p = nn.pack %x : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[N, 3], f32>
  nn.return %c, %p : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[N, 3], f32>
}

// -----

// After nn-dropout-training: the inlined dropout keeps the key it got in
// the callee (0, not printed; the caller's own dropout has 1) and reads
// the seed the call passed (the caller's), so its masks are the ones the
// call drew.
// SEED-NOT: nn.graph @net
// SEED-LABEL: nn.graph @train
// SEED-SAME: %dropout_seed: !nn.tensor<[], i32>
// SEED-NOT: nn.call
// SEED: %[[D:.+]] = nn.dropout %x seed %dropout_seed rate 2.000000e-01 :
// SEED: nn.dropout %[[D]] seed %dropout_seed rate 5.000000e-01 key 1 :
nn.graph @net(%x: !nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T, 3], f32>
    dims [B: batch, T: seq(B)] {
  %d = nn.dropout %x rate 2.000000e-01 : !nn.tensor<[B, T, 3], f32>
  nn.return %d : !nn.tensor<[B, T, 3], f32>
}
nn.graph @train(%x: !nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T, 3], f32>
    dims [B: batch, T: seq(B)] {
  %h = nn.call @net(%x) : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T, 3], f32>
  %d = nn.dropout %h rate 5.000000e-01 : !nn.tensor<[B, T, 3], f32>
  nn.return %d : !nn.tensor<[B, T, 3], f32>
}
