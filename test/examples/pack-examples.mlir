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

// Example 2 with the encoder inlined (as nn-optimize does): the cost model
// packs the features at the input, and the whole encoder runs on packed
// rows, both convolutions (the stride-2 one from packed(Bc, Tc) to
// packed(Bc, Tc2)) and the stride-3 pool (to packed(Bc, Tc6)) included.
// RUN: nn-opt %nn_src/examples/conv_encoder_decoupled_loss.mlir --nn-inline-calls=graph=criterion --nn-pack-before-loss | FileCheck %s --check-prefix=CONV-INLINED
// CONV-INLINED-LABEL: nn.graph @criterion
// CONV-INLINED: %[[PX:.+]] = nn.pack %{{.+}} : !nn.tensor<[Bc, Tc, 80], f32> -> !nn.tensor<[N_Tc, 80], f32>
// CONV-INLINED: nn.conv1d %[[PX]], {{.+}} stride 2 : (!nn.tensor<[N_Tc, 80], f32>, {{.+}}) -> !nn.tensor<[N_Tc2, 256], f32>
// CONV-INLINED: nn.conv1d {{.+}} : (!nn.tensor<[N_Tc2, 256], f32>, {{.+}}) -> !nn.tensor<[N_Tc2, 256], f32>
// CONV-INLINED: nn.pool max {{.+}} : (!nn.tensor<[N_Tc2, 256], f32>) -> !nn.tensor<[N_Tc6, 256], f32>
// CONV-INLINED-NOT: nn.unpack
// CONV-INLINED: nn.return

// The Conformer example: after nn-inline-calls, the cost model packs the
// features at the input (after SpecAugment, which has no packed form):
// the strided subsampling convolution runs on packed(B, T) rows and both
// blocks on packed(B, T2) rows (attention and the depthwise convolutions
// included); greedy decoding reads the packed logits too, so nothing is
// unpacked. pack=earliest packs at the same place.
// RUN: nn-opt %nn_src/examples/speech/conformer_ctc.mlir --nn-inline-calls=graph=ctc --nn-pack-before-loss | FileCheck %s --check-prefix=CONFORMER
// RUN: nn-opt %nn_src/examples/speech/conformer_ctc.mlir --nn-inline-calls=graph=ctc --nn-pack-before-loss=pack=earliest | FileCheck %s --check-prefix=CONFORMER
// CONFORMER-LABEL: nn.graph @ctc
// CONFORMER: %[[MASKED:.+]] = nn.spec_augment
// CONFORMER-NEXT: %[[P:.+]] = nn.pack %[[MASKED]] : !nn.tensor<[B, T, 40], f32> -> !nn.tensor<[N_T, 40], f32>
// CONFORMER-NOT: nn.pack
// CONFORMER: nn.conv1d %[[P]], {{.+}} stride 2 : (!nn.tensor<[N_T, 40], f32>, {{.+}}) -> !nn.tensor<[N_T2, 96], f32>
// CONFORMER: nn.attention {{.+}} heads 4 : !nn.tensor<[N_T2, 96], f32>
// CONFORMER: nn.conv1d {{.+}} stride 1 groups 96 : (!nn.tensor<[N_T2, 96], f32>
// CONFORMER: nn.attention {{.+}} heads 4 : !nn.tensor<[N_T2, 96], f32>
// CONFORMER: nn.conv1d {{.+}} stride 1 groups 96 : (!nn.tensor<[N_T2, 96], f32>
// CONFORMER: %[[LOGITS:.+]] = nn.linear {{.+}} : !nn.tensor<[N_T2, 96], f32>, !nn.tensor<[17, 96], f32>
// CONFORMER-NEXT: nn.ctc_loss %[[LOGITS]]
// CONFORMER-NOT: nn.unpack
// CONFORMER: nn.ctc_greedy_decode %[[LOGITS]] from logits blank 0 : !nn.tensor<[N_T2, 17], f32>
// CONFORMER-NOT: nn.unpack
// CONFORMER: nn.return

// A decode-only graph has no loss: its search is the anchor. The CTC
// search reads packed logits, so nn-decode runs the Conformer on real
// frames from its input on; the BLSTM of examples/speech/ctc.mlir too
// (both LSTMs packed).
// RUN: nn-opt %nn_src/examples/speech/conformer_ctc.mlir --nn-inline-calls=graph=decode --nn-pack-before-loss | FileCheck %s --check-prefix=DECODE-CTC
// RUN: nn-opt %nn_src/examples/speech/ctc.mlir --nn-inline-calls=graph=decode --nn-pack-before-loss | FileCheck %s --check-prefix=DECODE-BLSTM
// RUN: nn-opt %nn_src/examples/speech/conformer_ctc.mlir --nn-inline-calls=graph=decode --nn-pack-before-loss=pack=loss-tail | FileCheck %s --check-prefix=DECODE-TAIL
// DECODE-CTC-LABEL: nn.graph @decode
// DECODE-CTC-NEXT: %[[P:.+]] = nn.pack %features : !nn.tensor<[B, T, 40], f32> -> !nn.tensor<[N_T, 40], f32>
// DECODE-CTC: nn.conv1d %[[P]], {{.+}} stride 2 : (!nn.tensor<[N_T, 40], f32>, {{.+}}) -> !nn.tensor<[N_T2, 96], f32>
// DECODE-CTC: nn.attention {{.+}} heads 4 : !nn.tensor<[N_T2, 96], f32>
// DECODE-CTC: nn.attention {{.+}} heads 4 : !nn.tensor<[N_T2, 96], f32>
// DECODE-CTC: %[[LOGITS:.+]] = nn.linear {{.+}} : !nn.tensor<[N_T2, 96], f32>, !nn.tensor<[17, 96], f32>
// DECODE-CTC-NOT: nn.unpack
// DECODE-CTC: nn.ctc_greedy_decode %[[LOGITS]] from logits blank 0 : !nn.tensor<[N_T2, 17], f32>
// DECODE-BLSTM-LABEL: nn.graph @decode
// DECODE-BLSTM: nn.pack %features
// DECODE-BLSTM: nn.lstm bidirectional {{.+}} : !nn.tensor<[N_T, 40], f32>
// DECODE-BLSTM: nn.lstm bidirectional {{.+}} : !nn.tensor<[N_T, 128], f32>
// DECODE-BLSTM-NOT: nn.unpack
// DECODE-BLSTM: nn.ctc_greedy_decode {{.+}} : !nn.tensor<[N_T, 17], f32>
// pack=loss-tail packs loss tails alone: a decode graph stays padded.
// DECODE-TAIL-LABEL: nn.graph @decode
// DECODE-TAIL-NOT: nn.pack
// DECODE-TAIL: nn.ctc_greedy_decode {{.+}} : !nn.tensor<[B, T2, 17], f32>

// The Conformer transducer example: the RNN-T loss reads the packed joint
// grid, and the join's encoder and prediction operands are packed too, so
// the encoder from its input (after SpecAugment) and the prediction
// network (from the labels after the start symbol) run on packed rows;
// the beam search of dev evaluation reads the encoder output unpacked;
// in the decode-only graph the encoder runs packed and the beam search,
// which takes a padded encoder, reads its unpack.
// RUN: nn-opt %nn_src/examples/speech/conformer_transducer.mlir --nn-inline-calls=graph=rnnt --nn-pack-before-loss | FileCheck %s --check-prefix=TRANSDUCER
// TRANSDUCER-LABEL: nn.graph @rnnt
// TRANSDUCER: %[[MASKED:.+]] = nn.spec_augment
// TRANSDUCER-NEXT: %[[P:.+]] = nn.pack %[[MASKED]] : !nn.tensor<[B, T, 40], f32> -> !nn.tensor<[N_T, 40], f32>
// TRANSDUCER: nn.conv1d %[[P]], {{.+}} stride 2 : (!nn.tensor<[N_T, 40], f32>, {{.+}}) -> !nn.tensor<[N_T2, 96], f32>
// TRANSDUCER: nn.attention {{.+}} : !nn.tensor<[N_T2, 96], f32>
// TRANSDUCER: nn.attention {{.+}} : !nn.tensor<[N_T2, 96], f32>
// TRANSDUCER: %[[ENC:.+]] = nn.linear {{.+}} : !nn.tensor<[N_T2, 96], f32>, !nn.tensor<[64, 96], f32>
// TRANSDUCER-NEXT: %[[ENC_PADDED:.+]] = nn.unpack %[[ENC]]
// TRANSDUCER: %[[START:.+]] = nn.prepend_start
// TRANSDUCER-NEXT: %[[LABELS:.+]] = nn.pack %[[START]] : !nn.tensor<[B, U1], i32> -> !nn.tensor<[N_U1], i32>
// TRANSDUCER: %[[PRED:.+]] = nn.lstm forward {{.+}} : !nn.tensor<[N_U1, 64], f32>
// TRANSDUCER-NEXT: nn.transducer_join %[[ENC]], %[[PRED]] : !nn.tensor<[N_T2, 64], f32>, !nn.tensor<[N_U1, 64], f32> -> !nn.tensor<[J, 64], f32>
// TRANSDUCER: nn.transducer_beam_search %[[ENC_PADDED]]
// RUN: nn-opt %nn_src/examples/speech/conformer_transducer.mlir --nn-inline-calls=graph=decode --nn-pack-before-loss | FileCheck %s --check-prefix=DECODE-RNNT
// DECODE-RNNT-LABEL: nn.graph @decode
// DECODE-RNNT-NEXT: %[[P:.+]] = nn.pack %features : !nn.tensor<[B, T, 40], f32> -> !nn.tensor<[N_T, 40], f32>
// DECODE-RNNT: nn.attention {{.+}} : !nn.tensor<[N_T2, 96], f32>
// DECODE-RNNT: %[[ENC:.+]] = nn.linear {{.+}} : !nn.tensor<[N_T2, 96], f32>, !nn.tensor<[64, 96], f32>
// DECODE-RNNT-NEXT: %[[PADDED:.+]] = nn.unpack %[[ENC]] : !nn.tensor<[N_T2, 64], f32> -> !nn.tensor<[B, T2, 64], f32>
// DECODE-RNNT-NEXT: nn.transducer_beam_search %[[PADDED]]
