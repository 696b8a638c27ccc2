// nn-run on a seeded synthetic batch: one line per loss, the frames a packed
// tail computed, JSON, and errors that name the problem.
// RUN: nn-run %s --batch 4 --max-len 6 --seed 3 | FileCheck %s
// RUN: nn-run %s --batch 4 --max-len 6 --seed 3 --no-pack | FileCheck %s --check-prefix=NOPACK
// RUN: nn-run %s --batch 4 --min-len 6 --max-len 6 --json | FileCheck %s --check-prefix=JSON
// RUN: not nn-run %s --entry nope 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: not nn-run %s --min-len 7 --max-len 6 2>&1 | FileCheck %s --check-prefix=LENS
// RUN: not nn-run %s --inputs %t.missing.npz 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not nn-run %s --dim-len U=1:3 2>&1 | FileCheck %s --check-prefix=DIMLEN
// Paths that are no regular files are refused at once by what they are: a
// FIFO no one writes (a plain read would wait forever) and /dev/zero (it
// never ends), as the model, an input archive, a parameter and a lengths
// file.
// RUN: rm -f %t.fifo && mkfifo %t.fifo
// RUN: not timeout 60 nn-run %t.fifo 2>&1 | FileCheck %s --check-prefix=FIFO-MODEL
// RUN: not timeout 60 nn-run /dev/zero 2>&1 | FileCheck %s --check-prefix=ZERO-MODEL
// RUN: not timeout 60 nn-run %s --inputs %t.fifo 2>&1 | FileCheck %s --check-prefix=FIFO-INPUTS
// RUN: not timeout 60 nn-run %s --inputs /dev/zero 2>&1 | FileCheck %s --check-prefix=ZERO-INPUTS
// RUN: not timeout 60 nn-run %s --param w=/dev/zero 2>&1 | FileCheck %s --check-prefix=ZERO-PARAM
// RUN: not timeout 60 nn-run %s --lengths-from %t.fifo 2>&1 | FileCheck %s --check-prefix=FIFO-LENGTHS
// RUN: not timeout 60 nn-run %s --lengths-from /dev/zero 2>&1 | FileCheck %s --check-prefix=ZERO-LENGTHS
// RUN: not timeout 60 nn-run %S 2>&1 | FileCheck %s --check-prefix=DIR-MODEL
// RUN: nn-run %s --batch 4 --dim-len T=2:2 --json | FileCheck %s --check-prefix=FIXED
// RUN: nn-run %s --batch 2 --emit-artifact %t.so > /dev/null
// RUN: readelf -d %t.so | FileCheck %s --check-prefix=DEPS
// RUN: readelf --dyn-syms -W %t.so | FileCheck %s --check-prefix=SYMS

// CHECK: loss ce = {{[0-9.e+-]+}} (sum {{[0-9.e+-]+}} / per_frame [[N:[0-9]+]])  packed: [[N]] of 24 padded frames computed
// CHECK-NEXT: loss err = {{[0-9.e+-]+}} (sum {{[0-9.e+-]+}} / sum 1)  packed: [[N]] of 24 padded frames computed
// NOPACK: loss ce = {{[0-9.e+-]+}} (sum {{[0-9.e+-]+}} / per_frame {{[0-9]+}}){{$}}
// JSON: {"graph": "g", "pack": true, "losses": [{"name": "ce", "value": {{.+}}, "normalization": 24, "scale": 1, "as_error": false, "packed": true, "frames_computed": 24, "frames_padded": 24}, {"name": "err",
// ENTRY: nn-run: no graph named @nope
// LENS: nn-run: synthetic lengths of 'T': 7:6 is not a range (is --min-len above --max-len?)
// NOFILE: nn-run: cannot open '{{.+}}.missing.npz'
// DIMLEN: nn-run: --dim-len names 'U', which is not a root sequence dim of @g
// FIFO-MODEL: nn-run: cannot read the model: '{{.+}}.fifo' is a FIFO, not a regular file
// ZERO-MODEL: nn-run: cannot read the model: '/dev/zero' is a character device, not a regular file
// FIFO-INPUTS: nn-run: '{{.+}}.fifo' is a FIFO, not a regular file
// ZERO-INPUTS: nn-run: '/dev/zero' is a character device, not a regular file
// ZERO-PARAM: nn-run: {{.*}}'/dev/zero' is a character device, not a regular file
// FIFO-LENGTHS: nn-run: --lengths-from: '{{.+}}.fifo' is a FIFO, not a regular file
// ZERO-LENGTHS: nn-run: --lengths-from: '/dev/zero' is a character device, not a regular file
// DIR-MODEL: nn-run: cannot read the model: '{{.+}}' is a directory, not a regular file
// FIXED: "frames_computed": 8, "frames_padded": 8
// The artifact needs only libc (and libomp; its f32 GEMMs call the runtime's
// oneDNN entry point, so it links no OpenBLAS), allocates through the
// runtime, and exports only its manifest and entry point.
// DEPS-NOT: {{LLVM|MLIR|libopenblas}}
// DEPS: (NEEDED) Shared library: [libc.so
// DEPS-NOT: {{LLVM|MLIR|libopenblas}}
// SYMS-DAG: UND _mlir_memref_to_llvm_alloc
// SYMS-DAG: UND _mlir_memref_to_llvm_free
// SYMS-DAG: UND nn_cpu_sgemm
// SYMS-DAG: nn_entry
// SYMS-DAG: nn_manifest
// SYMS-NOT: {{ g$}}

nn.parameter @w : !nn.tensor<[5, 3], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[5, 3], f32>
  %h = nn.tanh %x : !nn.tensor<[B, T, 3], f32>
  %z = nn.linear %h, %w : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[5, 3], f32>
  %ce = nn.cross_entropy %z, %y from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %e = nn.cross_entropy %z, %y from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %e as "err" normalize sum as_error : !nn.tensor<[B, T], f32>
  nn.return
}
