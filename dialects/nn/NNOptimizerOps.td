//===- NNOptimizerOps.td - optimizer updates ---------------*- tablegen -*-===//
//
// What nn-train-step builds after the gradients: the global norm, the
// clipping factor and one step of each optimizer.
//
//===----------------------------------------------------------------------===//

#ifndef NN_OPTIMIZER_OPS_TD
#define NN_OPTIMIZER_OPS_TD

include "dialects/nn/NNOpBase.td"

//===----------------------------------------------------------------------===//
// Optimizer updates (nn-train-step)
//===----------------------------------------------------------------------===//

def NN_GlobalNormOp : NN_Op<"global_norm", [Pure]> {
  let summary = "the L2 norm of several tensors taken together";
  let description = [{
    `sqrt(sum over every element of every input of x^2)`, the squares
    accumulated in f64: the gradient norm of a train step (clipping and
    the report). The inputs are parameter gradients (static shapes). A NaN
    or infinite element gives a NaN or infinite norm.

    ```mlir
    %n = nn.global_norm %dw, %db : !nn.tensor<[10, 4], f32>, !nn.tensor<[10], f32>
    ```
  }];
  let arguments = (ins Variadic<NN_FloatTensor>:$inputs);
  let results = (outs NN_F32Scalar:$norm);
  let assemblyFormat = "$inputs attr-dict `:` qualified(type($inputs))";
  let hasVerifier = 1;
}

def NN_ClipFactorOp : NN_Op<"clip_factor", [Pure]> {
  let summary = "the gradient scale of clipping by global norm";
  let description = [{
    `min(1, max_norm / (norm + 1e-6))`, computed in f64: gradients scaled by
    it have a global norm of at most `max_norm` (PyTorch's
    `clip_grad_norm_` rule). A NaN norm gives NaN, an infinite one 0.

    ```mlir
    %s = nn.clip_factor %n max_norm 5.000000e+00
    ```
  }];
  let arguments = (ins NN_F32Scalar:$norm, NN_PositiveF64Attr:$max_norm);
  let results = (outs NN_F32Scalar:$factor);
  let assemblyFormat = "$norm `max_norm` $max_norm attr-dict";
}

//===----------------------------------------------------------------------===//
// Data-parallel training (nn-all-reduce-gradients)
//===----------------------------------------------------------------------===//

def NN_AllReduceOp : NN_Op<"all_reduce", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "sums tensors over every process of a data-parallel run";
  let description = [{
    Each result is its input summed element-wise over the processes of the
    run: the communicator the runtime holds (include/nn/Communicator.h;
    MPI under `mpirun`), or the input itself in a run of one process. The
    inputs travel together as one buffer (a bucket: one collective for all
    of them), so they share one element type and have static shapes.

    Every process must run the same `nn.all_reduce` ops in the same order
    with the same shapes, which one compiled train step guarantees. The op
    communicates: it is not `Pure`, so no canonicalization removes,
    merges or reorders it.

    ```mlir
    %dw, %db = nn.all_reduce %gw, %gb : !nn.tensor<[10, 4], f32>, !nn.tensor<[10], f32>
    ```
  }];
  let arguments = (ins Variadic<NN_FloatTensor>:$inputs);
  let results = (outs Variadic<NN_FloatTensor>:$results);
  let assemblyFormat = "$inputs attr-dict `:` qualified(type($inputs))";
  let hasVerifier = 1;
}

class NN_UpdateOp<string mnemonic, list<string> matching>
    : NN_Op<mnemonic, [Pure, AllTypesMatch<matching>]> {
  let hasVerifier = 1;
}

def NN_SgdUpdateOp : NN_UpdateOp<"sgd_update",
                                 ["param", "grad", "new_param"]> {
  let summary = "one step of plain stochastic gradient descent";
  let description = [{
    With `g = grad * grad_scale` (`grad_scale` 1 when absent) and
    `weight_decay` the L2 coefficient:
    `new_param = param - lr * (g + weight_decay * param)`. Element-wise
    in f32; `lr` is this step's learning rate.

    ```mlir
    %p1 = nn.sgd_update %p, %g lr %lr : !nn.tensor<[10, 4], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$param, NN_FloatTensor:$grad,
                       NN_F32Scalar:$lr, Optional<NN_F32Scalar>:$grad_scale,
                       DefaultValuedAttr<NN_NonNegativeF64Attr, "0.0">:$weight_decay);
  let results = (outs NN_FloatTensor:$new_param);
  let assemblyFormat = [{
    $param `,` $grad `lr` $lr (`scale` $grad_scale^)?
    (`weight_decay` $weight_decay^)? attr-dict `:` qualified(type($param))
  }];
}

def NN_MomentumUpdateOp : NN_UpdateOp<"momentum_update",
    ["param", "grad", "velocity", "new_param", "new_velocity"]> {
  let summary = "one step of SGD with (Nesterov) momentum";
  let description = [{
    PyTorch's `SGD(momentum, nesterov, dampening=0)`: with
    `g = grad * grad_scale + weight_decay * param`,
    `new_velocity = momentum * velocity + g`, and
    `new_param = param - lr * d` where `d = g + momentum * new_velocity`
    with `nesterov`, `d = new_velocity` without. The velocity starts at 0
    (which equals PyTorch's first-step rule when dampening is 0).

    ```mlir
    %p1, %v1 = nn.momentum_update %p, %g, %v lr %lr momentum 9.000000e-01
        nesterov : !nn.tensor<[10, 4], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$param, NN_FloatTensor:$grad,
                       NN_FloatTensor:$velocity, NN_F32Scalar:$lr,
                       Optional<NN_F32Scalar>:$grad_scale,
                       NN_UnitIntervalF64Attr:$momentum, UnitAttr:$nesterov,
                       DefaultValuedAttr<NN_NonNegativeF64Attr, "0.0">:$weight_decay);
  let results = (outs NN_FloatTensor:$new_param, NN_FloatTensor:$new_velocity);
  let assemblyFormat = [{
    $param `,` $grad `,` $velocity `lr` $lr (`scale` $grad_scale^)?
    `momentum` $momentum (`nesterov` $nesterov^)?
    (`weight_decay` $weight_decay^)? attr-dict `:` qualified(type($param))
  }];
}

def NN_AdamUpdateOp : NN_UpdateOp<"adam_update",
    ["param", "grad", "m", "v", "new_param", "new_m", "new_v"]> {
  let summary = "one step of Adam, or AdamW with `decoupled`";
  let description = [{
    PyTorch's `Adam` / `AdamW` (no amsgrad). `step` is the number of this
    update, counting from 1. With `g = grad * grad_scale`, plus
    `weight_decay * param` unless `decoupled`:
    `new_m = beta1 m + (1 - beta1) g`,
    `new_v = beta2 v + (1 - beta2) g^2`,
    `new_param = p - (lr / c1) new_m / (sqrt(new_v) / sqrt(c2) + epsilon)`
    with the bias corrections `c1 = 1 - beta1^step`, `c2 = 1 - beta2^step`
    (computed in f64, once per step), and `p = param` or, `decoupled`,
    `p = param (1 - lr weight_decay)`. The moments start at 0.

    ```mlir
    %p1, %m1, %v1 = nn.adam_update %p, %g, %m, %v lr %lr step %t
        beta1 9.000000e-01 beta2 9.990000e-01 epsilon 1.000000e-08
        : !nn.tensor<[10, 4], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$param, NN_FloatTensor:$grad,
                       NN_FloatTensor:$m, NN_FloatTensor:$v, NN_F32Scalar:$lr,
                       NN_I32Scalar:$step, Optional<NN_F32Scalar>:$grad_scale,
                       NN_UnitIntervalF64Attr:$beta1,
                       NN_UnitIntervalF64Attr:$beta2,
                       NN_PositiveF64Attr:$epsilon,
                       DefaultValuedAttr<NN_NonNegativeF64Attr, "0.0">:$weight_decay,
                       UnitAttr:$decoupled);
  let results = (outs NN_FloatTensor:$new_param, NN_FloatTensor:$new_m,
                      NN_FloatTensor:$new_v);
  let assemblyFormat = [{
    $param `,` $grad `,` $m `,` $v `lr` $lr `step` $step
    (`scale` $grad_scale^)? `beta1` $beta1 `beta2` $beta2 `epsilon` $epsilon
    (`weight_decay` $weight_decay^)? (`decoupled` $decoupled^)? attr-dict `:`
    qualified(type($param))
  }];
}

#endif // NN_OPTIMIZER_OPS_TD
