// RUN: nn-opt %s --split-input-file --nn-convert-to-linalg | FileCheck %s

// Windows and reductions over a sequence axis (ConvPoolReducePatterns.cpp).

// Convolution reads frames t * stride - (K - 1) / 2 + k only inside
// [0, len(b)); pooling reads only t < len(b); reduce masks the reduced axis.
// A one-group convolution finds where each tap of each output frame reads
// ([b, t', K] of index, -1 outside the input sequence or past the output
// length: both lengths are read), gathers those windows as
// rows [b, t', K * C] (zero where -1), then contracts them with the
// weight as [O, K * C]: one GEMM for nn-gemm-to-blas.
// CHECK-LABEL: func.func @conv
// CHECK: %[[W:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2]] : tensor<3x3x2xf32> into tensor<3x6xf32>
// CHECK: %[[SRC:.+]] = linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel"]} outs(%{{.+}} : tensor<?x?x3xindex>)
// CHECK-COUNT-2:   tensor.extract %{{.+}} : tensor<?xi32>
// CHECK-NOT: linalg.yield
// CHECK:   arith.select %{{.+}}, %{{.+}}, %c-1 : index
// CHECK: %[[WIN:.+]] = linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[SRC]] : tensor<?x?x3xindex>)
// CHECK:   arith.cmpi sge
// CHECK:   %[[V:.+]] = tensor.extract %{{.+}} : tensor<?x?x2xf32>
// CHECK:   arith.select %{{.+}}, %[[V]], %{{.+}} : f32
// CHECK: %[[ROWS:.+]] = tensor.collapse_shape %[[WIN]] {{\[}}[0], [1], [2, 3]] : tensor<?x?x3x2xf32> into tensor<?x?x6xf32>
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[ROWS]], %[[W]] : tensor<?x?x6xf32>, tensor<3x6xf32>)
nn.graph @conv(%x: !nn.tensor<[B, T, 2], f32>, %w: !nn.tensor<[3, 3, 2], f32>)
    -> !nn.tensor<[B, T2, 3], f32>
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %c = nn.conv1d %x, %w stride 2 : (!nn.tensor<[B, T, 2], f32>, !nn.tensor<[3, 3, 2], f32>) -> !nn.tensor<[B, T2, 3], f32>
  nn.return %c : !nn.tensor<[B, T2, 3], f32>
}
// CHECK-LABEL: func.func @pool
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK:   arith.cmpi slt
// CHECK:   arith.maximumf
nn.graph @pool(%x: !nn.tensor<[B, T, 2], f32>) -> !nn.tensor<[B, T2, 2], f32>
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %p = nn.pool max %x window 2 stride 2 : (!nn.tensor<[B, T, 2], f32>) -> !nn.tensor<[B, T2, 2], f32>
  nn.return %p : !nn.tensor<[B, T2, 2], f32>
}
// CHECK-LABEL: func.func @reduce
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "reduction", "parallel"]
// CHECK:   arith.cmpi slt
// CHECK:   arith.select
nn.graph @reduce(%x: !nn.tensor<[B, T, 2], f32>) -> !nn.tensor<[B, 2], f32>
    dims [B: batch, T: seq(B)] {
  %r = nn.reduce sum %x over 1 : !nn.tensor<[B, T, 2], f32>
  nn.return %r : !nn.tensor<[B, 2], f32>
}

// -----

// The gradient of a max over time: the first valid frame holding the
// maximum (an i64 index per position, -1 until found) gets the gradient.
// CHECK-LABEL: func.func @reduce_max_grad
// CHECK: linalg.fill ins(%{{.+}} : i64)
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "reduction", "parallel"]
// CHECK:   arith.cmpf oeq
// CHECK:   arith.select
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel"]
// CHECK:   arith.cmpi slt
// CHECK:   arith.cmpi eq
// CHECK:   arith.select
nn.graph @reduce_max_grad(%dy: !nn.tensor<[B, 3], f32>, %x: !nn.tensor<[B, T, 3], f32>,
                          %y: !nn.tensor<[B, 3], f32>) -> !nn.tensor<[B, T, 3], f32>
    dims [B: batch, T: seq(B)] {
  %d = nn.reduce_grad max %dy, %x, %y over 1 : !nn.tensor<[B, 3], f32>, !nn.tensor<[B, T, 3], f32>
  nn.return %d : !nn.tensor<[B, T, 3], f32>
}

// -----

// The gradient of an average pool: each valid input frame collects grad /
// count over the valid windows it lies in (o = (t - k) / stride where it
// divides), read by index.
// CHECK-LABEL: func.func @pool_avg_grad
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK:   arith.remsi
// CHECK:   arith.divsi
// CHECK:   tensor.extract
// CHECK:   arith.divf
// CHECK:   arith.select
nn.graph @pool_avg_grad(%dy: !nn.tensor<[B, T2, 3], f32>, %x: !nn.tensor<[B, T, 3], f32>,
                        %y: !nn.tensor<[B, T2, 3], f32>) -> !nn.tensor<[B, T, 3], f32>
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %d = nn.pool_grad avg %dy, %x, %y window 3 stride 2 : !nn.tensor<[B, T2, 3], f32>, !nn.tensor<[B, T, 3], f32>
  nn.return %d : !nn.tensor<[B, T, 3], f32>
}

// -----

// conv1d's gradients (nn.conv1d_grad), one group: the taps dy W
// ([b, t', K * C], a contraction over o), which dx sums over k at the
// output frames t' = (s + pad - k) / stride that exist (divisible, inside
// the output length) for valid input frames s, found once per tap
// ([b, s, K] of index); dw is dy^T times the gathered windows over
// (b, t'), dy's padded positions zeroed by select first (the windows are
// zero there already). Every term is selected, never multiplied by a mask.
// CHECK-LABEL: func.func @conv1d_grad
// CHECK: %[[W:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2]] : tensor<4x2x3xf32> into tensor<4x6xf32>
// CHECK: %[[TAPS:.+]] = linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.+}}, %[[W]] : tensor<?x?x4xf32>, tensor<4x6xf32>)
// CHECK: %[[TAP:.+]] = linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel"]} outs(%{{.+}} : tensor<?x?x2xindex>)
// CHECK:   arith.divsi
// CHECK:   arith.remsi
// CHECK:   arith.select %{{.+}}, %{{.+}}, %c-1 : index
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[TAP]] : tensor<?x?x2xindex>)
// CHECK:   %[[G:.+]] = tensor.extract %[[TAPS]]
// CHECK:   arith.select %{{.+}}, %[[G]], %{{.+}} : f32
// CHECK: %[[WIN:.+]] = linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK: %[[ROWS:.+]] = tensor.collapse_shape %[[WIN]]
// CHECK: %[[DY0:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<?x?x4xf32>, tensor<?xi32>)
// CHECK: %[[DW:.+]] = linalg.generic {{.+}}iterator_types = ["reduction", "reduction", "parallel", "parallel"]} ins(%[[DY0]], %[[ROWS]] : tensor<?x?x4xf32>, tensor<?x?x6xf32>)
// CHECK: tensor.expand_shape %[[DW]] {{\[}}[0], [1, 2]] output_shape [4, 2, 3] : tensor<4x6xf32> into tensor<4x2x3xf32>
// CHECK: return
nn.graph @conv1d_grad(%dy: !nn.tensor<[B, T2, 4], f32>, %x: !nn.tensor<[B, T, 3], f32>,
                      %w: !nn.tensor<[4, 2, 3], f32>)
    -> (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 2, 3], f32>)
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %dx, %dw = nn.conv1d_grad %dy, %x, %w stride 2 : !nn.tensor<[B, T2, 4], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 2, 3], f32>
  nn.return %dx, %dw : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 2, 3], f32>
}

// -----

// A grouped convolution (Cout / G = 3, Cin / G = 2): output channel o
// reads the input channels of its group, from (o / (Cout / G)) (Cin / G);
// the input gradient runs over (b, t, c, o, k) with o within c's group,
// (c / (Cin / G)) (Cout / G) + o, and reads the weight by index; the
// weight gradient runs over (b, t, o, k, c).
// CHECK-LABEL: func.func @grouped
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.+}} : tensor<6x3x2xf32>)
// CHECK:   arith.divui %{{.+}}, %c3
// CHECK:   arith.muli %{{.+}}, %c2
// CHECK:   tensor.extract %{{.+}} : tensor<?x?x4xf32>
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.+}} : tensor<3x3xf32>)
// CHECK:   arith.divui %{{.+}}, %c2
// CHECK:   arith.muli %{{.+}}, %c3
// CHECK:   arith.remui %{{.+}}, %c2
// CHECK:   tensor.extract %{{.+}} : tensor<6x3x2xf32>
// CHECK:   tensor.extract %{{.+}} : tensor<?x?x6xf32>
// CHECK: linalg.generic {{.+}}iterator_types = ["reduction", "reduction", "parallel", "parallel", "parallel"]} ins(%{{.+}} : tensor<?x?x6xf32>)
// CHECK:   arith.divui %{{.+}}, %c3
// CHECK:   tensor.extract %{{.+}} : tensor<?x?x4xf32>
nn.graph @grouped(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 3, 2], f32>, %dy: !nn.tensor<[B, T, 6], f32>)
    -> (!nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 2], f32>)
    dims [B: batch, T: seq(B)] {
  %y = nn.conv1d %x, %w stride 1 groups 2 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 2], f32>) -> !nn.tensor<[B, T, 6], f32>
  %dx, %dw = nn.conv1d_grad %dy, %x, %w stride 1 groups 2 : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 2], f32>
  nn.return %y, %dx, %dw : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 2], f32>
}
