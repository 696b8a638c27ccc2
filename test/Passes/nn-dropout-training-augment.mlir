// RUN: nn-opt %s --nn-dropout-training | FileCheck %s

// nn.spec_augment draws its masks like a dropout: it gets the seed and a
// key of its own (unique beside the dropouts'); one that masks nothing
// (no masks, or width 0) is left alone.
// CHECK-LABEL: nn.graph @augment(%x: !nn.tensor<[B, T, 8], f32>, %dropout_seed: !nn.tensor<[], i32>)
// CHECK: nn.spec_augment %x seed %dropout_seed freq_masks 2 freq_width 3 time_masks 1 time_width 5 :
// CHECK: nn.dropout %{{.+}} seed %dropout_seed rate 1.000000e-01 key 1 :
// CHECK: nn.spec_augment %{{.+}} freq_masks 2 freq_width 0 time_masks 0 time_width 5 : !nn.tensor<[B, T, 8], f32>
nn.graph @augment(%x: !nn.tensor<[B, T, 8], f32>) -> !nn.tensor<[B, T, 8], f32>
    dims [B: batch, T: seq(B)] {
  %a = nn.spec_augment %x freq_masks 2 freq_width 3 time_masks 1 time_width 5 : !nn.tensor<[B, T, 8], f32>
  %d = nn.dropout %a rate 1.000000e-01 : !nn.tensor<[B, T, 8], f32>
  %n = nn.spec_augment %d freq_masks 2 freq_width 0 time_masks 0 time_width 5 : !nn.tensor<[B, T, 8], f32>
  nn.return %n : !nn.tensor<[B, T, 8], f32>
}
