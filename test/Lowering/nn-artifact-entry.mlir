// The artifact's exported symbols, added on the LLVM dialect: the manifest
// text, the entry wrapper (argv slot i -> parameter i; integers through
// ptrtoint), the manifest's checksum (FNV-1a 64 of "nn-artifact 3\nend\n",
// computed independently: 0x06b8b6366c59b622) and the entry's arity; every
// other definition hidden.
// RUN: nn-opt %s --nn-artifact-entry="graph=g" | FileCheck %s

// CHECK-NOT: nn.manifest
// CHECK: llvm.mlir.global internal hidden constant @table
// CHECK: llvm.func hidden @helper()
// CHECK: llvm.func hidden @_mlir_ciface_g(
// CHECK: llvm.func @malloc(i64) -> !llvm.ptr
// CHECK: llvm.mlir.global external constant @nn_manifest("nn-artifact 3\0Aend\0A\00")
// CHECK: llvm.func @nn_entry(%[[ARGV:.+]]: !llvm.ptr)
// CHECK: %[[S0:.+]] = llvm.getelementptr %[[ARGV]][0]
// CHECK: %[[A0:.+]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[S1:.+]] = llvm.getelementptr %[[ARGV]][1]
// CHECK: %[[P1:.+]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[A1:.+]] = llvm.ptrtoint %[[P1]] : !llvm.ptr to i64
// CHECK: %[[S2:.+]] = llvm.getelementptr %[[ARGV]][2]
// CHECK: %[[A2:.+]] = llvm.load %[[S2]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call @_mlir_ciface_g(%[[A0]], %[[A1]], %[[A2]])
// CHECK-LABEL: llvm.func @nn_manifest_hash() -> i64
// CHECK: llvm.mlir.constant(484337304804636194 : i64)
// CHECK-LABEL: llvm.func @nn_entry_arity() -> i64
// CHECK: llvm.mlir.constant(3 : i64)
module attributes {nn.manifest = "nn-artifact 3\0Aend\0A"} {
  llvm.mlir.global internal constant @table(dense<1.0> : tensor<4xf32>) : !llvm.array<4 x f32>
  llvm.func @helper() { llvm.return }
  llvm.func @_mlir_ciface_g(%arg0: !llvm.ptr, %arg1: i64, %arg2: !llvm.ptr) { llvm.return }
  llvm.func @malloc(i64) -> !llvm.ptr
}
