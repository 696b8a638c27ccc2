// Example 3: a small model whose two frame-wise losses share their last
// layers: an LSTM, then linear -> tanh -> linear -> log_softmax feeding a
// cross entropy on frame labels and, through a second head on the same
// hidden layer, a squared-error loss against frame-level targets.
//
//   nn-opt examples/shared_tail_two_losses.mlir

nn.parameter @"lstm.w_ih" : !nn.tensor<[256, 40], f32>
nn.parameter @"lstm.w_hh" : !nn.tensor<[256, 64], f32>
nn.parameter @"lstm.b" : !nn.tensor<[256], f32>
nn.parameter @"hidden.w" : !nn.tensor<[128, 64], f32>
nn.parameter @"hidden.b" : !nn.tensor<[128], f32>
nn.parameter @"cls.w" : !nn.tensor<[50, 128], f32>
nn.parameter @"reg.w" : !nn.tensor<[40, 128], f32>

nn.graph @two_heads(%x: !nn.tensor<[B, T, 40], f32>,
                    %classes: !nn.tensor<[B, T], i32>,
                    %next_frames: !nn.tensor<[B, T, 40], f32>)
    dims [B: batch, T: seq(B)] {
  %wi = nn.param_ref @"lstm.w_ih" : !nn.tensor<[256, 40], f32>
  %wh = nn.param_ref @"lstm.w_hh" : !nn.tensor<[256, 64], f32>
  %b = nn.param_ref @"lstm.b" : !nn.tensor<[256], f32>
  %h = nn.lstm forward %x, %wi, %wh, %b
      : !nn.tensor<[B, T, 40], f32>, !nn.tensor<[256, 40], f32>,
        !nn.tensor<[256, 64], f32>, !nn.tensor<[256], f32>
  %w1 = nn.param_ref @"hidden.w" : !nn.tensor<[128, 64], f32>
  %b1 = nn.param_ref @"hidden.b" : !nn.tensor<[128], f32>
  %z = nn.linear %h, %w1, %b1
      : !nn.tensor<[B, T, 64], f32>, !nn.tensor<[128, 64], f32>,
        !nn.tensor<[128], f32>
  %a = nn.tanh %z : !nn.tensor<[B, T, 128], f32>

  %wc = nn.param_ref @"cls.w" : !nn.tensor<[50, 128], f32>
  %c = nn.linear %a, %wc
      : !nn.tensor<[B, T, 128], f32>, !nn.tensor<[50, 128], f32>
  %lp = nn.log_softmax %c : !nn.tensor<[B, T, 50], f32>
  %ce = nn.cross_entropy %lp, %classes from log_probs
      : !nn.tensor<[B, T, 50], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>

  %wr = nn.param_ref @"reg.w" : !nn.tensor<[40, 128], f32>
  %r = nn.linear %a, %wr
      : !nn.tensor<[B, T, 128], f32>, !nn.tensor<[40, 128], f32>
  %mse = nn.mse %r, %next_frames
      : !nn.tensor<[B, T, 40], f32>, !nn.tensor<[B, T, 40], f32>
  nn.mark_loss %mse as "mse" normalize per_frame scale 2.500000e-01
      : !nn.tensor<[B, T], f32>
  nn.return
}
