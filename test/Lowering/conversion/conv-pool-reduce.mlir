// RUN: nn-opt %s --split-input-file --nn-convert-to-linalg | FileCheck %s

// Windows and reductions over a sequence axis (ConvPoolReducePatterns.cpp).

// Convolution reads frames t * stride - (K - 1) / 2 + k only inside
// [0, len(b)); pooling reads only t < len(b); reduce masks the reduced axis.
// CHECK-LABEL: func.func @conv
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK-DAG:   arith.cmpi sge
// CHECK-DAG:   arith.cmpi slt
// CHECK:   tensor.extract %{{.+}} : tensor<?x?x2xf32>
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

// conv1d's gradients (nn.conv1d_grad): dx sums over (o, k) the output
// frames t' = (s + pad - k) / stride that exist (divisible, inside the
// output length) at valid input frames s; dw sums over (b, t') the input
// frames each tap read. Every term is selected, never multiplied by a mask.
// CHECK-LABEL: func.func @conv1d_grad
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK:   arith.divsi
// CHECK:   arith.remsi
// CHECK:   tensor.extract
// CHECK:   arith.select
// CHECK: linalg.generic {{.+}}iterator_types = ["reduction", "reduction", "parallel", "parallel", "parallel"]
// CHECK:   tensor.extract
// CHECK:   arith.select
// CHECK: return
nn.graph @conv1d_grad(%dy: !nn.tensor<[B, T2, 4], f32>, %x: !nn.tensor<[B, T, 3], f32>,
                      %w: !nn.tensor<[4, 2, 3], f32>)
    -> (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 2, 3], f32>)
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %dx, %dw = nn.conv1d_grad %dy, %x, %w stride 2 : !nn.tensor<[B, T2, 4], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 2, 3], f32>
  nn.return %dx, %dw : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 2, 3], f32>
}

// -----

// A grouped convolution: output channel o reads the input channels of its
// group, from (o / (Cout / G)) (Cin / G); the input gradient runs over
// (b, t, c, o, k) with o within c's group and reads the weight by index.
// CHECK-LABEL: func.func @grouped
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK:   arith.divui %{{.+}}, %c2
// CHECK:   arith.muli %{{.+}}, %c2
// CHECK:   tensor.extract %{{.+}} : tensor<?x?x4xf32>
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK:   arith.divui %{{.+}}, %c2
// CHECK:   arith.remui %{{.+}}, %c2
// CHECK:   tensor.extract %{{.+}} : tensor<4x3x2xf32>
nn.graph @grouped(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[4, 3, 2], f32>, %dy: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[4, 3, 2], f32>)
    dims [B: batch, T: seq(B)] {
  %y = nn.conv1d %x, %w stride 1 groups 2 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[4, 3, 2], f32>) -> !nn.tensor<[B, T, 4], f32>
  %dx, %dw = nn.conv1d_grad %dy, %x, %w stride 1 groups 2 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[4, 3, 2], f32>
  nn.return %y, %dx, %dw : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[4, 3, 2], f32>
}
