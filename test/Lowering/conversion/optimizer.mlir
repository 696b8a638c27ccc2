// RUN: nn-opt %s --split-input-file --nn-convert-to-linalg | FileCheck %s

// Train-step ops (OptimizerPatterns.cpp). The per-step scalars stay rank-0
// tensors broadcast into the update (never extracted on the host, which
// on a GPU could not read them), and what depends only on the step (the
// bias corrections) is computed once, in a rank-0 generic, in f64.

// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[BCAST:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[SCALAR:.+]] = affine_map<() -> ()>
// CHECK-LABEL: func.func @adam
// CHECK-SAME: (%[[P:[^:]+]]: tensor<3x4xf32>, %[[G:[^:]+]]: tensor<3x4xf32>, %[[M:[^:]+]]: tensor<3x4xf32>, %[[V:[^:]+]]: tensor<3x4xf32>, %[[LR:[^:]+]]: tensor<f32>, %[[T:[^:]+]]: tensor<i32>)
// CHECK: %[[K:.+]]:3 = linalg.generic {indexing_maps = [#[[SCALAR]], #[[SCALAR]], #[[SCALAR]], #[[SCALAR]], #[[SCALAR]]], iterator_types = []} ins(%[[LR]], %[[T]] : tensor<f32>, tensor<i32>)
// lr / (1 - beta1^t), sqrt(1 - beta2^t) and 1 - lr wd (whose operands
// come in the C++ compiler's argument order), each rounded once to f32.
// CHECK-NEXT: ^bb0(%[[LRE:[^:]+]]: f32, %[[TE:[^:]+]]: i32,
// CHECK-NEXT: %[[LR64:.+]] = arith.extf %[[LRE]] : f32 to f64
// CHECK-NEXT: %[[T64:.+]] = arith.sitofp %[[TE]] : i32 to f64
// CHECK-NEXT: %[[B1:.+]] = arith.constant 9.000000e-01 : f64
// CHECK-NEXT: %[[P1:.+]] = math.powf %[[B1]], %[[T64]] : f64
// CHECK-NEXT: %[[ONE1:.+]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: %[[C1:.+]] = arith.subf %[[ONE1]], %[[P1]] : f64
// CHECK-NEXT: %[[SIZE64:.+]] = arith.divf %[[LR64]], %[[C1]] : f64
// CHECK-NEXT: %[[B2:.+]] = arith.constant 0.99899999999999999 : f64
// CHECK-NEXT: %[[P2:.+]] = math.powf %[[B2]], %[[T64]] : f64
// CHECK-NEXT: %[[ONE2:.+]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: %[[C2:.+]] = arith.subf %[[ONE2]], %[[P2]] : f64
// CHECK-NEXT: %[[ROOT64:.+]] = math.sqrt %[[C2]] : f64
// CHECK-DAG: %[[WD:.+]] = arith.constant 1.000000e-02 : f64
// CHECK-DAG: %[[LRWD:.+]] = arith.mulf %[[LR64]], %[[WD]] : f64
// CHECK-DAG: %[[ONE3:.+]] = arith.constant 1.000000e+00 : f64
// CHECK: %[[KEEP64:.+]] = arith.subf %[[ONE3]], %[[LRWD]] : f64
// CHECK-NEXT: %[[SIZE32:.+]] = arith.truncf %[[SIZE64]] : f64 to f32
// CHECK-NEXT: %[[ROOT32:.+]] = arith.truncf %[[ROOT64]] : f64 to f32
// CHECK-NEXT: %[[KEEP32:.+]] = arith.truncf %[[KEEP64]] : f64 to f32
// CHECK-NEXT: linalg.yield %[[SIZE32]], %[[ROOT32]], %[[KEEP32]] : f32, f32, f32
// CHECK: %[[UPDATE:.+]]:3 = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]], #[[ID]], #[[BCAST]], #[[BCAST]], #[[BCAST]], #[[ID]], #[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[P]], %[[G]], %[[M]], %[[V]], %[[K]]#0, %[[K]]#1, %[[K]]#2 :
// Decoupled decay scales the parameter first; then m, v and the step (the
// operands of each sum in the C++ compiler's argument order).
// CHECK: ^bb0(%[[PE:[^:]+]]: f32, %[[GE:[^:]+]]: f32, %[[ME:[^:]+]]: f32, %[[VE:[^:]+]]: f32, %[[SIZE:[^:]+]]: f32, %[[ROOT:[^:]+]]: f32, %[[KEEP:[^:]+]]: f32,
// CHECK: %[[DECAYED:.+]] = arith.mulf %[[PE]], %[[KEEP]] : f32
// CHECK-DAG: %[[BETA1:.+]] = arith.constant 0.899999976 : f32
// CHECK-DAG: %[[MKEPT:.+]] = arith.mulf %[[BETA1]], %[[ME]] : f32
// CHECK-DAG: %[[REST1:.+]] = arith.constant 1.000000e-01 : f32
// CHECK-DAG: %[[MNEW:.+]] = arith.mulf %[[REST1]], %[[GE]] : f32
// CHECK-DAG: %[[NEWM:.+]] = arith.addf %[[MKEPT]], %[[MNEW]] : f32
// CHECK-DAG: %[[G2:.+]] = arith.mulf %[[GE]], %[[GE]] : f32
// CHECK-DAG: %[[BETA2:.+]] = arith.constant 9.990000e-01 : f32
// CHECK-DAG: %[[VKEPT:.+]] = arith.mulf %[[BETA2]], %[[VE]] : f32
// CHECK-DAG: %[[REST2:.+]] = arith.constant 1.000000e-03 : f32
// CHECK-DAG: %[[VNEW:.+]] = arith.mulf %[[REST2]], %[[G2]] : f32
// CHECK-DAG: %[[NEWV:.+]] = arith.addf %[[VKEPT]], %[[VNEW]] : f32
// CHECK: %[[RV:.+]] = math.sqrt %[[NEWV]] : f32
// CHECK-DAG: %[[EPS:.+]] = arith.constant 9.99999993E-9 : f32
// CHECK-DAG: %[[SCALEDRV:.+]] = arith.divf %[[RV]], %[[ROOT]] : f32
// CHECK: %[[DEN:.+]] = arith.addf %[[SCALEDRV]], %[[EPS]] : f32
// CHECK-NEXT: %[[RATIO:.+]] = arith.divf %[[NEWM]], %[[DEN]] : f32
// CHECK-NEXT: %[[STEP:.+]] = arith.mulf %[[SIZE]], %[[RATIO]] : f32
// CHECK-NEXT: %[[NEW:.+]] = arith.subf %[[DECAYED]], %[[STEP]] : f32
// CHECK-NEXT: linalg.yield %[[NEW]], %[[NEWM]], %[[NEWV]] : f32, f32, f32
// CHECK: return %[[UPDATE]]#0, %[[UPDATE]]#1, %[[UPDATE]]#2 :
nn.graph @adam(%p: !nn.tensor<[3, 4], f32>, %g: !nn.tensor<[3, 4], f32>,
               %m: !nn.tensor<[3, 4], f32>, %v: !nn.tensor<[3, 4], f32>,
               %lr: !nn.tensor<[], f32>, %t: !nn.tensor<[], i32>)
    -> (!nn.tensor<[3, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[3, 4], f32>) dims [] {
  %p1, %m1, %v1 = nn.adam_update %p, %g, %m, %v lr %lr step %t beta1 0.9 beta2 0.999 epsilon 1.0e-8 weight_decay 0.01 decoupled : !nn.tensor<[3, 4], f32>
  nn.return %p1, %m1, %v1 : !nn.tensor<[3, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[3, 4], f32>
}

// -----

// The norm: each gradient's squares summed in f64 into a rank-0 tensor,
// then one rank-0 generic adds them and takes the root; clipping is
// min(1, max / (norm + 1e-6)) with minimumf, which keeps a NaN norm NaN.
// CHECK-LABEL: func.func @norm
// CHECK-SAME: (%[[DW:[^:]+]]: tensor<3x4xf32>, %[[DB:[^:]+]]: tensor<3xf32>, %[[BV:[^:]+]]: tensor<3xf32>, %[[LR:[^:]+]]: tensor<f32>)
// CHECK: %[[ZA:.+]] = linalg.fill ins(%{{.+}} : f64) outs(%{{.+}} : tensor<f64>)
// CHECK-NEXT: %[[A:.+]] = linalg.generic {{.+}} iterator_types = ["reduction", "reduction"]} ins(%[[DW]] : tensor<3x4xf32>) outs(%[[ZA]] : tensor<f64>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ACC:[^:]+]]: f64):
// CHECK-NEXT: %[[WIDE:.+]] = arith.extf %[[E]] : f32 to f64
// CHECK-NEXT: %[[SQ:.+]] = arith.mulf %[[WIDE]], %[[WIDE]] : f64
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[ACC]], %[[SQ]] : f64
// CHECK-NEXT: linalg.yield %[[NEXT]] : f64
// CHECK: %[[ZB:.+]] = linalg.fill ins(%{{.+}} : f64) outs(%{{.+}} : tensor<f64>)
// CHECK-NEXT: %[[B:.+]] = linalg.generic {{.+}} iterator_types = ["reduction"]} ins(%[[DB]] : tensor<3xf32>) outs(%[[ZB]] : tensor<f64>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ACC:[^:]+]]: f64):
// CHECK-NEXT: %[[WIDE:.+]] = arith.extf %[[E]] : f32 to f64
// CHECK-NEXT: %[[SQ:.+]] = arith.mulf %[[WIDE]], %[[WIDE]] : f64
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[ACC]], %[[SQ]] : f64
// CHECK-NEXT: linalg.yield %[[NEXT]] : f64
// CHECK: %[[N:.+]] = linalg.generic {{.+}} iterator_types = []} ins(%[[A]], %[[B]] : tensor<f64>, tensor<f64>) outs(%{{.+}} : tensor<f32>)
// CHECK-NEXT: ^bb0(%[[AE:[^:]+]]: f64, %[[BE:[^:]+]]: f64, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[TOTAL:.+]] = arith.addf %[[AE]], %[[BE]] : f64
// CHECK-NEXT: %[[ROOT:.+]] = math.sqrt %[[TOTAL]] : f64
// CHECK-NEXT: %[[NORM32:.+]] = arith.truncf %[[ROOT]] : f64 to f32
// CHECK-NEXT: linalg.yield %[[NORM32]] : f32
// CHECK: %[[S:.+]] = linalg.generic {{.+}} iterator_types = []} ins(%[[N]] : tensor<f32>) outs(%{{.+}} : tensor<f32>)
// CHECK-NEXT: ^bb0(%[[NE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-DAG: %[[TINY:.+]] = arith.constant 9.9999999999999995E-7 : f64
// CHECK-DAG: %[[N64:.+]] = arith.extf %[[NE]] : f32 to f64
// CHECK-DAG: %[[GUARDED:.+]] = arith.addf %[[N64]], %[[TINY]] : f64
// CHECK-DAG: %[[MAXNORM:.+]] = arith.constant 1.000000e+00 : f64
// CHECK: %[[RATIO:.+]] = arith.divf %[[MAXNORM]], %[[GUARDED]] : f64
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: %[[FACTOR:.+]] = arith.minimumf %[[RATIO]], %[[ONE]] : f64
// CHECK-NEXT: %[[FACTOR32:.+]] = arith.truncf %[[FACTOR]] : f64 to f32
// CHECK-NEXT: linalg.yield %[[FACTOR32]] : f32
// The scaled gradient with L2 decay: p - lr (g s + wd p).
// CHECK: %[[B1:.+]] = linalg.generic {{.+}} ins(%[[BV]], %[[DB]], %[[LR]], %[[S]] : tensor<3xf32>, tensor<3xf32>, tensor<f32>, tensor<f32>)
// CHECK: ^bb0(%[[PE:[^:]+]]: f32, %[[GE:[^:]+]]: f32, %[[LRE:[^:]+]]: f32, %[[SE:[^:]+]]: f32,
// CHECK: %[[GS:.+]] = arith.mulf %[[GE]], %[[SE]] : f32
// CHECK-NEXT: %[[WDC:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[WD:.+]] = arith.mulf %[[WDC]], %[[PE]] : f32
// CHECK: %[[SUM:.+]] = arith.addf %[[GS]], %[[WD]] : f32
// CHECK: %[[DELTA:.+]] = arith.mulf %[[LRE]], %[[SUM]] : f32
// CHECK: %[[NEWB:.+]] = arith.subf %[[PE]], %[[DELTA]] : f32
// CHECK-NEXT: linalg.yield %[[NEWB]] : f32
// CHECK: return %[[N]], %[[B1]] : tensor<f32>, tensor<3xf32>
nn.graph @norm(%dw: !nn.tensor<[3, 4], f32>, %db: !nn.tensor<[3], f32>,
               %b: !nn.tensor<[3], f32>, %lr: !nn.tensor<[], f32>)
    -> (!nn.tensor<[], f32>, !nn.tensor<[3], f32>) dims [] {
  %n = nn.global_norm %dw, %db : !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>
  %s = nn.clip_factor %n max_norm 1.0
  %b1 = nn.sgd_update %b, %db lr %lr scale %s weight_decay 0.5 : !nn.tensor<[3], f32>
  nn.return %n, %b1 : !nn.tensor<[], f32>, !nn.tensor<[3], f32>
}

// -----

// Momentum: one generic yields the parameter and the velocity. Plain:
// v' = mu v + g, p - lr v'. With a gradient scale, L2 decay and Nesterov:
// g = grad s + wd p, v' = mu v + g, p - lr (g + mu v').
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[BCAST:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @momentum(
// CHECK-SAME: %[[P:[^:]+]]: tensor<3x4xf32>, %[[G:[^:]+]]: tensor<3x4xf32>, %[[V:[^:]+]]: tensor<3x4xf32>, %[[LR:[^:]+]]: tensor<f32>, %[[S:[^:]+]]: tensor<f32>)
// CHECK: %[[OUTP:.+]] = tensor.empty() : tensor<3x4xf32>
// CHECK-NEXT: %[[OUTV:.+]] = tensor.empty() : tensor<3x4xf32>
// CHECK-NEXT: %[[PLAIN:.+]]:2 = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]], #[[BCAST]], #[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[P]], %[[G]], %[[V]], %[[LR]] : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<f32>) outs(%[[OUTP]], %[[OUTV]] : tensor<3x4xf32>, tensor<3x4xf32>)
// CHECK-NEXT: ^bb0(%[[PE:[^:]+]]: f32, %[[GE:[^:]+]]: f32, %[[VE:[^:]+]]: f32, %[[LRE:[^:]+]]: f32, %{{[^:]+}}: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[MU:.+]] = arith.constant 0.899999976 : f32
// CHECK-NEXT: %[[KEPT:.+]] = arith.mulf %[[MU]], %[[VE]] : f32
// CHECK-NEXT: %[[NEWV:.+]] = arith.addf %[[KEPT]], %[[GE]] : f32
// CHECK-NEXT: %[[STEP:.+]] = arith.mulf %[[LRE]], %[[NEWV]] : f32
// CHECK-NEXT: %[[NEWP:.+]] = arith.subf %[[PE]], %[[STEP]] : f32
// CHECK-NEXT: linalg.yield %[[NEWP]], %[[NEWV]] : f32, f32
// CHECK: %[[OUTP:.+]] = tensor.empty() : tensor<3x4xf32>
// CHECK-NEXT: %[[OUTV:.+]] = tensor.empty() : tensor<3x4xf32>
// CHECK-NEXT: %[[NESTEROV:.+]]:2 = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]], #[[BCAST]], #[[BCAST]], #[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[P]], %[[G]], %[[V]], %[[LR]], %[[S]] : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<f32>, tensor<f32>) outs(%[[OUTP]], %[[OUTV]] : tensor<3x4xf32>, tensor<3x4xf32>)
// CHECK-NEXT: ^bb0(%[[PE:[^:]+]]: f32, %[[GE:[^:]+]]: f32, %[[VE:[^:]+]]: f32, %[[LRE:[^:]+]]: f32, %[[SE:[^:]+]]: f32, %{{[^:]+}}: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[MU:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[GS:.+]] = arith.mulf %[[GE]], %[[SE]] : f32
// CHECK-NEXT: %[[WD:.+]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT: %[[DECAY:.+]] = arith.mulf %[[WD]], %[[PE]] : f32
// CHECK-NEXT: %[[GRAD:.+]] = arith.addf %[[GS]], %[[DECAY]] : f32
// CHECK-NEXT: %[[KEPT:.+]] = arith.mulf %[[MU]], %[[VE]] : f32
// CHECK-NEXT: %[[NEWV:.+]] = arith.addf %[[KEPT]], %[[GRAD]] : f32
// CHECK-NEXT: %[[AHEAD:.+]] = arith.mulf %[[MU]], %[[NEWV]] : f32
// CHECK-NEXT: %[[DIR:.+]] = arith.addf %[[GRAD]], %[[AHEAD]] : f32
// CHECK-NEXT: %[[STEP:.+]] = arith.mulf %[[LRE]], %[[DIR]] : f32
// CHECK-NEXT: %[[NEWP:.+]] = arith.subf %[[PE]], %[[STEP]] : f32
// CHECK-NEXT: linalg.yield %[[NEWP]], %[[NEWV]] : f32, f32
// CHECK: return %[[PLAIN]]#0, %[[PLAIN]]#1, %[[NESTEROV]]#0, %[[NESTEROV]]#1 :
nn.graph @momentum(%p: !nn.tensor<[3, 4], f32>, %g: !nn.tensor<[3, 4], f32>,
                   %v: !nn.tensor<[3, 4], f32>, %lr: !nn.tensor<[], f32>,
                   %s: !nn.tensor<[], f32>)
    -> (!nn.tensor<[3, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[3, 4], f32>) dims [] {
  %p1, %v1 = nn.momentum_update %p, %g, %v lr %lr momentum 0.9 : !nn.tensor<[3, 4], f32>
  %p2, %v2 = nn.momentum_update %p, %g, %v lr %lr scale %s momentum 0.5 nesterov weight_decay 0.25 : !nn.tensor<[3, 4], f32>
  nn.return %p1, %v1, %p2, %v2 : !nn.tensor<[3, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[3, 4], f32>
}

// -----

// The parameter regularization loss: each input's squares summed in f64
// (f32 elements widened first), the sums added and rounded once to f32;
// its gradient 2 dy x, the rank-0 dy broadcast (and widened to an f64
// parameter's type).
// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ALL2:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[ID1:.+]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[ALL1:.+]] = affine_map<(d0) -> ()>
// CHECK-DAG: #[[SCALAR:.+]] = affine_map<() -> ()>
// CHECK-LABEL: func.func @param_norm(
// CHECK-SAME: %[[W:[^:]+]]: tensor<3x4xf32>, %[[B:[^:]+]]: tensor<3xf64>, %[[DL:[^:]+]]: tensor<f32>)
// CHECK: %[[SW:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ALL2]]], iterator_types = ["reduction", "reduction"]} ins(%[[W]] : tensor<3x4xf32>) outs(%{{.+}} : tensor<f64>)
// CHECK-NEXT: ^bb0(%[[WE:[^:]+]]: f32, %[[WACC:[^:]+]]: f64):
// CHECK-NEXT: %[[WX:.+]] = arith.extf %[[WE]] : f32 to f64
// CHECK-NEXT: %[[WSQ:.+]] = arith.mulf %[[WX]], %[[WX]] : f64
// CHECK-NEXT: %[[WSUM:.+]] = arith.addf %[[WACC]], %[[WSQ]] : f64
// CHECK-NEXT: linalg.yield %[[WSUM]] : f64
// CHECK: %[[SB:.+]] = linalg.generic {indexing_maps = [#[[ID1]], #[[ALL1]]], iterator_types = ["reduction"]} ins(%[[B]] : tensor<3xf64>) outs(%{{.+}} : tensor<f64>)
// CHECK-NEXT: ^bb0(%[[BE:[^:]+]]: f64, %[[BACC:[^:]+]]: f64):
// CHECK-NEXT: %[[BSQ:.+]] = arith.mulf %[[BE]], %[[BE]] : f64
// CHECK-NEXT: %[[BSUM:.+]] = arith.addf %[[BACC]], %[[BSQ]] : f64
// CHECK: %[[N:.+]] = linalg.generic {indexing_maps = [#[[SCALAR]], #[[SCALAR]], #[[SCALAR]]], iterator_types = []} ins(%[[SW]], %[[SB]] : tensor<f64>, tensor<f64>) outs(%{{.+}} : tensor<f32>)
// CHECK-NEXT: ^bb0(%[[A:[^:]+]]: f64, %[[C:[^:]+]]: f64, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[TOTAL:.+]] = arith.addf %[[A]], %[[C]] : f64
// CHECK-NEXT: %[[ROUNDED:.+]] = arith.truncf %[[TOTAL]] : f64 to f32
// CHECK-NEXT: linalg.yield %[[ROUNDED]] : f32
// CHECK: %[[DB:.+]] = linalg.generic {indexing_maps = [#[[ID1]], #[[ALL1]], #[[ID1]]], iterator_types = ["parallel"]} ins(%[[B]], %[[DL]] : tensor<3xf64>, tensor<f32>) outs(%{{.+}} : tensor<3xf64>)
// CHECK-NEXT: ^bb0(%[[X:[^:]+]]: f64, %[[G:[^:]+]]: f32, %{{[^:]+}}: f64):
// CHECK-NEXT: %[[G64:.+]] = arith.extf %[[G]] : f32 to f64
// CHECK-NEXT: %[[GX:.+]] = arith.mulf %[[G64]], %[[X]] : f64
// CHECK-NEXT: %[[TWO:.+]] = arith.constant 2.000000e+00 : f64
// CHECK-NEXT: %[[D:.+]] = arith.mulf %[[TWO]], %[[GX]] : f64
// CHECK-NEXT: linalg.yield %[[D]] : f64
// CHECK: return %[[N]], %[[DB]] : tensor<f32>, tensor<3xf64>
nn.graph @param_norm(%w: !nn.tensor<[3, 4], f32>, %b: !nn.tensor<[3], f64>, %dl: !nn.tensor<[], f32>)
    -> (!nn.tensor<[], f32>, !nn.tensor<[3], f64>) dims [] {
  %n = nn.param_norm %w, %b : !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f64>
  %db = nn.param_norm_grad %dl, %b : !nn.tensor<[3], f64>
  nn.return %n, %db : !nn.tensor<[], f32>, !nn.tensor<[3], f64>
}
