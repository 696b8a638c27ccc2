// Pretraining that grows the model (stage key copy_param_mode "subset",
// RETURNN's semantics): the second stage's graph widens the hidden layer
// from 6 to 10 and adds a layer; the widened parameters keep their trained
// values in the leading slice (GrowTest checks the copy element by element),
// the new one is initialized. Shapes that do not grow are errors naming the
// parameter.
// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t && cp %S/Inputs/grow/* %t/
// RUN: nn-train --stages %t/grow.json 2>&1 | FileCheck %s
// CHECK: [big] starts from 'small': 3 of 4 parameters shared (3 of them grown), 1 new
// CHECK: [big] dev before step 1: ctc
// CHECK: all 2 stages done (2 ran, 0 done before)
// RUN: %python -c "import numpy as np, sys; z = np.load(sys.argv[1]); print(sorted((k, z[k].shape) for k in z.files))" %t/grow.work/big/parameters.npz | FileCheck %s --check-prefix=BIG
// BIG: [('h1.b', (10,)), ('h1.w', (10, 16)), ('h2.w', (10, 10)), ('out.w', (8, 10))]

// The trained slice is kept exactly: the grown stage takes one SGD step at
// a rate of 1e-30, which leaves every value as it started.
// RUN: sed -e 's/"epochs": 1, "lr": "constant:peak=1e-2", "copy_param_mode"/"steps": 1, "optimizer": {"kind": "sgd"}, "lr": "constant:peak=1e-30", "copy_param_mode"/' %t/grow.json > %t/exact.json
// RUN: nn-train --stages %t/exact.json --work-dir %t/exact > /dev/null 2>&1
// RUN: %python %S/Inputs/check-grown.py %t/exact/small/parameters.npz %t/exact/big/parameters.npz | FileCheck %s --check-prefix=EXACTLY
// EXACTLY: h1.b [6] -> [10]: trained slice kept
// EXACTLY: h1.w [6, 16] -> [10, 16]: trained slice kept
// EXACTLY: out.w [8, 6] -> [8, 10]: trained slice kept

// A smaller hidden layer is not growth.
// RUN: sed -e 's/\[6/[4/g' -e 's/, 6\]/, 4]/g' -e 's/@small/@shrunk/' %t/small.mlir > %t/shrunk.mlir
// RUN: sed -e 's/"big.mlir"/"shrunk.mlir"/' %t/grow.json > %t/shrink.json
// RUN: not nn-train --stages %t/shrink.json 2>&1 | FileCheck %s --check-prefix=SHRINK
// SHRINK: stages[1] ('big'): parameter 'h1.w' is [4, 16] f32 in graph @shrunk, but [6, 16] f32 in 'small' (from stages[0] ('small')); copy_param_mode "subset" only grows sizes (the same dtype and rank, no size smaller)

// Without copy_param_mode, shared parameters keep one shape.
// RUN: sed -e 's/ "copy_param_mode": "subset",//' %t/grow.json > %t/exact.json
// RUN: not nn-train --stages %t/exact.json 2>&1 | FileCheck %s --check-prefix=EXACT
// EXACT: stages[1] ('big'): parameter 'h1.w' is [10, 16] f32 in graph @big, but [6, 16] f32 in 'small' (from stages[0] ('small'))
// EXACT-NOT: subset

// RUN: sed -e 's/"copy_param_mode": "subset"/"copy_param_mode": "ifpossible"/' %t/grow.json > %t/mode.json
// RUN: not nn-train --stages %t/mode.json 2>&1 | FileCheck %s --check-prefix=MODE
// MODE: copy_param_mode: must be "subset" (parameters of the init that grew keep their values in the leading slice), got 'ifpossible'
