// RUN: nn-opt %s --split-input-file --nn-inline-calls=emit-remarks=1 --verify-diagnostics | FileCheck %s
// RUN: nn-opt %s --split-input-file --nn-dropout-training --nn-inline-calls | FileCheck %s --check-prefix=SEED
// RUN: nn-opt %s --split-input-file --nn-inline-calls --nn-pack-before-loss=pack=earliest | FileCheck %s --check-prefix=PACK

// A model over [B, T] called by a loss graph over [B, T]: every callee dim
// binds the caller's dim of the same name and declaration, so the call is
// replaced by the callee's ops (the parameters read by name, as before).
// The callee stays for other callers. Packing then reaches through the
// former call: the LSTM runs on packed frames.
// CHECK-LABEL: nn.graph @encoder
// CHECK: nn.lstm
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

// Calls of calls are inlined in turn. A dim the callee declares for
// itself (a subsampled length) joins the caller's dims, declared the
// same.
// CHECK-LABEL: nn.graph @top
// CHECK-SAME: dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)]
// CHECK-NOT: nn.call
// CHECK: %[[P:.+]] = nn.pool max %x
// CHECK-SAME: -> !nn.tensor<[B, T2, 3], f32>
// CHECK: %[[D:.+]] = nn.tanh %[[P]]
// CHECK: nn.reduce sum %[[D]] over 1
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
nn.graph @top(%x: !nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, 3], f32>
    dims [B: batch, T: seq(B)] {
  %s = nn.call @middle(%x) : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, 3], f32>
  nn.return %s : !nn.tensor<[B, 3], f32>
}

// -----

// Calls left as they are: dims that would need renaming (the callee's Bc,
// Tc bind the caller's B, T), a dim of the same name declared differently,
// a callee that marks a loss.
// CHECK-LABEL: nn.graph @caller
// CHECK: nn.call @renamed
// CHECK: nn.call @redeclared
// CHECK: nn.call @marks
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
nn.graph @marks(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>) -> !nn.tensor<[B, T, 3], f32>
    dims [B: batch, T: seq(B)] {
  %t = nn.tanh %x : !nn.tensor<[B, T, 3], f32>
  %ce = nn.cross_entropy %t, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "inner" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return %t : !nn.tensor<[B, T, 3], f32>
}
nn.graph @caller(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>) -> (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, 3], f32>, !nn.tensor<[B, T, 3], f32>)
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  // expected-remark @below {{not inlined: callee dim 'Bc' binds caller dim 'B' (renaming dims is not supported)}}
  %a = nn.call @renamed(%x) : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T, 3], f32>
  // expected-remark @below {{not inlined: callee dim 'T2' is declared differently in the caller}}
  %b = nn.call @redeclared(%x) : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, 3], f32>
  // expected-remark @below {{not inlined: the callee marks a loss}}
  %c = nn.call @marks(%x, %y) : (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>) -> !nn.tensor<[B, T, 3], f32>
  nn.return %a, %b, %c : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, 3], f32>, !nn.tensor<[B, T, 3], f32>
}

// -----

// After nn-dropout-training: the inlined dropout keeps the key it got in
// the callee and reads the seed the call passed (the caller's), so its
// masks are the ones the call drew.
// SEED-LABEL: nn.graph @net
// SEED: nn.dropout %x seed %dropout_seed rate 2.000000e-01 :
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
