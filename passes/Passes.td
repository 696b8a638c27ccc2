//===- Passes.td - nn-level passes -------------------------*- tablegen -*-===//

#ifndef NN_PASSES_TD
#define NN_PASSES_TD

include "mlir/Pass/PassBase.td"

def NNPackBeforeLoss : Pass<"nn-pack-before-loss", "::mlir::ModuleOp"> {
  let summary = "Runs each loss's tail, and the ops before it that pay, on packed frames only";
  let description = [{
    For each frame-wise loss marked with `nn.mark_loss` over padded frames
    `[B, T]`, walks backward through frame-wise ops (asking
    `FrameWiseOpInterface`) and, as `pack` says, through sequence-mixing
    ops with a packed form (`SequenceMixingOpInterface::hasPackedForm`:
    `nn.lstm`, `nn.conv1d`, `nn.pool`, `nn.attention`, `nn.rotary`) over
    the loss's batch, to the frontier: values made by other ops (the rest
    of the sequence-mixing layers, calls) or graph arguments. Each value
    packs over its own sequence dim, `packed(B, S)`, so the walk passes
    strided ops too (a stride-2 conv1d from `T` to `T2`). `pack=loss-tail`
    moves no sequence-mixing op, `earliest` every one it reaches, and
    `auto` (the default) each one whose estimated cost per position packed
    is below its cost padded at the batch's expected share of real frames
    `expected-fill` (docs/passes.md: the work it does on padded frames,
    the pack of its results against the pack of the values before it, and
    the frame-wise ops before it). Each frontier value is packed once
    (`nn.pack`, shared by all losses that reach it), the chain is
    re-created on packed values `[N, ...]`, and the loss is marked on the
    packed value, so its sum and normalization are those of the masked
    padded loss. A per-sequence loss with a packed form (`nn.ctc_loss`)
    has its frames packed the same way, and so do the encoder and
    prediction operands of an `nn.transducer_join` onto the packed grid
    (except at `loss-tail`). A decoding op (the CTC and transducer
    searches) anchors the walk too, so a decode-only graph runs its model
    packed (except at `loss-tail`, and never for an input that is a graph
    argument): CTC searches read the packed scores, transducer searches an
    unpack. A padded value of the chain that something else still uses (a
    graph result, a padded-only op) gets an `nn.unpack` of its packed twin
    instead of a second padded computation. Other per-sequence
    losses and values without a sequence axis are left alone. The pass is
    idempotent. See
    docs/passes.md.
  }];
  let dependentDialects = ["::mlir::nn::NNDialect"];
  let options = [
    Option<"pack", "pack", "::nn::PackFrontier",
           /*default=*/"::nn::OptimizeOptions().packFrontier",
           "How far back to pack: loss-tail (frame-wise ops only), earliest "
           "(every op with a packed form too) or auto (where the cost model "
           "says it pays)">,
    Option<"expectedFill", "expected-fill", "double",
           /*default=*/"::nn::OptimizeOptions().packExpectedFill",
           "N / (B * T_max) that the cost model of pack=auto expects">,
    Option<"emitRemarks", "emit-remarks", "bool", /*default=*/"false",
           "Emit a remark per loss saying what was packed">
  ];
}

def NNFuseLossTail : Pass<"nn-fuse-loss-tail", "::mlir::ModuleOp"> {
  let summary = "Fuses linear -> (log_softmax ->) cross_entropy into one op without the logits";
  let description = [{
    Replaces `nn.cross_entropy` from logits of an `nn.linear`, or from log
    probabilities of an `nn.log_softmax` of an `nn.linear`, by one
    `nn.linear_cross_entropy`, whose lowering never holds the `[P..., V]`
    logits (blocks of rows, docs/loss-tail.md). Any positions (padded,
    packed, per sequence), with or without bias and label smoothing. Left
    alone, with a remark when asked: a chain whose logits or log
    probabilities are also used elsewhere (a graph result, a second loss,
    a frame error) — they would have to exist anyway.

    After `nn-autodiff` the pass also merges each fused loss with its
    gradient (`nn.linear_cross_entropy_grad`, which recomputes the logits)
    into `nn.linear_cross_entropy_train`, one sweep for both, when the
    gradient is the loss's own seed (`nn.loss_seed` of its one mark, not a
    custom normalization): `backward=sweep`, the default. With
    `backward=recompute` the gradient recomputes the logits in a second
    sweep. Idempotent; docs/passes.md.
  }];
  let dependentDialects = ["::mlir::nn::NNDialect"];
  let options = [
    Option<"backward", "backward", "::nn::LossTailBackward",
           /*default=*/"::nn::OptimizeOptions().lossTailBackward",
           "How the gradient gets its logits: sweep (merged with the "
           "forward) or recompute">,
    Option<"emitRemarks", "emit-remarks", "bool", /*default=*/"false",
           "Emit a remark per loss saying what was fused or why not">
  ];
}

def NNDropResults : Pass<"nn-drop-results", "::mlir::ModuleOp"> {
  let summary = "Removes the entry graph's own results and eval_only losses (for a train step)";
  let description = [{
    A compiled train step returns the gradient norm and the updates, never
    the graph's results. The pipeline drops them first when it compiles
    one, with the pure ops only they used: no unpack is built for a result
    nobody reads, and a loss tail whose logits were also returned can fuse
    (`nn-fuse-loss-tail`). Every `nn.mark_loss ... eval_only` of the module
    goes too, with the pure ops only it used (a decoding and the
    `nn.edit_distance` scoring it): such losses are reported by evaluation
    graphs and never computed by a step. A `computed` dim whose producer
    (the decoder) went with them leaves the graph's dims, with the unused
    dims declared from it.
  }];
  let dependentDialects = ["::mlir::nn::NNDialect"];
  let options = [
    Option<"graphName", "graph", "std::string", /*default=*/"\"\"",
           "The graph (default: the one no graph calls)">
  ];
}

def NNSaveLstmTape : Pass<"nn-save-lstm-tape", "::mlir::ModuleOp"> {
  let summary = "Gives each nn.lstm_grad its forward's tape instead of a recompute";
  let description = [{
    Runs after `nn-autodiff`. For an `nn.lstm_grad` without a tape whose
    direction and operands are those of an `nn.lstm` in the same block (the
    one whose VJP it is), the lstm becomes an `nn.lstm_with_tape` and the
    gradient reads its tape: the backward no longer runs the forward a
    second time (its gate GEMMs, one per step, and the gate math). The cost
    is memory: the tape, `[B, T, D * 6H]`, lives from the forward to the
    backward instead of being built in the backward (docs/autodiff.md).
  }];
  let dependentDialects = ["::mlir::nn::NNDialect"];
}

def NNSaveAttentionStats : Pass<"nn-save-attention-stats", "::mlir::ModuleOp"> {
  let summary = "Gives each nn.attention_grad its forward's output and log normalizers";
  let description = [{
    Runs after `nn-autodiff`. For an `nn.attention_grad` without saved
    values whose operands and attributes (the scale by value) are those of
    an `nn.attention` in the same block (the one whose VJP it is;
    `AttentionOp::isForwardOf`), the attention becomes an
    `nn.attention_with_stats` and the gradient reads its result and its
    per-query, per-head log normalizers. The backward then no longer walks
    every query block's keys a first time to recompute them: two of the
    nine block GEMMs of a forward and backward (three of eleven with
    relative positions), and a softmax pass over every score. The cost is `[B, T, H]` values kept from the forward to
    the backward (the result is usually kept anyway: the projection after
    the attention reads it in its own backward) (docs/autodiff.md).
  }];
  let dependentDialects = ["::mlir::nn::NNDialect"];
}

def NNExposeLosses : Pass<"nn-expose-losses", "::mlir::ModuleOp"> {
  let summary = "Returns each marked loss from its graph as two f64 values";
  let description = [{
    Replaces each `nn.mark_loss` by `nn.loss_terms` (its masked f64 sum and
    inverse normalization factor) and appends both to the graph's results:
    its own losses in body order, a callee's where it is called (the call
    gets the callee's new results). Afterwards every loss is a value that
    flows to `nn.return`, so the lowering of each op can stay local. The
    order is the one of the graph ABI (lowering/conversion/Abi.h), which
    keeps names and scales; the lowering runs this step first. Idempotent.
  }];
  let dependentDialects = ["::mlir::nn::NNDialect"];
}

def NNDeriveStepGraphs : Pass<"nn-derive-step-graphs", "::mlir::ModuleOp"> {
  let summary = "Writes the step form of each transducer predictor given as a sequence";
  let description = [{
    A transducer decoder (`nn.transducer_greedy_decode`,
    `nn.transducer_beam_search`) may name its predictor in the sequence
    form, the network as training calls it: `(y: [S, U] i32) -> [S, U, D]`
    over the labels after `nn.prepend_start`. This pass writes, once per
    such predictor, a graph `<predictor>.step` in the step form the
    lowering calls one label at a time, `(y: [S] i32, h_1, c_1, ...) ->
    ([S, D], h_1', c_1', ...)`, and points the decoders at it. Frame-wise
    ops run on the label's row, `nn.dropout` is the identity (a search is
    not training), and each forward `nn.lstm` becomes one cell step in
    frame-wise ops whose (h, c) states the step graph takes and returns
    (zero at the start, as `nn.lstm` starts). The decoders' verifier has
    already refused predictors with other ops. Runs first in the optimize
    pipeline (before dropout and autodiff rewrite the predictor for
    training) and again, as a no-op then, at the start of
    `nn-convert-to-linalg`. Idempotent; docs/passes.md.
  }];
  let dependentDialects = ["::mlir::nn::NNDialect"];
}

def NNAutodiff : Pass<"nn-autodiff", "::mlir::ModuleOp"> {
  let summary = "Reverse-mode autodiff: returns the gradient of the training objective";
  let description = [{
    The training objective of a graph is the sum over its marked losses
    that are not `as_error` of `scale * value`, value being the normalized
    loss or the plain sum as `use_normalized_loss` says. The pass appends to
    the graph one result per parameter that reaches the objective, in
    module order: the gradient of the objective with respect to it, with
    the result attribute `nn.gradient = "<parameter>"`. Each loss is seeded
    with `nn.loss_seed`; the reverse sweep asks each op for its VJP
    (`VjpOpInterface`) and sums the gradients of values used more than once.
    It runs after `nn-pack-before-loss`, so the backward of a packed tail
    runs on packed rows and reaches padded values through the VJP of
    `nn.pack` (an unpack, zero at padded positions). A call's VJP calls the
    callee's companion graph `@<callee>_vjp`, which the pass adds. An op on
    the path to a loss without a VJP is an error naming it.
    docs/autodiff.md.
  }];
  let dependentDialects = ["::mlir::nn::NNDialect"];
  let options = [
    Option<"graphName", "graph", "std::string", /*default=*/"\"\"",
           "The graph to differentiate (default: the one no graph calls)">,
    ListOption<"inputNames", "inputs", "std::string",
               "Float arguments of the graph to return gradients for too "
               "(results after the parameters', with the result attribute "
               "nn.gradient_of_input)">
  ];
}

def NNDropoutTraining : Pass<"nn-dropout-training", "::mlir::ModuleOp"> {
  let summary = "Training mode: dropout and SpecAugment draw their masks from a seed input";
  let description = [{
    Gives every graph that holds a dropout of nonzero rate (`nn.dropout`,
    or `nn.attention ... dropout r` of its weights) or an
    `nn.spec_augment` that masks something (itself or through its calls) a
    last argument `dropout_seed : !nn.tensor<[], i32>`, passes it down its
    calls, and makes each such op draw its masks from it (`nn.dropout %x
    seed %dropout_seed rate r key k`, `nn.attention ... seed %dropout_seed
    ... dropout r dropout_key k`, `nn.spec_augment %x seed
    %dropout_seed ... key k`, `k` unique in the module). A mask depends on
    the seed, the key and the logical position only (docs/dialect.md), so
    packed and padded runs, and the backward, mask the same elements. Runs
    before packing and autodiff.

    With `batch-offset` the argument is `dropout_seed : !nn.tensor<[2],
    i32>`: the seed, then the index in the whole batch of this batch's
    first sequence, which every mask adds to its sequence index. A
    data-parallel rank passes the offset of its part, so its masks are the
    ones the whole batch would draw (docs/distributed.md).
  }];
  let dependentDialects = ["::mlir::nn::NNDialect"];
  let options = [
    Option<"batchOffset", "batch-offset", "bool", /*default=*/"false",
           "The seed argument also holds the batch offset (!nn.tensor<[2], i32>)">
  ];
}

def NNInlineCalls : Pass<"nn-inline-calls", "::mlir::ModuleOp"> {
  let summary = "Copies called graphs into their callers, their dims renamed into the caller's";
  let description = [{
    Replaces each `nn.call` by the callee's body, so that
    `nn-pack-before-loss` and `nn-fuse-loss-tail` see the whole model
    instead of stopping at the call. The callee's types are renamed into
    the caller's dims: a dim the call binds becomes the caller's dim (the
    callee's declaration, renamed, must equal the caller's, or be a plain
    sequence dim of the same batch); a dim of the callee's own (a
    subsampled length) becomes the caller's dim declared the same way, or
    joins the caller's dims under its name (made unique). Calls stay when
    the callee marks a loss, computes a dim's lengths, is the caller, or
    binds a dim it cannot stand for (a row batch bound to packed rows);
    calls made by the inlined body are inlined in turn (up to 16 levels).
    Ops keep their locations, so diagnostics and the manifest's saved
    values still name the callee's lines. A callee that no longer has a
    user is erased (it would otherwise become one more candidate entry),
    unless it is the graph named by `graph`. Runs after `nn-dropout-training`
    (an inlined dropout keeps its key and reads the seed the call passed:
    the same masks) and before packing; `inline-calls=false` in the
    compile options turns it off.
  }];
  let dependentDialects = ["::mlir::nn::NNDialect"];
  let options = [
    Option<"graph", "graph", "std::string", /*default=*/"\"\"",
           "The entry graph: kept even when every call of it is inlined">,
    Option<"emitRemarks", "emit-remarks", "bool", /*default=*/"false",
           "Emit a remark per call left, saying why">
  ];
}

def NNAllReduceGradients : Pass<"nn-all-reduce-gradients", "::mlir::ModuleOp"> {
  let summary = "Sums a step's gradients and loss normalizations over processes";
  let description = [{
    Runs after `nn-autodiff`, before the loss tail's gradient is merged
    (`nn-fuse-loss-tail`) and before `nn-train-step`: it makes a
    differentiated graph data-parallel. Each process runs the step on its
    own part of a batch; two kinds of `nn.all_reduce` make the step equal
    to one process on the whole batch:

    - Each loss seed (`nn.loss_seed`) of a normalized loss divides by its
      normalization factor summed over every process (the frames or
      sequences of the whole batch; a custom factor summed likewise), so a
      per-frame loss averages over all frames, not over each part's. A
      plain sum (`normalize sum`, or trained `unnormalized`) needs nothing.
    - The entry graph's parameter gradients are summed before they are
      returned, in buckets of at most `bucket-mb` MiB (one collective per
      bucket and element type; a larger gradient is a bucket of its own).
      With `overlap` (the default) the buckets fill in the order the
      backward finishes the gradients, and each sum is placed right after
      its bucket's last gradient: lowered in two halves, it runs while the
      rest of the backward does (CollectivePatterns.cpp). Without, the
      buckets fill in result order and are summed after the whole
      backward.

    The runtime sums over the processes of its communicator
    (include/nn/Communicator.h); in a run of one process every sum is the
    value itself. docs/distributed.md.
  }];
  let dependentDialects = ["::mlir::nn::NNDialect"];
  let options = [
    Option<"graphName", "graph", "std::string", /*default=*/"\"\"",
           "The differentiated graph (default: the one no graph calls)">,
    Option<"bucketMb", "bucket-mb", "double", /*default=*/"25.0",
           "The most MiB of gradients one all-reduce sums">,
    Option<"overlap", "overlap", "bool", /*default=*/"true",
           "Sum each bucket as soon as the backward has finished it">
  ];
}

def NNTrainStep : Pass<"nn-train-step", "::mlir::ModuleOp"> {
  let summary = "Turns a differentiated graph into one optimizer step";
  let description = [{
    Runs after `nn-autodiff`. The entry graph gets the scalar inputs
    `learning_rate : !nn.tensor<[], f32>` and, for Adam, `step :
    !nn.tensor<[], i32>` (the number of this update, from 1). Each
    parameter with a gradient result gets its optimizer state as new
    parameters marked `nn.optimizer_state` (zero at the start), named
    `optimizer/<slot>/<parameter>`: `velocity` (momentum), `adam_m`,
    `adam_v`. The graph then computes `nn.global_norm` of all gradients
    (the result marked `nn.grad_norm`), with `clip-norm` their
    `nn.clip_factor`, one update op per parameter, and the `nn.global_norm`
    of all the updated values (marked `nn.updated_norm`: finite exactly
    when every new parameter and state value is). Its results become the
    gradient norm, the updated norm, then the new value of each parameter
    and state parameter (result attribute `nn.update = "<parameter>"`),
    then any input gradients; the graph's own results and the parameter
    gradients are dropped. The runtime swaps the updates in for the
    parameters between steps when the losses and both norms are finite.
    docs/training.md.

    Besides `graph`, the pass takes the options of `nn::OptimizerOptions`
    (`optimizer=sgd momentum=0.9`, ...), declared once for every front end
    in include/nn/Options.h; `nn-opt --help` lists them.
  }];
  let dependentDialects = ["::mlir::nn::NNDialect"];
  let options = [
    Option<"graphName", "graph", "std::string", /*default=*/"\"\"",
           "The differentiated graph (default: the one no graph calls)">
  ];
}

#endif // NN_PASSES_TD
