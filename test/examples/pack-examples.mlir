// pack-before-loss on the bundled examples: example (1) runs everything
// on packed frames (the cost model moves both LSTMs behind a pack of the
// features, and the CTC loss reads packed logits); with pack=loss-tail
// only the CE tail is packed and CTC reads the padded encoder output.
// Example (3) shares one pack of the LSTM output between its two losses;
// example (2)'s criterion one pack of the encoder output between CE and
// CTC.
// RUN: nn-opt %nn_src/examples/blstm_ce_ctc.mlir --nn-pack-before-loss | FileCheck %s --check-prefix=AUTO
// RUN: nn-opt %nn_src/examples/blstm_ce_ctc.mlir --nn-pack-before-loss=pack=loss-tail | FileCheck %s --check-prefix=BLSTM
// RUN: nn-opt %nn_src/examples/shared_tail_two_losses.mlir --nn-pack-before-loss | FileCheck %s --check-prefix=TWO
// RUN: nn-opt %nn_src/examples/conv_encoder_decoupled_loss.mlir --nn-pack-before-loss | FileCheck %s --check-prefix=CONV

// AUTO-LABEL: nn.graph @blstm_am
// AUTO: %[[PY:.+]] = nn.pack %frame_labels
// AUTO: %[[PX:.+]] = nn.pack %features : !nn.tensor<[B, T, 80], f32> -> !nn.tensor<[N_T, 80], f32>
// AUTO: %[[H1:.+]] = nn.lstm bidirectional %[[PX]], {{.+}} : !nn.tensor<[N_T, 80], f32>
// AUTO: %[[D:.+]] = nn.dropout %[[H1]] {{.+}} : !nn.tensor<[N_T, 512], f32>
// AUTO: %[[H2:.+]] = nn.lstm bidirectional %[[D]], {{.+}} : !nn.tensor<[N_T, 512], f32>
// AUTO-NOT: nn.unpack %[[H2]]
// AUTO: %[[LOGITS:.+]] = nn.linear %[[H2]], {{.+}} : !nn.tensor<[N_T, 512], f32>
// AUTO-NEXT: %[[OUT:.+]] = nn.unpack %[[LOGITS]]
// AUTO: nn.cross_entropy %[[LOGITS]], %[[PY]]
// AUTO: %[[CTC_LOGITS:.+]] = nn.linear %[[H2]], {{.+}} : !nn.tensor<[N_T, 512], f32>
// AUTO-NEXT: nn.ctc_loss %[[CTC_LOGITS]], %labels {{.+}} : !nn.tensor<[N_T, 501], f32>, !nn.tensor<[B, U], i32>
// AUTO: nn.return %[[OUT]]

// BLSTM-LABEL: nn.graph @blstm_am
// BLSTM-SAME: N_T: packed(B, T)]
// BLSTM: nn.lstm bidirectional
// BLSTM: %[[H2:.+]] = nn.lstm bidirectional
// BLSTM-NEXT: %[[PH2:.+]] = nn.pack %[[H2]] : !nn.tensor<[B, T, 512], f32> -> !nn.tensor<[N_T, 512], f32>
// BLSTM: %[[LOGITS:.+]] = nn.linear %[[PH2]], {{.+}} : !nn.tensor<[N_T, 512], f32>, !nn.tensor<[1000, 512], f32>
// BLSTM-NEXT: %[[OUT:.+]] = nn.unpack %[[LOGITS]] : !nn.tensor<[N_T, 1000], f32> -> !nn.tensor<[B, T, 1000], f32>
// BLSTM-NEXT: %[[CE:.+]] = nn.cross_entropy %[[LOGITS]]
// BLSTM-NEXT: nn.mark_loss %[[CE]] as "ce" normalize per_frame : !nn.tensor<[N_T], f32>
// BLSTM: %[[CTC_LOGITS:.+]] = nn.linear %[[H2]], {{.+}} : !nn.tensor<[B, T, 512], f32>, !nn.tensor<[501, 512], f32>
// BLSTM-NEXT: nn.ctc_loss %[[CTC_LOGITS]]
// BLSTM: nn.return %[[OUT]]

// TWO-LABEL: nn.graph @two_heads
// TWO-COUNT-3: nn.pack
// TWO-NOT: nn.pack
// TWO-NOT: nn.unpack
// TWO: nn.return

// CONV-LABEL: nn.graph @conv_encoder
// CONV-NOT: nn.pack
// CONV-LABEL: nn.graph @criterion
// CONV-SAME: N_Tc6: packed(Bc, Tc6)]
// CONV: %[[LOGITS:.+]] = nn.call @conv_encoder
// CONV-NEXT: %[[P:.+]] = nn.pack %[[LOGITS]] : !nn.tensor<[Bc, Tc6, 128], f32> -> !nn.tensor<[N_Tc6, 128], f32>
// CONV: nn.cross_entropy %[[P]]
// CONV: nn.ctc_loss %[[P]]
