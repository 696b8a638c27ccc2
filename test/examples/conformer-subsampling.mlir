// The Conformer CTC model of examples/python/conformer_ctc.py with the
// time reductions of the issue's front end, 4 and 6: a second strided
// convolution (stride 2, or 3) after the first, its dim derived from the
// first's (every utterance's length after each), and the whole encoder
// packed from SpecAugment's output on, both convolutions included, so no
// op reads padding. The CTC loss zeroes utterances too short for their
// labels. test/examples/conformer-learns.mlir trains the 4.
// RUN: env PYTHONPATH=%nn_python_path %python %nn_src/examples/python/conformer_ctc.py --subsampling 4 > %t.x4.mlir
// RUN: nn-opt %t.x4.mlir | FileCheck %s --check-prefix=DIMS4
// RUN: nn-opt %t.x4.mlir --nn-inline-calls=graph=ctc --nn-pack-before-loss | FileCheck %s --check-prefix=PACK4
// RUN: env PYTHONPATH=%nn_python_path %python %nn_src/examples/python/conformer_ctc.py --subsampling 6 > %t.x6.mlir
// RUN: nn-opt %t.x6.mlir | FileCheck %s --check-prefix=DIMS6
// RUN: nn-opt %t.x6.mlir --nn-inline-calls=graph=ctc --nn-pack-before-loss | FileCheck %s --check-prefix=PACK6
// RUN: not env PYTHONPATH=%nn_python_path %python %nn_src/examples/python/conformer_ctc.py --subsampling 3 2>&1 | FileCheck %s --check-prefix=BAD

// DIMS4: nn.parameter @subsample2.w : !nn.tensor<[96, 3, 96], f32>
// DIMS4-LABEL: nn.graph @acoustic
// DIMS4-SAME: T2: seq(B) = ceildiv(T, 2), T4: seq(B) = ceildiv(T2, 2)
// DIMS4: nn.conv1d {{.+}} stride 2 : (!nn.tensor<[B, T, 40], f32>, {{.+}}) -> !nn.tensor<[B, T2, 96], f32>
// DIMS4: nn.conv1d {{.+}} stride 2 : (!nn.tensor<[B, T2, 96], f32>, {{.+}}) -> !nn.tensor<[B, T4, 96], f32>
// DIMS4: nn.return {{.+}} : !nn.tensor<[B, T4, 17], f32>

// PACK4-LABEL: nn.graph @ctc
// PACK4: %[[MASKED:.+]] = nn.spec_augment
// PACK4-NEXT: %[[P:.+]] = nn.pack %[[MASKED]] : !nn.tensor<[B, T, 40], f32> -> !nn.tensor<[N_T, 40], f32>
// PACK4-NOT: nn.pack
// PACK4: nn.conv1d %[[P]], {{.+}} stride 2 : (!nn.tensor<[N_T, 40], f32>, {{.+}}) -> !nn.tensor<[N_T2, 96], f32>
// PACK4: nn.conv1d {{.+}} stride 2 : (!nn.tensor<[N_T2, 96], f32>, {{.+}}) -> !nn.tensor<[N_T4, 96], f32>
// PACK4: nn.attention {{.+}} heads 4 : !nn.tensor<[N_T4, 96], f32>
// PACK4: nn.conv1d {{.+}} stride 1 groups 96 : (!nn.tensor<[N_T4, 96], f32>
// PACK4: nn.attention {{.+}} heads 4 : !nn.tensor<[N_T4, 96], f32>
// PACK4: nn.conv1d {{.+}} stride 1 groups 96 : (!nn.tensor<[N_T4, 96], f32>
// PACK4: %[[LOGITS:.+]] = nn.linear {{.+}} : !nn.tensor<[N_T4, 96], f32>, !nn.tensor<[17, 96], f32>
// PACK4: nn.ctc_loss %[[LOGITS]], %{{.+}} from logits blank 0 zero_infinity : !nn.tensor<[N_T4, 17], f32>

// DIMS6-LABEL: nn.graph @acoustic
// DIMS6-SAME: T2: seq(B) = ceildiv(T, 2), T6: seq(B) = ceildiv(T2, 3)
// DIMS6: nn.conv1d {{.+}} stride 3 : (!nn.tensor<[B, T2, 96], f32>, {{.+}}) -> !nn.tensor<[B, T6, 96], f32>

// PACK6-LABEL: nn.graph @ctc
// PACK6: nn.pack {{.+}} : !nn.tensor<[B, T, 40], f32> -> !nn.tensor<[N_T, 40], f32>
// PACK6-NOT: nn.pack
// PACK6: nn.conv1d {{.+}} stride 3 : (!nn.tensor<[N_T2, 96], f32>, {{.+}}) -> !nn.tensor<[N_T6, 96], f32>
// PACK6: nn.attention {{.+}} heads 4 : !nn.tensor<[N_T6, 96], f32>
// PACK6: nn.ctc_loss {{.+}} zero_infinity : !nn.tensor<[N_T6, 17], f32>

// BAD: argument --subsampling: invalid choice: 3 (choose from 2, 4, 6)
