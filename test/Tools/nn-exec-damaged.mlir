// Damaged artifacts are refused on load with a message, never run: a
// truncated shared object (dlopen would fault on its missing pages) and a
// manifest edited after compilation (its checksum is compiled into the code).
// REQUIRES: numpy
// RUN: nn-run %s --compile-only --emit-artifact=%t.so
// RUN: %python %S/Inputs/damage_artifact.py %t.so %t
// RUN: not nn-exec %t/truncated.so 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// RUN: not nn-exec %t/edited.so 2>&1 | FileCheck %s --check-prefix=EDITED
// RUN: nn-exec %t.so --lengths 2,3 | FileCheck %s --check-prefix=INTACT

nn.graph @tail(%x: !nn.tensor<[B, T, 6], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %ce = nn.cross_entropy %x, %y from logits : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}

// TRUNCATED: nn-exec: cannot load artifact '{{.*}}truncated.so': truncated ({{.*}} past the end of the {{[0-9]+}}-byte file)
// EDITED: nn-exec: '{{.*}}edited.so': the manifest does not match the code it was compiled with (checksum mismatch)
// INTACT: loss ce: sum
