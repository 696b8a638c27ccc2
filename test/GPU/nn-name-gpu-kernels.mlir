// RUN: nn-opt %s --split-input-file --nn-name-gpu-kernels | FileCheck %s
// RUN: nn-opt %s --split-input-file --nn-linalg-to-gpu --gpu-kernel-outlining --nn-name-gpu-kernels | FileCheck %s --check-prefix=CHAIN

// nn-name-gpu-kernels runs after gpu-kernel-outlining: a gpu.launch_func
// whose location is a NameLoc (nn-linalg-to-gpu names each launch
// <function>_k<n>_<nn op>) gets its kernel and the kernel's gpu.module
// renamed to that name. Launches without a NameLoc, a second launch with a
// name already given, and a name another symbol holds keep the outlined
// names.

// CHECK-LABEL: func.func @named
// CHECK: gpu.launch_func @named_k0_linear::@named_k0_linear blocks
// CHECK: gpu.launch_func @named_kernel_0::@named_kernel blocks
// CHECK: gpu.launch_func @named_kernel_1::@named_kernel blocks
// CHECK: gpu.module @named_k0_linear {
// CHECK-NEXT: gpu.func @named_k0_linear(%{{.+}}: memref<?xf32>) kernel {
// CHECK: gpu.module @named_kernel_0 {
// CHECK-NEXT: gpu.func @named_kernel(%{{.+}}: memref<?xf32>) kernel {
// CHECK: gpu.module @named_kernel_1 {
// CHECK-NEXT: gpu.func @named_kernel(%{{.+}}: memref<?xf32>) kernel {
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @named(%a: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @named_kernel::@named_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>) loc("named_k0_linear")
    // A file location, not a name.
    gpu.launch_func @named_kernel_0::@named_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>) loc("model.mlir":3:4)
    // The same name again: the first launch has it.
    gpu.launch_func @named_kernel_1::@named_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>) loc("named_k0_linear")
    return
  }
  gpu.module @named_kernel {
    gpu.func @named_kernel(%a: memref<?xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @named_kernel_0 {
    gpu.func @named_kernel(%a: memref<?xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @named_kernel_1 {
    gpu.func @named_kernel(%a: memref<?xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// The name belongs to a function already: the kernel keeps its name.
// CHECK-LABEL: func.func @clash
// CHECK: gpu.launch_func @clash_kernel::@clash_kernel blocks
// CHECK: func.func @clash_k0_relu()
// CHECK: gpu.module @clash_kernel {
// CHECK-NEXT: gpu.func @clash_kernel(
module attributes {gpu.container_module} {
  func.func @clash(%a: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @clash_kernel::@clash_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>) loc("clash_k0_relu")
    return
  }
  func.func @clash_k0_relu() {
    return
  }
  gpu.module @clash_kernel {
    gpu.func @clash_kernel(%a: memref<?xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// From nn-linalg-to-gpu and gpu-kernel-outlining: the launch is named
// after the function, a counter and the nn op the generic came from (its
// NameLoc "nn.softmax").
// CHAIN-LABEL: func.func @outlined
// CHAIN: gpu.launch_func @outlined_k0_softmax::@outlined_k0_softmax
// CHAIN: gpu.module @outlined_k0_softmax
// CHAIN-NEXT: gpu.func @outlined_k0_softmax(
#id = affine_map<(d0) -> (d0)>
func.func @outlined(%a: memref<?xf32>, %b: memref<?xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : memref<?xf32>) outs(%b : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } loc("nn.softmax")
  return
}

// -----

// One kernel module that two launches use keeps its names: renaming it for
// the first launch would leave the second pointing at a kernel that is
// gone (the IR would not verify).

// CHECK-LABEL: func.func @shared
// CHECK: gpu.launch_func @shared_kernel::@shared_kernel blocks
// CHECK: gpu.launch_func @shared_kernel::@shared_kernel blocks
// CHECK: gpu.module @shared_kernel {
// CHECK-NEXT: gpu.func @shared_kernel(%{{.+}}: memref<?xf32>) kernel {
module attributes {gpu.container_module} {
  func.func @shared(%a: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @shared_kernel::@shared_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>) loc("shared_k0_linear")
    gpu.launch_func @shared_kernel::@shared_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>) loc("shared_k1_relu")
    return
  }
  gpu.module @shared_kernel {
    gpu.func @shared_kernel(%a: memref<?xf32>) kernel {
      gpu.return
    }
  }
}
