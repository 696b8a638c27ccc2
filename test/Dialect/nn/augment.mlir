// Round trip of nn.spec_augment (NNAugmentOps.td): evaluation form,
// training form with a seed and key, packed input; the default time_ratio
// (1.0) and key (0) are not printed. Without masks it folds away.
// RUN: nn-opt %s | nn-opt | FileCheck %s
// RUN: nn-opt %s --mlir-print-op-generic | nn-opt | FileCheck %s
// RUN: nn-opt %s --canonicalize | FileCheck %s --check-prefix=FOLD

// CHECK-LABEL: nn.graph @spec_augment
// CHECK: nn.spec_augment %x freq_masks 2 freq_width 8 time_masks 2 time_width 20 : !nn.tensor<[B, T, 40], f32>
// CHECK-NEXT: nn.spec_augment %x seed %seed freq_masks 1 freq_width 4 time_masks 3 time_width 10 time_ratio 2.000000e-01 key 3 : !nn.tensor<[B, T, 40], f32>, !nn.tensor<[], i32>
// CHECK: nn.spec_augment %{{.+}} seed %seed freq_masks 2 freq_width 8 time_masks 0 time_width 0 : !nn.tensor<[N, 40], f32>, !nn.tensor<[], i32>
// FOLD-LABEL: nn.graph @spec_augment
// FOLD-COUNT-3: nn.spec_augment
// FOLD-NOT: nn.spec_augment
nn.graph @spec_augment(%x: !nn.tensor<[B, T, 40], f32>, %seed: !nn.tensor<[], i32>)
    -> (!nn.tensor<[B, T, 40], f32>, !nn.tensor<[B, T, 40], f32>, !nn.tensor<[N, 40], f32>, !nn.tensor<[B, T, 40], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %a = nn.spec_augment %x freq_masks 2 freq_width 8 time_masks 2 time_width 20 : !nn.tensor<[B, T, 40], f32>
  %b = nn.spec_augment %x seed %seed freq_masks 1 freq_width 4 time_masks 3 time_width 10 time_ratio 2.000000e-01 key 3 : !nn.tensor<[B, T, 40], f32>, !nn.tensor<[], i32>
  %p = nn.pack %x : !nn.tensor<[B, T, 40], f32> -> !nn.tensor<[N, 40], f32>
  %c = nn.spec_augment %p seed %seed freq_masks 2 freq_width 8 time_masks 0 time_width 0 : !nn.tensor<[N, 40], f32>, !nn.tensor<[], i32>
  %d = nn.spec_augment %x seed %seed freq_masks 0 freq_width 8 time_masks 2 time_width 0 : !nn.tensor<[B, T, 40], f32>, !nn.tensor<[], i32>
  nn.return %a, %b, %c, %d : !nn.tensor<[B, T, 40], f32>, !nn.tensor<[B, T, 40], f32>, !nn.tensor<[N, 40], f32>, !nn.tensor<[B, T, 40], f32>
}
