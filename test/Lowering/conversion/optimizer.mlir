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
// CHECK: arith.sitofp %{{.+}} : i32 to f64
// CHECK: math.powf {{.+}} : f64
// CHECK: math.powf {{.+}} : f64
// CHECK: math.sqrt {{.+}} : f64
// CHECK: %{{.+}}:3 = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]], #[[ID]], #[[BCAST]], #[[BCAST]], #[[BCAST]], #[[ID]], #[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[P]], %[[G]], %[[M]], %[[V]], %[[K]]#0, %[[K]]#1, %[[K]]#2 :
// Decoupled decay scales the parameter first; then m, v and the step.
// CHECK: ^bb0(%[[PE:[^:]+]]: f32, %[[GE:[^:]+]]: f32, %[[ME:[^:]+]]: f32, %[[VE:[^:]+]]: f32, %[[SIZE:[^:]+]]: f32, %[[ROOT:[^:]+]]: f32, %[[KEEP:[^:]+]]: f32,
// CHECK: %[[DECAYED:.+]] = arith.mulf %[[PE]], %[[KEEP]] : f32
// CHECK: math.sqrt %{{.+}} : f32
// CHECK: arith.divf %{{.+}}, %[[ROOT]] : f32
// CHECK: %[[STEP:.+]] = arith.mulf %[[SIZE]], %{{.+}} : f32
// CHECK: %[[NEW:.+]] = arith.subf %[[DECAYED]], %[[STEP]] : f32
// CHECK: linalg.yield %[[NEW]], %{{.+}}, %{{.+}} : f32, f32, f32
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
// CHECK: %[[A:.+]] = linalg.generic {{.+}} iterator_types = ["reduction", "reduction"]} ins(%{{.+}} : tensor<3x4xf32>) outs(%{{.+}} : tensor<f64>)
// CHECK: %[[B:.+]] = linalg.generic {{.+}} iterator_types = ["reduction"]} ins(%{{.+}} : tensor<3xf32>) outs(%{{.+}} : tensor<f64>)
// CHECK: %[[N:.+]] = linalg.generic {{.+}} iterator_types = []} ins(%[[A]], %[[B]] : tensor<f64>, tensor<f64>) outs(%{{.+}} : tensor<f32>)
// CHECK: math.sqrt
// CHECK: %[[S:.+]] = linalg.generic {{.+}} iterator_types = []} ins(%[[N]] : tensor<f32>) outs(%{{.+}} : tensor<f32>)
// CHECK: arith.minimumf
// The scaled gradient with L2 decay: p - lr (g s + wd p).
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %{{.+}}, %[[S]] : tensor<3xf32>, tensor<3xf32>, tensor<f32>, tensor<f32>)
// CHECK: ^bb0(%[[PE:[^:]+]]: f32, %[[GE:[^:]+]]: f32, %[[LRE:[^:]+]]: f32, %[[SE:[^:]+]]: f32,
// CHECK: %[[GS:.+]] = arith.mulf %[[GE]], %[[SE]] : f32
// CHECK: %[[WD:.+]] = arith.mulf %{{.+}}, %[[PE]] : f32
// CHECK: %[[SUM:.+]] = arith.addf %[[GS]], %[[WD]] : f32
// CHECK: %[[DELTA:.+]] = arith.mulf %[[LRE]], %[[SUM]] : f32
// CHECK: arith.subf %[[PE]], %[[DELTA]] : f32
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
