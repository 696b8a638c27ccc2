//===- Passes.td - lowering passes for nn -------------------*- tablegen -*-===//

#ifndef NN_LOWERING_PASSES_TD
#define NN_LOWERING_PASSES_TD

include "mlir/Pass/PassBase.td"

def NNConvertToLinalg : Pass<"nn-convert-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lowers nn graphs to func, tensor, linalg, scf and math";
  let description = [{
    Each `nn.graph` becomes a `func.func` of the same name with the calling
    convention of `lowering/conversion/Abi.h`: root dims first (a batch dim
    as its `index` size; a sequence dim as its padded size and a
    `tensor<?xi32>` of lengths), then the graph's arguments, then the
    parameters it reads; the results are the graph's results followed by,
    per marked loss, its f64 masked sum and f64 inverse normalization
    factor (the pass runs `nn-expose-losses` first). Frame-wise ops become
    linalg ops on padded or packed positions; recurrences become `scf.for`
    over time with per-sequence masking; pack and unpack copy each
    sequence's valid rows; beam searches call the runtime's search entry
    points (`nn_search_*`) on their buffers. Parameters become arguments;
    `nn.parameter` ops are removed.

    It is a partial dialect conversion over one pattern family per op
    family (`lowering/conversion/*Patterns.cpp`): ops named in `leave-ops`
    stay, their operands and results meeting the lowered IR through
    `builtin.unrealized_conversion_cast`, for a later pass to lower
    differently. See docs/lowering.md.
  }];
  let options = [
    ListOption<"leaveOps", "leave-ops", "std::string",
               "nn ops to leave unconverted for a later pass (e.g. nn.lstm)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    // Searches hand their buffers to the runtime (DecodePatterns.cpp).
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect", "::mlir::LLVM::LLVMDialect"
  ];
}

def NNCopiesToLinalg : Pass<"nn-copies-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Rewrites memref.copy into linalg.copy";
  let description = [{
    A `memref.copy` involving a strided view lowers to a call of `memrefCopy`,
    a helper that lives in MLIR's runner-utils library (which links
    libLLVM). Compiled artifacts must not need it, so such copies become
    `linalg.copy`, which lowers to plain loops; copies between contiguous
    buffers stay (they lower to memcpy) unless `all` is set: on the GPU
    path every copy must become a kernel.
  }];
  let options = [
    Option<"all", "all", "bool", /*default=*/"false",
           "Rewrite copies between contiguous buffers too">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def NNGemmToBlas : Pass<"nn-gemm-to-blas", "::mlir::ModuleOp"> {
  let summary = "Calls a BLAS GEMM (OpenBLAS, oneDNN or cuBLAS) for the GEMMs of nn layers";
  let description = [{
    Runs on bufferized IR. Replaces `linalg.matmul_transpose_b` and the
    contraction `y(p..., o) += x(p..., i) * w(o, i)` that `nn.linear` lowers
    to on padded frames by one call to the CBLAS GEMM of the element type
    (the artifact links OpenBLAS). Operands must have unit inner stride;
    `x` and `y` of the contraction must be contiguous so that their leading
    axes collapse into rows. Others stay loops. docs/performance.md has
    the measurement behind this choice.

    With `runtime=onednn` f32 GEMMs call the runtime's `nn_cpu_sgemm`
    (oneDNN's sgemm, on the OpenMP threads of the generated loops; f64
    GEMMs stay CBLAS calls), with `runtime=cuda` the runtime's cuBLAS entry
    points (`nn_cuda_sgemm` / `nn_cuda_dgemm`): the same arguments after a
    pointer to a string that names the nn op and its location, for error
    messages.
  }];
  let options = [
    Option<"runtime", "runtime", "::mlir::nn::GemmRuntime",
           /*default=*/"::mlir::nn::GemmRuntime::cblas",
           "Which GEMM to call: cblas (OpenBLAS), onednn (the runtime's "
           "oneDNN sgemm) or cuda (the runtime's cuBLAS)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect"
  ];
}

def NNLinalgToGpu : Pass<"nn-linalg-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Maps each linalg.generic on memrefs to a gpu.launch";
  let description = [{
    One kernel per op. Without reductions: a thread per iteration point,
    innermost loop fastest (coalesced), blocks of 256. A reduction over the
    innermost loop with an associative combiner (addf, mulf, maximumf,
    minimumf, addi): a block per output element whose threads stride over
    the reduction and combine with `gpu.all_reduce`; a reduction to a scalar
    uses one block of 1024 threads. Other reductions: a thread per output
    element with a loop. Launches carry the kernel name
    `<function>_k<n>_<nn op>` in a NameLoc (see nn-name-gpu-kernels).
    Expects linalg-generalize-named-ops to have run.
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def NNNameGpuKernels : Pass<"nn-name-gpu-kernels", "::mlir::ModuleOp"> {
  let summary = "Names outlined kernels after the nn op they compute";
  let description = [{
    Runs after gpu-kernel-outlining. Each `gpu.launch_func` whose location
    is a NameLoc (set by nn-linalg-to-gpu) gets its kernel and gpu.module
    renamed to that name, so PTX, profiles and runtime errors say which nn
    op a kernel belongs to. A gpu.module that several launches use keeps
    its name (renaming it for one would strand the others).
  }];
}

def NNParallelLoops : Pass<"nn-parallel-loops", "::mlir::ModuleOp"> {
  let summary = "Keeps one level of scf.parallel, where the work pays for threads";
  let description = [{
    Runs after `convert-linalg-to-parallel-loops` and before upstream
    `convert-scf-to-openmp`. Each `scf.parallel` inside another becomes a
    nest of `scf.for` (one level of threads; inner loops stay for LLVM to
    vectorize), and so do all but the first dimension of the outermost
    ones (OpenMP would collapse them into one loop that divides to find
    its indices). An outermost one whose work (its iterations times the
    trip counts of the loops inside, where known before it) is below
    `min-work` becomes sequential; when the work is known only at run
    time, an `scf.if` chooses between the parallel loop and a sequential
    copy. An `scf.forall` (on memrefs: the lowering's loops over
    independent sequences, each a recursion over its own frames) becomes
    an outermost `scf.parallel` that stays parallel whenever it has two
    iterations or more: its work per iteration, a loop over a length read
    inside it, is not known before it, and is a whole sequence's.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"32768",
           "Iterations (times inner trip counts) below which a loop runs "
           "on one thread">
  ];
}

def NNRegisterAccumulators : Pass<"nn-register-accumulators", "::mlir::ModuleOp"> {
  let summary = "Carries loop-invariant memref accumulators in registers";
  let description = [{
    An `scf.for` whose body loads, updates and stores one memref element
    at indices defined outside the loop, and reads or writes no other
    memory that may alias it (`LocalAliasAnalysis`), carries the element
    as an `iter_arg` instead: loaded before the loop, stored after it,
    the same operations in the same order. The loop may store elsewhere
    (a map fused with a row reduction writes its elements). linalg's
    loops reduce through memory; inside an outlined OpenMP body LLVM can
    no longer prove such an accumulator apart from the loop's inputs and
    would load and store it in every iteration. Runs in every CPU
    pipeline, threaded or not, so that both compute the same bits.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def NNFreeAfterLastUse : Pass<"nn-free-after-last-use", "::mlir::ModuleOp"> {
  let summary = "Frees each buffer right after its last use instead of at the end of its block";
  let description = [{
    Upstream's ownership-based buffer deallocation puts a buffer's
    `memref.dealloc` at the end of the block that allocates it: in a train
    step, the entry function's block, so that every buffer of the step
    stayed allocated until the step returned. This pass moves each
    unconditional `memref.dealloc` of a `memref.alloc` in the same block to
    just after the last op of the block that uses the buffer or a value
    that may alias it: memref results of any op that takes it (views,
    casts, loops carrying it, calls), the base buffer and pointers
    `memref.extract_strided_metadata` and
    `memref.extract_aligned_pointer_as_index` derive from it, and the
    results of an op whose region yields it, and everything computed from
    those addresses. A buffer keeps its dealloc where it is when it or its
    address leaves the block (returned or yielded from it, used from
    another block), reaches a call or a store, or an op makes something of
    it that is neither a memref nor a scalar; conditional deallocs (under
    `scf.if`) stay. Deallocs only ever move earlier.

    ```mlir
    %a = memref.alloc() : memref<4xf32>
    linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
    // ... the rest of the block, %a unused ...
    memref.dealloc %a : memref<4xf32>
    ```

    becomes a dealloc right after the `linalg.fill`. The CPU pipeline runs
    it; GPU artifacts keep upstream's placement until their launches and
    frees have been checked on a GPU.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def NNSequencesToOpenMP : Pass<"nn-sequences-to-openmp", "::mlir::ModuleOp"> {
  let summary = "Converts scf.parallel to OpenMP, loops over sequences on a dynamic schedule";
  let description = [{
    Runs upstream `convert-scf-to-openmp`, then gives each `omp.wsloop`
    that was a loop over sequences (an `scf.parallel` that
    `nn-parallel-loops` marked `nn.sequences`) a dynamic schedule: a thread
    takes the next sequence when it finishes one. A sequence costs its
    length (a recursion) or its length squared (attention), and a batch's
    lengths differ several times over, so the static schedule's equal
    halves of the batch leave a thread idle while the other works through
    the longer half. The other loops keep the static schedule: their
    iterations cost the same. The schedule changes which thread runs a
    sequence, never what it computes. Worksharing loops already in the
    input keep their schedule.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::omp::OpenMPDialect"];
}

def NNInlineAllocaScopes : Pass<"nn-inline-alloca-scopes", "::mlir::ModuleOp"> {
  let summary = "Inlines memref.alloca_scope regions that allocate nothing";
  let description = [{
    `convert-scf-to-openmp` wraps each threaded loop body in a
    `memref.alloca_scope` (stack allocations freed per iteration). nn's loop
    bodies allocate on the heap only, and a scope must keep one block,
    which lowering its loops to control flow would break: such scopes are
    inlined.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def NNExpandDivisions : Pass<"nn-expand-divisions", "::mlir::ModuleOp"> {
  let summary = "Expands the integer ceil/floor divisions LLVM has no op for";
  let description = [{
    `arith.ceildivsi`, `ceildivui` and `floordivsi` become plain integer
    arithmetic; nothing else changes. (Upstream `arith-expand` also turns
    `maximumf`/`maxnumf` into compares and selects, which LLVM does not
    recognize as max reductions: row maxima would stay scalar.)
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def NNApproximateMath : Pass<"nn-approximate-math", "::mlir::ModuleOp"> {
  let summary = "Replaces f32 transcendental math ops by polynomial approximations";
  let description = [{
    LLVM lowers `math.exp` and friends to libm calls, which keep the loops
    around them scalar. MLIR's polynomial approximations are plain
    arithmetic that LLVM vectorizes; together with the reassociable row
    sums of softmax-like ops this vectorizes the loss tail. The pass applies
    MLIR's whole set (`populateMathPolynomialApproximationPatterns`): the
    f32 exp, log, tanh and erf the nn ops lower to, and also sin, cos, atan,
    atan2, asin, acos, log1p, log2, expm1 and cbrt; f16 and bf16 ops are
    computed through f32. f64 ops are left alone. The greedy driver also
    folds what it touches (`maximumf %v, %v` becomes `%v`).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def NNGpuPlaceBuffers : Pass<"nn-gpu-place-buffers", "::mlir::ModuleOp"> {
  let summary = "Device memory for kernel-only buffers, managed for the rest";
  let description = [{
    Runs after gpu-kernel-outlining. Classifies each buffer with its aliases
    (views, loop-carried and branch values, call arguments and results):
    a buffer that host code reads or writes (loads, stores, anything but
    descriptor handling, deallocation and launches) becomes
    `gpu.alloc host_shared` (CUDA managed memory); the others stay
    `memref.alloc`, which GPU artifacts allocate in device memory. The
    function arguments host code touches are listed in the module
    attribute `nn.host_visible_args` ({function: [argument indices]}), for
    the runtime to stage in managed memory.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def NNArtifactEntry : Pass<"nn-artifact-entry", "::mlir::ModuleOp"> {
  let summary = "Adds an artifact's exported symbols to an LLVM-dialect module";
  let description = [{
    The last step before translation to LLVM IR. Takes the manifest text
    from the module attribute `nn.manifest` (set by the compiler, removed
    here) and adds what the runtime looks up (docs/runtime.md):
    `nn_manifest` (the text, NUL-terminated), `nn_entry(void **argv)`,
    which loads slot i of argv and passes it as the i-th parameter of
    `_mlir_ciface_<graph>` (pointers as they are, integer sizes through
    ptrtoint), `nn_manifest_hash()` (the text's checksum) and
    `nn_entry_arity()` (the slots nn_entry reads). Every other definition
    gets hidden visibility, so that nothing in the loading program
    interposes.
  }];
  let options = [
    Option<"graph", "graph", "std::string", /*default=*/"\"\"",
           "The entry graph (its C interface is _mlir_ciface_<graph>)">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def NNGpuAllocators : Pass<"nn-gpu-allocators", "::mlir::ModuleOp"> {
  let summary = "Host allocations of GPU artifacts go to the CUDA backend";
  let description = [{
    Memrefs lower to calls of MLIR's generic allocation functions
    (`_mlir_memref_to_llvm_alloc`, `_aligned_alloc`, `_free`), which the
    runtime implements with host memory. In GPU artifacts the buffers
    `memref.alloc` leaves are device buffers: their calls are renamed to
    the runtime's `nn_cuda_alloc`, `nn_cuda_aligned_alloc`, `nn_cuda_free`.
  }];
}

#endif // NN_LOWERING_PASSES_TD
