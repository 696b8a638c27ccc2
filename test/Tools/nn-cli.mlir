// The tools' command lines: --help lists nn-run's own options by category
// (LLVM's code generation options only under --help-hidden); nn-exec
// refuses malformed values; --json stays valid JSON when a loss is
// infinite (an infeasible CTC sequence: 5 labels in 2 frames).
// REQUIRES: numpy
// RUN: nn-run --help | FileCheck %s --check-prefix=HELP --implicit-check-not=aarch64 --implicit-check-not=amdgpu --implicit-check-not=x86-asm-syntax
// RUN: nn-run --help | wc -l | FileCheck %s --check-prefix=LINES
// RUN: nn-run --help-hidden | FileCheck %s --check-prefix=HIDDEN
// RUN: nn-exec --help | FileCheck %s --check-prefix=EXEC-HELP
// RUN: not nn-exec %t.so --batch 3x 2>&1 | FileCheck %s --check-prefix=EXEC-BAD
// RUN: not nn-exec %t.so --min-len 9 --max-len 2 2>&1 | FileCheck %s --check-prefix=EXEC-RANGE
// RUN: not nn-run %s --dim-len T=2:x 2>&1 | FileCheck %s --check-prefix=DIM-LEN
// RUN: nn-run %s --batch 2 --dim-len T=2:2 --dim-len U=5:5 --json > %t.json
// RUN: %python -c "import json, sys; r = json.load(open(sys.argv[1]), parse_constant=lambda c: sys.exit('bare ' + c)); print(r['losses'][0]['value'], r['losses'][0]['sum'])" %t.json | FileCheck %s --check-prefix=JSON
// RUN: nn-run %s --compile-only --emit-artifact=%t.so
// RUN: nn-exec %t.so --lengths 2,2 --json | FileCheck %s --check-prefix=EXEC-JSON

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %l: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %c = nn.ctc_loss %x, %l from logits blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %c as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return
}

// HELP: OPTIONS:
// HELP: GPU target (--target=cuda):
// HELP: --gpu-chip
// HELP: Inputs and parameters from files:
// HELP: --inputs
// HELP: Model and compilation:
// HELP: --no-pack
// HELP: Synthetic batch:
// HELP: --seed
// LINES: {{^[1-7][0-9]$}}
// HIDDEN: --x86-asm-syntax
// EXEC-HELP: usage: nn-exec ARTIFACT.so [options]
// EXEC-BAD: nn-exec: bad value '3x' for --batch
// EXEC-RANGE: nn-exec: --min-len 9 is above --max-len 2
// DIM-LEN: nn-run: --dim-len expects NAME=MIN:MAX with lengths in [0, 2^31 - 1], got 'T=2:x'
// JSON: Infinity Infinity
// EXEC-JSON: "sum": "Infinity"
