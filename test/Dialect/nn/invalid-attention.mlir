// Verifier errors of nn.attention, nn.attention_with_stats and
// nn.attention_grad: one case per verifier branch.
// RUN: nn-opt %s --split-input-file --verify-diagnostics

nn.graph @g(%q: !nn.tensor<[B, 8], f32>, %v: !nn.tensor<[B, T, 6], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{query must be the frames of one sequence dim, padded [batch, sequence, ...] or packed [packed(batch, sequence), ...], got '!nn.tensor<[B, 8], f32>'}}
  %y = nn.attention %q, %q, %v heads 2 : !nn.tensor<[B, 8], f32>, !nn.tensor<[B, 8], f32>, !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 2, 4], f32>, %v: !nn.tensor<[B, T, 6], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{query must have position axes then one static feature axis, got '!nn.tensor<[B, T, 2, 4], f32>'}}
  %y = nn.attention %q, %q, %v heads 2 : !nn.tensor<[B, T, 2, 4], f32>, !nn.tensor<[B, T, 2, 4], f32>, !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %k: !nn.tensor<[N, 8], f32>, %v: !nn.tensor<[B, T, 6], f32>) dims [B: batch, T: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{key must be padded like the query, got '!nn.tensor<[N, 8], f32>'}}
  %y = nn.attention %q, %k, %v heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[N, 8], f32>, !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[N, 8], f32>, %v: !nn.tensor<[B, T, 6], f32>) dims [B: batch, T: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{value must be packed like the query, got '!nn.tensor<[B, T, 6], f32>'}}
  %y = nn.attention %q, %q, %v heads 2 : !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 8], f32>, !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %k: !nn.tensor<[C, S, 8], f32>, %v: !nn.tensor<[C, S, 6], f32>) dims [B: batch, T: seq(B), C: batch, S: seq(C)] {
  // expected-error @+1 {{key batch 'C' differs from the query's 'B'}}
  %y = nn.attention %q, %k, %v heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[C, S, 8], f32>, !nn.tensor<[C, S, 6], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %v: !nn.tensor<[B, U, 6], f32>) dims [B: batch, T: seq(B), U: seq(B)] {
  // expected-error @+1 {{value must be over the key's sequence dim 'T', got '!nn.tensor<[B, U, 6], f32>'}}
  %y = nn.attention %q, %q, %v heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, U, 6], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %v: !nn.tensor<[B, T, 6], f64>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{query, key and value must have one element type}}
  %y = nn.attention %q, %q, %v heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f64>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %k: !nn.tensor<[B, T, 4], f32>, %v: !nn.tensor<[B, T, 6], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{key must have the query's 8 features, got '!nn.tensor<[B, T, 4], f32>'}}
  %y = nn.attention %q, %k, %v heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %v: !nn.tensor<[B, T, 6], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{4 heads must divide the query's 8 and the value's 6 features}}
  %y = nn.attention %q, %q, %v heads 4 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%u: !nn.tensor<[B, U, 8], f32>, %k: !nn.tensor<[B, T, 8], f32>, %v: !nn.tensor<[B, T, 6], f32>) dims [B: batch, T: seq(B), U: seq(B)] {
  // expected-error @+1 {{a mask needs self-attention: key over the query's sequence dim 'U', got '!nn.tensor<[B, T, 8], f32>'}}
  %y = nn.attention %u, %k, %v heads 2 causal : !nn.tensor<[B, U, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %v: !nn.tensor<[B, T, 6], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{causal and right_context exclude each other (causal is right_context 0)}}
  %y = nn.attention %q, %q, %v heads 2 causal right_context 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %v: !nn.tensor<[B, T, 6], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{left_chunks needs chunk_size}}
  %y = nn.attention %q, %q, %v heads 2 left_chunks 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %v: !nn.tensor<[B, T, 6], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{attribute 'heads' failed to satisfy constraint}}
  %y = nn.attention %q, %q, %v heads 0 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %v: !nn.tensor<[B, T, 6], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{attribute 'left_context' failed to satisfy constraint}}
  %y = nn.attention %q, %q, %v heads 2 left_context -1 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %v: !nn.tensor<[B, T, 6], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{result must be '!nn.tensor<[B, T, 6], f32>', got '!nn.tensor<[B, T, 8], f32>'}}
  %y = "nn.attention"(%q, %q, %v) <{heads = 2 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>}> : (!nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>) -> !nn.tensor<[B, T, 8], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %v: !nn.tensor<[B, T, 6], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{grad must be the attention's result type '!nn.tensor<[B, T, 6], f32>', got '!nn.tensor<[B, T, 8], f32>'}}
  %dq, %dk, %dv = nn.attention_grad %q, %q, %q, %v heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 6], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{2 heads must divide the input's 6 features into heads of an even size}}
  %y = nn.rotary %q heads 2 : !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, 6], f32>) dims [B: batch] {
  // expected-error @+1 {{input must be the frames of one sequence dim}}
  %y = nn.rotary %q heads 1 : !nn.tensor<[B, 6], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %v: !nn.tensor<[B, T, 6], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{left_context must be at most 2147483647, got 2147483648}}
  %y = nn.attention %q, %q, %v heads 2 left_context 2147483648 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 0], f32>, %v: !nn.tensor<[B, T, 6], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{2 heads must divide the query's 0 and the value's 6 features}}
  %y = nn.attention %q, %q, %v heads 2 : !nn.tensor<[B, T, 0], f32>, !nn.tensor<[B, T, 0], f32>, !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %p: !nn.tensor<[6, 8], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{positions must be a static [2c + 1, 8] table of 'f32', got '!nn.tensor<[6, 8], f32>'}}
  %y = nn.attention %q, %q, %q relative %q, %p heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[6, 8], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %p: !nn.tensor<[B, T, 8], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{positions must be a static [2c + 1, 8] table of 'f32', got '!nn.tensor<[B, T, 8], f32>'}}
  %y = nn.attention %q, %q, %q relative %q, %p heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %r: !nn.tensor<[B, T, 6], f32>, %p: !nn.tensor<[5, 8], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{position queries must have the query's type '!nn.tensor<[B, T, 8], f32>', got '!nn.tensor<[B, T, 6], f32>'}}
  %y = nn.attention %q, %q, %q relative %r, %p heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[5, 8], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{relative takes two operands (the position queries and the table), got 1}}
  %y = nn.attention %q, %q, %q relative %q heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>
  nn.return
}

// -----

nn.graph @g(%u: !nn.tensor<[B, U, 8], f32>, %k: !nn.tensor<[B, T, 8], f32>, %p: !nn.tensor<[5, 8], f32>) dims [B: batch, T: seq(B), U: seq(B)] {
  // expected-error @+1 {{relative positions need self-attention: key over the query's sequence dim 'U', got '!nn.tensor<[B, T, 8], f32>'}}
  %y = nn.attention %u, %k, %k relative %u, %p heads 2 : !nn.tensor<[B, U, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, U, 8], f32>, !nn.tensor<[5, 8], f32>
  nn.return
}

// -----

nn.graph @g(%w: !nn.tensor<[8, 5], f32>) dims [B: batch] {
  // expected-error @+1 {{weight must be a static [out, embedding] matrix with an even, nonzero embedding size, got '!nn.tensor<[8, 5], f32>'}}
  %p = nn.relative_positions %w : !nn.tensor<[8, 5], f32> -> !nn.tensor<[5, 8], f32>
  nn.return
}

// -----

nn.graph @g(%w: !nn.tensor<[8, 6], f32>) dims [B: batch] {
  // expected-error @+1 {{result must be a static [2c + 1, 8] table of 'f32', got '!nn.tensor<[5, 6], f32>'}}
  %p = nn.relative_positions %w : !nn.tensor<[8, 6], f32> -> !nn.tensor<[5, 6], f32>
  nn.return
}

// -----

nn.graph @g(%g: !nn.tensor<[4, 8], f32>, %w: !nn.tensor<[8, 6], f32>) dims [B: batch] {
  // expected-error @+1 {{grad must be a static [2c + 1, 8] table of 'f32', got '!nn.tensor<[4, 8], f32>'}}
  %p = nn.relative_positions_grad %g, %w : !nn.tensor<[4, 8], f32>, !nn.tensor<[8, 6], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %s: !nn.tensor<[], i32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{a seed needs dropout}}
  %y = nn.attention %q, %q, %q seed %s heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[], i32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %s: !nn.tensor<[B], i32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{seed must be a scalar !nn.tensor<[], i32> (or !nn.tensor<[2], i32>: the seed and the batch offset), got '!nn.tensor<[B], i32>'}}
  %y = nn.attention %q, %q, %q seed %s heads 2 dropout 0.1 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B], i32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{attribute 'dropout' failed to satisfy constraint}}
  %y = nn.attention %q, %q, %q heads 2 dropout 1.0 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>
  nn.return
}

// -----

nn.graph @g(%w: !nn.tensor<[8, 0], f32>) dims [B: batch] {
  // expected-error @+1 {{weight must be a static [out, embedding] matrix with an even, nonzero embedding size, got '!nn.tensor<[8, 0], f32>'}}
  %p = nn.relative_positions %w : !nn.tensor<[8, 0], f32> -> !nn.tensor<[1, 8], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{dropout_key needs dropout}}
  %y = nn.attention %q, %q, %q heads 2 dropout_key 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %p: !nn.tensor<[5, 8], f16>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{positions must be a static [2c + 1, 8] table of 'f32', got '!nn.tensor<[5, 8], f16>'}}
  %y = nn.attention %q, %q, %q relative %q, %p heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[5, 8], f16>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{result must be '!nn.tensor<[B, T, 8], f32>', got '!nn.tensor<[B, T, 4], f32>'}}
  %y, %s = nn.attention_with_stats %q, %q, %q heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 2], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{stats must be '!nn.tensor<[B, T, 2], f32>', got '!nn.tensor<[B, T, 8], f32>'}}
  %y, %s = nn.attention_with_stats %q, %q, %q heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>
  nn.return
}

// -----

// Only the generic form can give one of the two saved values.
nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{saved takes the forward's result and its stats}}
  %dq, %dk, %dv = "nn.attention_grad"(%q, %q, %q, %q, %q) <{heads = 2 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 1, 0>}> : (!nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>) -> (!nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>)
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %s: !nn.tensor<[B, T, 2], f32>, %y: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{the saved output must be the attention's result type '!nn.tensor<[B, T, 8], f32>', got '!nn.tensor<[B, T, 4], f32>'}}
  %dq, %dk, %dv = nn.attention_grad %q, %q, %q, %q saved %y, %s heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 2], f32>
  nn.return
}

// -----

nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %s: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{the saved stats must be '!nn.tensor<[B, T, 2], f32>', got '!nn.tensor<[B, T, 4], f32>'}}
  %dq, %dk, %dv = nn.attention_grad %q, %q, %q, %q saved %q, %s heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

// Values of the right types that no attention_with_stats gave.
nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %s: !nn.tensor<[B, T, 2], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{saved takes the result and the stats of one nn.attention_with_stats of the same operands and attributes}}
  %dq, %dk, %dv = nn.attention_grad %q, %q, %q, %q saved %q, %s heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 2], f32>
  nn.return
}

// -----

// The output and the stats of two different attentions.
nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>) dims [B: batch, T: seq(B)] {
  %y, %ys = nn.attention_with_stats %q, %q, %q heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 2], f32>
  %z, %zs = nn.attention_with_stats %q, %q, %q heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 2], f32>
  // expected-error @+1 {{saved takes the result and the stats of one nn.attention_with_stats of the same operands and attributes}}
  %dq, %dk, %dv = nn.attention_grad %q, %q, %q, %q saved %y, %zs heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 2], f32>
  nn.return
}

// -----

// The stats of an attention over other keys.
nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %k: !nn.tensor<[B, T, 8], f32>) dims [B: batch, T: seq(B)] {
  %y, %ys = nn.attention_with_stats %q, %k, %q heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 2], f32>
  // expected-error @+1 {{saved takes the result and the stats of one nn.attention_with_stats of the same operands and attributes}}
  %dq, %dk, %dv = nn.attention_grad %q, %q, %q, %q saved %y, %ys heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 2], f32>
  nn.return
}

// -----

// The stats of an attention with another mask.
nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>) dims [B: batch, T: seq(B)] {
  %y, %ys = nn.attention_with_stats %q, %q, %q heads 2 causal : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 2], f32>
  // expected-error @+1 {{saved takes the result and the stats of one nn.attention_with_stats of the same operands and attributes}}
  %dq, %dk, %dv = nn.attention_grad %q, %q, %q, %q saved %y, %ys heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 2], f32>
  nn.return
}

// -----

// The stats of an attention with another scale.
nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>) dims [B: batch, T: seq(B)] {
  %y, %ys = nn.attention_with_stats %q, %q, %q heads 2 scale 2.500000e-01 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 2], f32>
  // expected-error @+1 {{saved takes the result and the stats of one nn.attention_with_stats of the same operands and attributes}}
  %dq, %dk, %dv = nn.attention_grad %q, %q, %q, %q saved %y, %ys heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 2], f32>
  nn.return
}

// -----

// The result and the stats swapped: with a value of 2 features in 2
// heads both have the stats' type.
nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %v: !nn.tensor<[B, T, 2], f32>) dims [B: batch, T: seq(B)] {
  %y, %ys = nn.attention_with_stats %q, %q, %v heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 2], f32> -> !nn.tensor<[B, T, 2], f32>, !nn.tensor<[B, T, 2], f32>
  // expected-error @+1 {{saved takes the result and the stats of one nn.attention_with_stats of the same operands and attributes}}
  %dq, %dk, %dv = nn.attention_grad %y, %q, %q, %v saved %ys, %y heads 2 : !nn.tensor<[B, T, 2], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 2], f32>, !nn.tensor<[B, T, 2], f32>, !nn.tensor<[B, T, 2], f32>
  nn.return
}
