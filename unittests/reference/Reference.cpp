//===- Reference.cpp - a plain evaluator of nn graphs (tests only) --------===//
//
// The graph walker: binds a graph's dims and arguments, evaluates its ops
// in order (calls recurse into the callee) and collects its results and
// marked losses. Each op family of the dialect is evaluated in its own
// file, behind the entry points of Evaluators.h.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"

#include "Evaluators.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>

using mlir::cast;
using mlir::MLIRContext;
using mlir::ModuleOp;
using mlir::OwningOpRef;
using mlir::ParserConfig;
using mlir::SymbolTable;
using namespace nn::reference;

Array nn::reference::zeros(std::vector<int64_t> shape) {
  Array a;
  a.shape = std::move(shape);
  a.data.assign(count(a.shape), 0.0);
  return a;
}

Array nn::reference::logSoftmax(const Array &x) {
  Array y = x;
  int64_t width = x.shape.back(),
          rows = count(x.shape) / std::max<int64_t>(width, 1);
  for (int64_t r = 0; r < rows; ++r) {
    const double *in = &x.data[r * width];
    double max = -kInf;
    for (int64_t c = 0; c < width; ++c)
      max = std::max(max, in[c]);
    double sum = 0;
    for (int64_t c = 0; c < width; ++c)
      sum += std::exp(in[c] - max);
    for (int64_t c = 0; c < width; ++c)
      y.data[r * width + c] = in[c] - max - std::log(sum);
  }
  return y;
}

void Frame::deriveDims() {
  for (ir::DimDeclAttr decl : table.getDecls()) {
    std::string name = decl.getName().str();
    if (decl.isFlatten()) {
      std::string inner = decl.getInner().str();
      if (derived.count(name) || !lengths.count(inner))
        continue;
      derived.insert(name);
      int64_t total = 0;
      offsets[name].clear();
      for (int64_t l : lengths.at(inner)) {
        offsets[name].push_back(total);
        total += l;
      }
      sizes[name] = total;
      continue;
    }
    if (decl.isLift()) {
      std::string flat = decl.getBatch().str(), source = decl.getSource().str();
      if (derived.count(name) || !offsets.count(flat) || !lengths.count(source))
        continue;
      derived.insert(name);
      sizes[name] = sizes.at(source);
      lengths[name].clear();
      for (int64_t h = 0; h < sizes.at(flat); ++h)
        lengths[name].push_back(lengths.at(source)[owner(flat, h)]);
      continue;
    }
    bool follows = decl.isDerived() || decl.getKind() == ir::DimKind::packed;
    if (!follows || derived.count(name) ||
        !lengths.count(decl.getSource().str()) ||
        (decl.isGridPacked() && !lengths.count(decl.getInner().str())))
      continue;
    derived.insert(name);
    if (decl.isDerived()) {
      std::string source = decl.getSource().str();
      sizes[name] = decl.deriveLength(sizes.at(source));
      lengths[name].clear();
      for (int64_t l : lengths.at(source))
        lengths[name].push_back(decl.deriveLength(l));
    } else if (decl.isGridPacked()) {
      const std::vector<int64_t> &rows = lengths.at(decl.getSource().str());
      const std::vector<int64_t> &columns = lengths.at(decl.getInner().str());
      int64_t total = 0;
      for (size_t b = 0; b < rows.size(); ++b)
        total += rows[b] * columns[b];
      sizes[name] = total;
    } else {
      int64_t total = 0;
      for (int64_t l : lengths.at(decl.getSource().str()))
        total += l;
      sizes[name] = total;
    }
  }
}

namespace {

class Evaluator {
public:
  Evaluator(ModuleOp module) : symbols(module) {}

  absl::Status run(ir::GraphOp graph, std::vector<Array> arguments,
                   std::map<std::string, int64_t> sizes,
                   std::map<std::string, std::vector<int64_t>> lengths,
                   const std::map<std::string, Array> &parameters,
                   std::vector<Array> &results, LossList &losses);

  /// The lengths of every sequence dim of the last graph run() finished
  /// (the entry's, once evaluate() returns): roots, derived and computed.
  std::map<std::string, std::vector<int64_t>> lastLengths;

private:
  SymbolTable symbols;
};

absl::Status Evaluator::run(ir::GraphOp graph, std::vector<Array> arguments,
                            std::map<std::string, int64_t> sizes,
                            std::map<std::string, std::vector<int64_t>> lengths,
                            const std::map<std::string, Array> &parameters,
                            std::vector<Array> &results, LossList &losses) {
  Frame f(std::move(sizes), std::move(lengths), ir::DimTable(graph.getDims()));
  f.deriveDims();
  for (auto [argument, array] : llvm::zip(graph.getArguments(), arguments))
    f.values[argument] = array;

  for (Operation &op : graph.getBody().front()) {
    absl::Status status;
    llvm::TypeSwitch<Operation *>(&op)
        // The graph ops need the walker's state; every other op goes to
        // its family.
        .Case([&](ir::ParamRefOp ref) {
          f.setResult(ref, parameters.at(ref.getName().str()));
        })
        .Case([&](ir::CallOp call) {
          auto callee = symbols.lookup<ir::GraphOp>(call.getCallee());
          ir::DimTable calleeTable(callee.getDims());
          ir::DimBinding binding(calleeTable, f.table);
          auto error = [&] { return call.emitOpError(); };
          for (auto [i, type] : llvm::enumerate(callee.getArgumentTypes()))
            (void)binding.unify(cast<ir::NNTensorType>(type),
                                typeOf(call.getOperand(i)), "operand", error);
          for (auto [i, type] : llvm::enumerate(callee.getResultTypes()))
            (void)binding.unify(cast<ir::NNTensorType>(type),
                                typeOf(call.getResult(i)), "result", error);
          std::map<std::string, int64_t> calleeSizes;
          std::map<std::string, std::vector<int64_t>> calleeLengths;
          for (ir::DimDeclAttr decl : calleeTable.getDecls()) {
            std::string bound = binding.lookup(decl.getName().getValue()).str();
            if (bound.empty())
              continue;
            calleeSizes[decl.getName().str()] = f.sizes.at(bound);
            if (f.lengths.count(bound))
              calleeLengths[decl.getName().str()] = f.lengths.at(bound);
          }
          std::vector<Array> args;
          for (Value operand : call.getOperands())
            args.push_back(f.values[operand]);
          std::vector<Array> calleeResults;
          status = run(callee, args, calleeSizes, calleeLengths, parameters,
                       calleeResults, losses);
          for (auto [result, array] :
               llvm::zip(call.getResults(), calleeResults))
            f.values[result] = array;
        })
        .Case<ir::CtcBeamSearchOp, ir::TransducerGreedyDecodeOp,
              ir::TransducerBeamSearchOp>([&](Operation *decode) {
          // The decoder's callee graphs (a language model, a predictor and
          // a joiner) run on a row batch.
          RowGraphRunner runRows =
              [&](llvm::StringRef name, int64_t rows, std::vector<Array> args,
                  std::vector<Array> &out) -> absl::Status {
            auto callee = symbols.lookup<ir::GraphOp>(name);
            ir::DimTable calleeTable(callee.getDims());
            llvm::ArrayRef<ir::DimDeclAttr> decls = calleeTable.getDecls();
            std::map<std::string, int64_t> calleeSizes{
                {decls.front().getName().str(), rows}};
            // A sequence-form predictor's label dim: every row as long as
            // its argument's axis 1.
            std::map<std::string, std::vector<int64_t>> calleeLengths;
            if (decls.size() == 2) {
              int64_t length = args.front().shape.at(1);
              calleeSizes[decls[1].getName().str()] = length;
              calleeLengths[decls[1].getName().str()].assign(rows, length);
            }
            out.clear();
            LossList none;
            return run(callee, std::move(args), calleeSizes, calleeLengths,
                       parameters, out, none);
          };
          if (auto search = mlir::dyn_cast<ir::CtcBeamSearchOp>(decode))
            status = evaluateCtcBeamSearchOp(f, search, runRows);
          else
            evaluateCalleeDecodeOp(f, decode, runRows, status);
        })
        .Case([&](ir::ReturnOp ret) {
          for (Value operand : ret.getOperands())
            results.push_back(f.values[operand]);
        })
        .Default([&](Operation *other) {
          if (evaluateFrameWiseOp(f, other) || evaluateSequenceOp(f, other) ||
              evaluateAttentionOp(f, other) ||
              evaluateLossOp(f, other, losses) || evaluateCtcOp(f, other) ||
              evaluateErrorOp(f, other) || evaluateTransducerOp(f, other) ||
              evaluateDecodeOp(f, other) || evaluatePackOp(f, other) ||
              evaluateGradientOp(f, other))
            return;
          status =
              absl::InvalidArgumentError("reference: no evaluation for " +
                                         other->getName().getStringRef().str());
        });
    if (!status.ok())
      return status;
  }
  lastLengths = f.lengths;
  return absl::OkStatus();
}

Array toArray(const nn::Tensor &tensor) {
  Array a;
  a.shape = tensor.shape();
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    a.data.push_back(tensor.at(i));
  return a;
}

} // namespace

absl::Status nn::reference::evaluate(const std::string &source,
                                     const std::string &entry,
                                     const RunInputs &inputs, Result &result) {
  MLIRContext context;
  context.loadDialect<ir::NNDialect>();
  OwningOpRef<ModuleOp> module =
      mlir::parseSourceString<ModuleOp>(source, ParserConfig(&context));
  if (!module)
    return absl::InvalidArgumentError("reference: cannot parse the module");
  auto graph = SymbolTable(*module).lookup<ir::GraphOp>(entry);
  if (!graph)
    return absl::InvalidArgumentError("reference: no graph @" + entry);

  std::map<std::string, int64_t> sizes;
  std::map<std::string, std::vector<int64_t>> lengths;
  std::vector<Array> arguments;
  for (auto [index, type] : llvm::enumerate(graph.getArgumentTypes())) {
    const Tensor &tensor = inputs.inputs.at(graph.getArgName(index));
    auto nnType = cast<ir::NNTensorType>(type);
    for (unsigned i = 0; i < nnType.getRank(); ++i)
      if (nnType.isNamedDim(i))
        sizes[nnType.getDimName(i).str()] = tensor.shape()[i];
    arguments.push_back(toArray(tensor));
  }
  for (const auto &[dim, values] : inputs.lengths) {
    lengths[dim].assign(values.begin(), values.end());
    ir::DimDeclAttr decl = ir::DimTable(graph.getDims()).lookup(dim);
    if (decl)
      sizes[decl.getBatch().str()] = (int64_t)values.size();
    if (!sizes.count(dim)) {
      int64_t longest = 1;
      for (int32_t l : values)
        longest = std::max<int64_t>(longest, l);
      sizes[dim] = longest;
    }
  }
  std::map<std::string, Array> parameters;
  for (const auto &[name, tensor] : inputs.parameters)
    parameters[name] = toArray(tensor);

  Evaluator evaluator(*module);
  LossList losses;
  result = Result();
  absl::Status status = evaluator.run(graph, arguments, sizes, lengths,
                                      parameters, result.outputs, losses);
  for (auto &[name, loss] : losses)
    result.losses[name] = loss;
  result.lengths = evaluator.lastLengths;
  return status;
}
