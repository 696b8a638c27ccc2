// The train step (forward, backward, global norm, clipping, optimizer
// update) compiles for the GPU, and every kernel assembles with ptxas for
// sm_90 and sm_80. No GPU needed.
// REQUIRES: ptxas, cuda-toolkit
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-train %nn_src/test/Tools/Inputs/segments-small.mlir --target=cuda --optimizer adamw --weight-decay 0.01 --clip-norm 1 --compile-only --emit-gpu-code=%t/adam90 | FileCheck %s --check-prefix=ADAM
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_90 %t/adam90 | FileCheck %s --check-prefix=OK90
// RUN: nn-train %nn_src/test/Tools/Inputs/segments-small.mlir --target=cuda --gpu-chip=sm_80 --optimizer adamw --clip-norm 1 --compile-only --emit-gpu-code=%t/adam80
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_80 %t/adam80 | FileCheck %s --check-prefix=OK80
// RUN: nn-train %nn_src/test/Tools/Inputs/segments-small.mlir --target=cuda --optimizer sgd --momentum 0.9 --nesterov --compile-only --emit-gpu-code=%t/sgd90 | FileCheck %s --check-prefix=SGD
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_90 %t/sgd90 | FileCheck %s --check-prefix=OK90
// ADAM: compiled the train step of @am for cuda:
// ADAM-DAG: kernel am_k{{[0-9]+}}_dropout
// ADAM-DAG: kernel am_k{{[0-9]+}}_lstm_grad
// ADAM-DAG: kernel am_k{{[0-9]+}}_ctc_loss_grad
// ADAM-DAG: kernel am_k{{[0-9]+}}_global_norm
// ADAM-DAG: kernel am_k{{[0-9]+}}_clip_factor
// ADAM-DAG: kernel am_k{{[0-9]+}}_adam_update
// SGD: kernel am_k{{[0-9]+}}_momentum_update
// OK90: ptxas -arch=sm_90: {{[1-9][0-9]*}} kernel modules, 0 failed
// OK80: ptxas -arch=sm_80: {{[1-9][0-9]*}} kernel modules, 0 failed
