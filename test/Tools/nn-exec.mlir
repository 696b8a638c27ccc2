// nn-exec runs an artifact with the runtime alone: the same synthetic batch
// (same seed) and the same losses as nn-run. A GPU artifact without a
// driver fails with a message that says so.
// RUN: nn-run %s --seed 4 --batch 3 --max-len 9 --json > %t.run.json
// RUN: nn-run %s --compile-only --emit-artifact=%t.cpu.so
// RUN: nn-exec %t.cpu.so --seed 4 --batch 3 --max-len 9 --json > %t.exec.json
// RUN: cat %t.run.json %t.exec.json | FileCheck %s --check-prefix=SAME
// RUN: nn-exec %t.cpu.so --lengths 3,1,4 --repeat 2 | FileCheck %s --check-prefix=REPEAT
// An artifact named without a directory is the file in the working
// directory, not a library on the search path.
// RUN: rm -rf %t.dir && mkdir %t.dir && cp %t.cpu.so %t.dir/model.so
// RUN: cd %t.dir && nn-exec model.so --seed 4 --batch 3 --max-len 9 --json > %t.relative.json
// RUN: cat %t.run.json %t.relative.json | FileCheck %s --check-prefix=SAME
// RUN: %if cuda-toolkit %{ nn-run %s --compile-only --target=cuda --emit-artifact=%t.cuda.so | FileCheck %s --check-prefix=CUDA %}
// RUN: %if cuda-toolkit %{ env NN_CUDA_DRIVER=/nonexistent/libcuda.so.1 not nn-exec %t.cuda.so 2>&1 | FileCheck %s --check-prefix=NODRIVER %}
// RUN: not nn-exec %t.missing.so 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: rm -f %t.fifo.so && mkfifo %t.fifo.so
// RUN: not timeout 60 nn-exec %t.fifo.so 2>&1 | FileCheck %s --check-prefix=FIFO
// RUN: not timeout 60 nn-exec /dev/zero 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: nn-exec %t.cpu.so --dim-len T=0:0 --json | FileCheck %s --check-prefix=DIMLEN
// RUN: not nn-exec %t.cpu.so --dim-len T=5:2 2>&1 | FileCheck %s --check-prefix=BADRANGE
// RUN: not nn-exec %t.cpu.so --dim-len Q=1:2 2>&1 | FileCheck %s --check-prefix=NODIM

nn.graph @tail(%x: !nn.tensor<[B, T, 6], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %ce = nn.cross_entropy %x, %y from logits : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}

// SAME: {"graph": "tail", "pack": true, "losses": [{"name": "ce", "value": [[VALUE:[-0-9.e]+]], "sum": [[SUM:[-0-9.e]+]],
// SAME: {"graph": "tail", "target": "cpu", "losses": [{"name": "ce", "sum": [[SUM]], "normalized": [[VALUE]]}], "outputs": []}
// REPEAT: graph @tail on cpu
// REPEAT: loss ce: sum
// REPEAT: median {{[0-9.e-]+}} ms per run, kernels 0 ms per run
// CUDA: compiled @tail for cuda: {{[1-9][0-9]*}} kernels
// CUDA: kernel tail_k{{[0-9]+}}_cross_entropy (nn.cross_entropy at {{.*}}nn-exec.mlir:{{[0-9]+}}:9)
// NODRIVER: nn-exec: cannot run @tail on the GPU: no GPU: cannot load the CUDA driver /nonexistent/libcuda.so.1
// MISSING: nn-exec: cannot load artifact
// FIFO: nn-exec: cannot load artifact: '{{.+}}.fifo.so' is a FIFO, not a regular file
// ZERO: nn-exec: cannot load artifact: '/dev/zero' is a character device, not a regular file
// Per-dim lengths: every sequence of T empty, so the loss sums nothing.
// DIMLEN: "losses": [{"name": "ce", "sum": 0, "normalized": 0}]
// BADRANGE: bad value 'T=5:2' for --dim-len
// NODIM: --dim-len Q: the artifact has no root sequence dim named 'Q'

