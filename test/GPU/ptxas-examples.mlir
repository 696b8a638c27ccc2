// Every kernel the examples compile to assembles with ptxas for sm_90 and,
// compiled for sm_80, for sm_80. No GPU needed.
// REQUIRES: ptxas, cuda-toolkit
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-run %nn_src/examples/blstm_ce_ctc.mlir --target=cuda --compile-only --emit-gpu-code=%t/blstm90 | FileCheck %s --check-prefix=BLSTM
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_90 %t/blstm90 | FileCheck %s --check-prefix=BLSTM90
// RUN: nn-run %nn_src/examples/blstm_ce_ctc.mlir --target=cuda --gpu-chip=sm_80 --compile-only --emit-gpu-code=%t/blstm80
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_80 %t/blstm80 | FileCheck %s --check-prefix=BLSTM80
// RUN: nn-run %nn_src/examples/conv_encoder_decoupled_loss.mlir --target=cuda --compile-only --emit-gpu-code=%t/conv90
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_90 %t/conv90 | FileCheck %s --check-prefix=OK90
// RUN: nn-run %nn_src/examples/conv_encoder_decoupled_loss.mlir --target=cuda --gpu-chip=sm_80 --compile-only --emit-gpu-code=%t/conv80
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_80 %t/conv80 | FileCheck %s --check-prefix=OK80
// RUN: nn-run %nn_src/examples/shared_tail_two_losses.mlir --target=cuda --compile-only --emit-gpu-code=%t/shared90
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_90 %t/shared90 | FileCheck %s --check-prefix=OK90
// RUN: nn-run %nn_src/examples/shared_tail_two_losses.mlir --target=cuda --gpu-chip=sm_80 --compile-only --emit-gpu-code=%t/shared80
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_80 %t/shared80 | FileCheck %s --check-prefix=OK80
//
// The packed CE tail of example 1: pack, GEMM (cuBLAS, no kernel), the
// row reductions of log-softmax and the loss sum.
// BLSTM: compiled @blstm_am for cuda: [[N:[0-9]+]] kernels
// BLSTM: kernel blstm_am_k0_pack (nn.pack at {{.*}}blstm_ce_ctc.mlir:{{[0-9]+}}:{{[0-9]+}})
// BLSTM: kernel blstm_am_k{{[0-9]+}}_lstm (nn.lstm at
// BLSTM: kernel blstm_am_k{{[0-9]+}}_cross_entropy (nn.cross_entropy at
// BLSTM: kernel blstm_am_k{{[0-9]+}}_ctc_loss (nn.ctc_loss at
// BLSTM90: ptxas -arch=sm_90: [[N:[0-9]+]] kernel modules, 0 failed
// BLSTM80: ptxas -arch=sm_80: {{[1-9][0-9]*}} kernel modules, 0 failed
// OK90: ptxas -arch=sm_90: {{[1-9][0-9]*}} kernel modules, 0 failed
// OK80: ptxas -arch=sm_80: {{[1-9][0-9]*}} kernel modules, 0 failed
