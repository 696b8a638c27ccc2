// Verifier errors of the sequence-mixing layers (lstm, conv1d, pool, reduce): one case per verifier branch.
// RUN: nn-opt %s --split-input-file --verify-diagnostics

// A transducer grid's packed rows are not one sequence's frames.
nn.graph @g(%x: !nn.tensor<[J, 4], f32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>) dims [B: batch, T: seq(B), U: seq(B), J: packed(B, T, U)] {
  // expected-error @+1 {{input must be the frames of one sequence dim, padded [batch, sequence, ...] or packed [packed(batch, sequence), ...], got '!nn.tensor<[J, 4], f32>'}}
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[J, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, 4], f32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>) dims [B: batch] {
  // expected-error @+1 {{input must be the frames of one sequence dim, padded [batch, sequence, ...] or packed [packed(batch, sequence), ...], got '!nn.tensor<[B, 4], f32>'}}
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  nn.return
}

// -----

// Packed in, packed out.
nn.graph @g(%x: !nn.tensor<[N, 4], f32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>) dims [B: batch, T: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{result must be '!nn.tensor<[N, 4], f32>', got '!nn.tensor<[B, T, 4], f32>'}}
  %h = "nn.lstm"(%x, %wi, %wh, %b) <{direction = 0 : i32}> : (!nn.tensor<[N, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>) -> !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 5], f32>, %b: !nn.tensor<[16], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{recurrent_weight must be static [4H, H], got '!nn.tensor<[16, 5], f32>'}}
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 5], f32>, !nn.tensor<[16], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{recurrent_weight must be static [2, 4H, H], got '!nn.tensor<[16, 4], f32>'}}
  %h = nn.lstm bidirectional %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{input_weight must have the static shape [16, 3], got '!nn.tensor<[16, 4], f32>'}}
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{result must be '!nn.tensor<[B, T, 4], f32>', got '!nn.tensor<[B, T, 8], f32>'}}
  %h = "nn.lstm"(%x, %wi, %wh, %b) <{direction = 0 : i32}> : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>) -> !nn.tensor<[B, T, 8], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], i32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{operand #0 must be nn tensor of floats, but got '!nn.tensor<[B, T, 4], i32>'}}
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], i32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 3, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{attribute 'stride' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %y = nn.conv1d %x, %w stride 0 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 4], f32>) -> !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 3, 5], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{weight must be static [out, kernel, 4], got '!nn.tensor<[6, 3, 5], f32>'}}
  %y = nn.conv1d %x, %w stride 1 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 5], f32>) -> !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 3, 4], f32>, %b: !nn.tensor<[5], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{bias must have the static shape [6], got '!nn.tensor<[5], f32>'}}
  %y = nn.conv1d %x, %w, %b stride 1 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 4], f32>, !nn.tensor<[5], f32>) -> !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 3, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{result batch 'C' differs from the input's 'B'}}
  %y = nn.conv1d %x, %w stride 1 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 4], f32>) -> !nn.tensor<[C, S, 6], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 3, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{with stride 1 the result must keep sequence dim 'T', got 'T2'}}
  %y = nn.conv1d %x, %w stride 1 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 4], f32>) -> !nn.tensor<[B, T2, 6], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 3, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{with stride 2 the result's sequence dim must be declared 'seq(...) = ceildiv(T, 2)', got 'T3' (did you mean 'T2'?)}}
  %y = nn.conv1d %x, %w stride 2 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 4], f32>) -> !nn.tensor<[B, T3, 6], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 3, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{with stride 4 the result's sequence dim must be declared 'seq(...) = ceildiv(T, 4)', got 'T2'}}
  %y = nn.conv1d %x, %w stride 4 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 4], f32>) -> !nn.tensor<[B, T2, 6], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 3, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{result must have 6 'f32' features, got '!nn.tensor<[B, T, 7], f32>'}}
  %y = nn.conv1d %x, %w stride 1 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 4], f32>) -> !nn.tensor<[B, T, 7], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 3, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{result must be the frames of one sequence dim, padded [batch, sequence, ...] or packed [packed(batch, sequence), ...], got '!nn.tensor<[B, 6], f32>'}}
  %y = nn.conv1d %x, %w stride 1 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 4], f32>) -> !nn.tensor<[B, 6], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{attribute 'window' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %y = nn.pool max %x window 0 stride 1 : (!nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{attribute 'stride' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %y = nn.pool avg %x window 2 stride 0 : (!nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{result must keep the input's 4 'f32' features, got '!nn.tensor<[B, T2, 5], f32>'}}
  %y = nn.pool avg %x window 2 stride 2 : (!nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T2, 5], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{result batch 'C' differs from the input's 'B'}}
  %y = nn.pool avg %x window 2 stride 2 : (!nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[C, S, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{axis 3 is out of range for '!nn.tensor<[B, T, 4], f32>'}}
  %y = nn.reduce sum %x over 3 : !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{axis 2 of '!nn.tensor<[B, T, 4], f32>' must be a sequence axis of padded frames}}
  %y = nn.reduce sum %x over 2 : !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[N, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{axis 0 of '!nn.tensor<[N, 4], f32>' must be a sequence axis of padded frames (a packed value cannot be used here)}}
  %y = nn.reduce max %x over 0 : !nn.tensor<[N, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{result must be '!nn.tensor<[B, 4], f32>', got '!nn.tensor<[B, 5], f32>'}}
  %y = "nn.reduce"(%x) <{kind = 1 : i32, axis = 1 : i64}> : (!nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, 5], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 3, 4], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{attribute 'stride' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %y = nn.conv1d %x, %w stride -2 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 4], f32>) -> !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{tape must be '!nn.tensor<[B, T, 24], f32>', got '!nn.tensor<[B, T, 4], f32>'}}
  %y, %tape = nn.lstm_with_tape forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32> -> !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{result must be '!nn.tensor<[B, T, 4], f32>', got '!nn.tensor<[B, T, 8], f32>'}}
  %y, %tape = nn.lstm_with_tape forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32> -> !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 24], f32>
  nn.return
}

// -----

// A packed input gives a packed result.
nn.graph @g(%x: !nn.tensor<[N, 2], f32>, %w: !nn.tensor<[3, 3, 2], f32>) dims [B: batch, T: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{result must be packed like the input, got '!nn.tensor<[B, T, 3], f32>'}}
  %c = nn.conv1d %x, %w stride 1 : (!nn.tensor<[N, 2], f32>, !nn.tensor<[3, 3, 2], f32>) -> !nn.tensor<[B, T, 3], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 2], f32>) dims [B: batch, T: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{result must be padded like the input, got '!nn.tensor<[N, 2], f32>'}}
  %p = nn.pool max %x window 2 stride 1 : (!nn.tensor<[B, T, 2], f32>) -> !nn.tensor<[N, 2], f32>
  nn.return
}

// -----

// A strided packed result is packed over the strided dim.
nn.graph @g(%x: !nn.tensor<[N, 2], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), N: packed(B, T), N2: packed(B, T2)] {
  // expected-error @+1 {{with stride 2 the result's sequence dim must be declared 'seq(...) = ceildiv(T, 2)', got 'T' (did you mean 'T2'?)}}
  %p = nn.pool max %x window 2 stride 2 : (!nn.tensor<[N, 2], f32>) -> !nn.tensor<[N, 2], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 6], f32>, %w: !nn.tensor<[6, 3, 1], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{4 groups must divide the input's 6 channels}}
  %y = nn.conv1d %x, %w stride 1 groups 4 : (!nn.tensor<[B, T, 6], f32>, !nn.tensor<[6, 3, 1], f32>) -> !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 6], f32>, %w: !nn.tensor<[6, 3, 6], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{weight must be static [out, kernel, 3], got '!nn.tensor<[6, 3, 6], f32>'}}
  %y = nn.conv1d %x, %w stride 1 groups 2 : (!nn.tensor<[B, T, 6], f32>, !nn.tensor<[6, 3, 6], f32>) -> !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 6], f32>, %w: !nn.tensor<[5, 3, 3], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{2 groups must divide the 5 output channels}}
  %y = nn.conv1d %x, %w stride 1 groups 2 : (!nn.tensor<[B, T, 6], f32>, !nn.tensor<[5, 3, 3], f32>) -> !nn.tensor<[B, T, 5], f32>
  nn.return
}
