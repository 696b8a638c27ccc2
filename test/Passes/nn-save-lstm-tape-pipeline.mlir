// RUN: nn-opt %s --pass-pipeline='builtin.module(nn-optimize{grads=true})' | FileCheck %s --check-prefix=PIPELINE
// RUN: nn-opt %s --pass-pipeline='builtin.module(nn-optimize{grads=true save-lstm-tape=false})' | FileCheck %s --check-prefix=RECOMPUTE

// In the pipeline with gradients, the lstm whose gradient nn-autodiff
// built keeps its tape (six blocks of H per direction: 2 x 6 x 8 = 96
// features) and its lstm_grad reads it; save-lstm-tape=false leaves the
// gradient recomputing. Packing moved the lstm behind the pack of its
// input: its result and tape are packed rows.
// PIPELINE-LABEL: nn.graph @bidirectional
// PIPELINE: %[[PX:.+]] = nn.pack %x
// PIPELINE: %{{.+}}, %[[TAPE:.+]] = nn.lstm_with_tape bidirectional %[[PX]], {{.+}} -> !nn.tensor<[N_T, 16], f32>, !nn.tensor<[N_T, 96], f32>
// PIPELINE-NOT: nn.lstm {{.+}}
// PIPELINE: nn.lstm_grad bidirectional %{{.+}}, %[[PX]], {{.+}} tape %[[TAPE]] :
// RECOMPUTE-LABEL: nn.graph @bidirectional
// RECOMPUTE: nn.lstm bidirectional
// RECOMPUTE-NOT: tape
// RECOMPUTE: nn.lstm_grad bidirectional
// RECOMPUTE-NOT: tape
nn.parameter @wi : !nn.tensor<[2, 32, 5], f32>
nn.parameter @wh : !nn.tensor<[2, 32, 8], f32>
nn.parameter @b : !nn.tensor<[2, 32], f32>
nn.graph @bidirectional(%x: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T, 16], f32>) dims [B: batch, T: seq(B)] {
  %wi = nn.param_ref @wi : !nn.tensor<[2, 32, 5], f32>
  %wh = nn.param_ref @wh : !nn.tensor<[2, 32, 8], f32>
  %b = nn.param_ref @b : !nn.tensor<[2, 32], f32>
  %h = nn.lstm bidirectional %x, %wi, %wh, %b : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[2, 32, 5], f32>, !nn.tensor<[2, 32, 8], f32>, !nn.tensor<[2, 32], f32>
  %e = nn.mse %h, %t : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[B, T, 16], f32>
  nn.mark_loss %e as "mse" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}
