//===- SearchSupport.h - building blocks of the decoding patterns -*- C++
//-*-===//
//
// What the decoders' conversion patterns share: a row arg-max that does not
// depend on reduction order, calls of the runtime's search entry points
// (buffers handed over as addresses, through a private call-site function
// that keeps them alive), and calls of a decoder's callee graphs (a
// language model, a transducer's predictor and joiner) on a row batch.
//
//===----------------------------------------------------------------------===//

#ifndef NN_LOWERING_CONVERSION_SEARCHSUPPORT_H
#define NN_LOWERING_CONVERSION_SEARCHSUPPORT_H

#include "lowering/conversion/Abi.h"
#include "lowering/conversion/LinalgBuilder.h"
#include "lowering/conversion/Patterns.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <utility>

namespace mlir::nn {

/// The best class of each row of `x` ([P..., V] -> [P...] i32) and its
/// value, in two reductions LLVM vectorizes: the largest value ignoring
/// NaN (maxnum), then the lowest index holding it (a min over indices).
/// Neither depends on the order a backend reduces in. A row without a
/// number above -inf gives -inf and some index; the caller reads class 0
/// there (the ops' rule).
std::pair<Value, Value> rowArgMax(LinalgBuilder &lb, Value x);

/// `tensor`'s buffer, viewed with a fully dynamic strided layout.
Value bufferOf(OpBuilder &b, Location loc, Value tensor);

/// A fresh buffer of `shape` for the runtime to fill.
Value outputBuffer(OpBuilder &b, Location loc, ArrayRef<Value> shape,
                   Type element);

/// The address of `memref`'s first element (as i64) and its strides.
std::pair<Value, SmallVector<Value>> addressOf(OpBuilder &b, Location loc,
                                               Value memref);

/// A private function of `module` named `prefix` + a number not taken
/// yet, with memref arguments of `types`, whose body `body` builds (given
/// the function's name; the return is added after). Searches call the
/// runtime through such a function rather than inline: the call's memref
/// operands keep the buffers alive (deallocation places frees after the
/// call), while the runtime's entry point takes bare addresses.
func::FuncOp createCallSite(
    OpBuilder &b, ModuleOp module, StringRef prefix, TypeRange types,
    function_ref<void(OpBuilder &, ValueRange, StringRef name)> body);
/// The same, for a function that returns values of `results`: what `body`
/// returns.
func::FuncOp createCallSite(
    OpBuilder &b, ModuleOp module, StringRef prefix, TypeRange types,
    TypeRange results,
    function_ref<SmallVector<Value>(OpBuilder &, ValueRange, StringRef name)>
        body);

/// The private declaration of runtime entry point `name`, added once per
/// module.
void declareRuntimeFunction(OpBuilder &b, ModuleOp module, StringRef name,
                            FunctionType type);

/// Rows of `fresh` where `mask` [B] i32 is non-zero, rows of `old`
/// elsewhere (both [B, ...], of one type).
Value selectRows(LinalgBuilder &lb, Value mask, Value fresh, Value old);

/// A call of the function row-batch callee `callee` lowers to, on `rows`
/// rows: its one root dim (the row batch), `operands`, then the
/// parameters it reads (the caller's ABI includes them, AbiBuilder).
SmallVector<Value> callOnRows(LinalgBuilder &lb, const GraphAbi &callee,
                              Value rows, ValueRange operands);

/// The results of beam search `op` from the runtime's dense N-best buffers
/// (labels [B, beam, capacity], labelLengths and scores [B, beam], counts
/// [B]), for its result type `labelsType`:
///  - N-best `[B, K, Y]`: K is bound to the counts, H = flatten(B, K)
///    follows, Y to the hypotheses' lengths in H's order; labels and
///    scores are sliced to the longest list and the longest hypothesis.
///  - best only `[B, Y]`: row 0 of each list (length 0 and score -inf when
///    a sequence has none), Y bound to its lengths.
/// Padded sizes are at least 1.
SmallVector<Value> beamSearchResults(ConversionState &state, Operation *op,
                                     NNTensorType labelsType, LinalgBuilder &lb,
                                     Value labels, Value labelLengths,
                                     Value scores, Value counts, Value batch);

} // namespace mlir::nn

#endif // NN_LOWERING_CONVERSION_SEARCHSUPPORT_H
