// Weighted losses through the passes: the weights reach nn.loss_terms
// and nn.loss_seed, are packed with the loss they weight, keep a fused
// loss tail's backward apart (the fused sweep seeds every frame alike),
// and lower to a weighted sum, a weighted frame count and a weighted seed.
// RUN: nn-opt %s | nn-opt | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: nn-opt %s --nn-expose-losses | FileCheck %s --check-prefix=EXPOSE
// RUN: nn-opt %s --nn-autodiff | FileCheck %s --check-prefix=SEED
// RUN: nn-opt %s --nn-pack-before-loss | FileCheck %s --check-prefix=PACK
// RUN: nn-opt %s --nn-pack-before-loss --nn-fuse-loss-tail --nn-autodiff --nn-fuse-loss-tail="emit-remarks=true" 2>&1 | FileCheck %s --check-prefix=FUSE
// RUN: nn-opt %s --nn-autodiff --nn-expose-losses --nn-convert-to-linalg | FileCheck %s --check-prefix=LOWER

// ROUNDTRIP: nn.mark_loss %{{.+}} weights %{{.+}} as "ce" normalize per_frame : !nn.tensor<[B, T], f32> weights !nn.tensor<[B, T], f32>

// EXPOSE: nn.loss_terms %{{.+}} weights %c normalize per_frame : !nn.tensor<[B, T], f32> weights !nn.tensor<[B, T], f32>

// SEED: %[[SUM:.+]], %[[INV:.+]] = nn.loss_terms %[[CE:.+]] weights %c normalize per_frame
// SEED: nn.loss_seed %[[CE]], %[[INV]] weights %c scale 1.000000e+00 : !nn.tensor<[B, T], f32> weights !nn.tensor<[B, T], f32>

// PACK-DAG: %[[PW:.+]] = nn.pack %c : !nn.tensor<[B, T], f32> -> !nn.tensor<[N_T], f32>
// PACK-DAG: %[[PCE:.+]] = nn.cross_entropy {{.+}} : !nn.tensor<[N_T, 3], f32>, !nn.tensor<[N_T], i32>
// PACK: nn.mark_loss %[[PCE]] weights %[[PW]] as "ce" normalize per_frame : !nn.tensor<[N_T], f32> weights !nn.tensor<[N_T], f32>

// FUSE: remark: loss tail gradient recomputes the logits: the loss has weights

// The sum multiplies each loss value by its weight; the per-frame count
// adds the weights; the seed is scale / inv_norm times the weight.
// LOWER-LABEL: func.func @g
// LOWER: linalg.generic
// LOWER: ^bb0(%[[L:.+]]: f32, %[[W:.+]]: f32, %{{.+}}: i32, %[[ACC:.+]]: f64):
// LOWER: %[[LD:.+]] = arith.extf %[[L]] : f32 to f64
// LOWER: %[[WD:.+]] = arith.extf %[[W]] : f32 to f64
// LOWER: arith.mulf %[[LD]], %[[WD]]
// LOWER: ^bb0(%[[W2:.+]]: f32, %{{.+}}: i32, %{{.+}}: f64):
// LOWER: arith.extf %[[W2]] : f32 to f64
// LOWER: ^bb0(%[[NORM:.+]]: f64, %[[W3:.+]]: f32, %{{.+}}: i32, %{{.+}}: f32):
// LOWER: arith.divf
// LOWER: %[[W3D:.+]] = arith.extf %[[W3]] : f32 to f64
// LOWER: arith.mulf %{{.+}}, %[[W3D]]
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>,
            %c: !nn.tensor<[B, T], f32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce weights %c as "ce" normalize per_frame : !nn.tensor<[B, T], f32> weights !nn.tensor<[B, T], f32>
  nn.return
}
