// Every diagnostic of nn-artifact-entry.
// RUN: nn-opt %s --nn-artifact-entry="graph=g" --split-input-file --verify-diagnostics

// expected-error @+1 {{nn-artifact-entry needs the manifest text in the module attribute nn.manifest}}
module {
  llvm.func @_mlir_ciface_g() { llvm.return }
}

// -----

// expected-error @+1 {{no C interface @_mlir_ciface_g for the entry graph 'g'}}
module attributes {nn.manifest = "m"} {
  llvm.func @_mlir_ciface_h() { llvm.return }
}

// -----

// expected-error @+1 {{the module already defines @nn_entry}}
module attributes {nn.manifest = "m"} {
  llvm.func @_mlir_ciface_g() { llvm.return }
  llvm.func @nn_entry() { llvm.return }
}

// -----

module attributes {nn.manifest = "m"} {
  // expected-error @+1 {{parameter 1 of @_mlir_ciface_g is 'f32'; the entry passes pointers and integers}}
  llvm.func @_mlir_ciface_g(%arg0: !llvm.ptr, %arg1: f32) { llvm.return }
}
