// Verifier errors of nn.spec_augment: one case per branch.
// RUN: nn-opt %s --split-input-file --verify-diagnostics

nn.graph @g(%x: !nn.tensor<[B, T, 40], f32>, %s: !nn.tensor<[], i64>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{seed must be a scalar !nn.tensor<[], i32> (or !nn.tensor<[2], i32>: the seed and the batch offset), got '!nn.tensor<[], i64>'}}
  %a = nn.spec_augment %x seed %s freq_masks 2 freq_width 8 time_masks 2 time_width 20 : !nn.tensor<[B, T, 40], f32>, !nn.tensor<[], i64>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, 40], f32>) dims [B: batch] {
  // expected-error @+1 {{input must be features over one sequence dim, [B, T, F] or packed [N, F] with a static F, got '!nn.tensor<[B, 40], f32>'}}
  %a = nn.spec_augment %x freq_masks 2 freq_width 8 time_masks 2 time_width 20 : !nn.tensor<[B, 40], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, U, 4], f32>) dims [B: batch, T: seq(B), U: seq(B)] {
  // expected-error @+1 {{input must be features over one sequence dim}}
  %a = nn.spec_augment %x freq_masks 2 freq_width 2 time_masks 2 time_width 20 : !nn.tensor<[B, T, U, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{input must be features over one sequence dim}}
  %a = nn.spec_augment %x freq_masks 0 freq_width 0 time_masks 2 time_width 20 : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 40], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{time_masks must be >= 0, got -1}}
  %a = nn.spec_augment %x freq_masks 2 freq_width 8 time_masks -1 time_width 20 : !nn.tensor<[B, T, 40], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 40], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{freq_width 41 exceeds the 40 features}}
  %a = nn.spec_augment %x freq_masks 2 freq_width 41 time_masks 2 time_width 20 : !nn.tensor<[B, T, 40], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 40], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{time_width 4294967296 does not fit the 32-bit mask arithmetic}}
  %a = nn.spec_augment %x freq_masks 2 freq_width 8 time_masks 2 time_width 4294967296 : !nn.tensor<[B, T, 40], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 40], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{at most 1024 masks of a kind, got 5000}}
  %a = nn.spec_augment %x freq_masks 5000 freq_width 8 time_masks 2 time_width 20 : !nn.tensor<[B, T, 40], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 40], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{time_ratio must be in (0, 1], got 1.5}}
  %a = nn.spec_augment %x freq_masks 2 freq_width 8 time_masks 2 time_width 20 time_ratio 1.5 : !nn.tensor<[B, T, 40], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[J, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), J: packed(B, T, U)] {
  // expected-error @+1 {{input must be features over one sequence dim}}
  %a = nn.spec_augment %x freq_masks 2 freq_width 2 time_masks 2 time_width 2 : !nn.tensor<[J, 4], f32>
  nn.return
}
