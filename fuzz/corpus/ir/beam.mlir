
nn.graph @nbest(%z: !nn.tensor<[B, T, 5], f32>, %ref: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, T, 5], f32>)
    dims [B: batch, T: seq(B), U: seq(B), K: seq(B) computed,
          H: batch = flatten(B, K), Y: seq(H) computed, Y1: seq(H) = Y + 1,
          TH: seq(H) = T, UH: seq(H) = U, J: packed(H, TH, Y1)] {
  %h, %s = nn.ctc_beam_search %z from logits blank 0 beam 4 merge sum
      : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
  %yh = nn.flatten_beam %h : !nn.tensor<[B, K, Y], i32> -> !nn.tensor<[H, Y], i32>
  %zh = nn.repeat_beam %z : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[H, TH, 5], f32>
  %rh = nn.repeat_beam %ref : !nn.tensor<[B, U], i32> -> !nn.tensor<[H, UH], i32>
  %e, %n, %c = nn.edit_distance %yh, %rh : !nn.tensor<[H, Y], i32>, !nn.tensor<[H, UH], i32>
  %ek = nn.unflatten_beam %e : !nn.tensor<[H], f32> -> !nn.tensor<[B, K], f32>
  %g = nn.sum_beam %zh : !nn.tensor<[H, TH, 5], f32> -> !nn.tensor<[B, T, 5], f32>
  nn.return %h, %s, %ek, %g : !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, T, 5], f32>
}

nn.graph @given(%x: !nn.tensor<[H, 3], f64>) -> !nn.tensor<[H, 3], f64>
    dims [B: batch, K: seq(B), H: batch = flatten(B, K)] {
  %u = nn.unflatten_beam %x : !nn.tensor<[H, 3], f64> -> !nn.tensor<[B, K, 3], f64>
  %f = nn.flatten_beam %u : !nn.tensor<[B, K, 3], f64> -> !nn.tensor<[H, 3], f64>
  nn.return %f : !nn.tensor<[H, 3], f64>
}
