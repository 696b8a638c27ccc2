//===- Reference.cpp - a plain evaluator of nn graphs (tests only) --------===//

#include "Reference.h"

#include "dialects/nn/Dims.h"
#include "dialects/nn/NNOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <functional>
#include <limits>

using mlir::cast;
using mlir::FailureOr;
using mlir::isa;
using mlir::MLIRContext;
using mlir::ModuleOp;
using mlir::Operation;
using mlir::OwningOpRef;
using mlir::ParserConfig;
using mlir::SymbolTable;
using mlir::Value;
namespace ir = mlir::nn;
using nn::reference::Array;

namespace {

const double kInf = std::numeric_limits<double>::infinity();

int64_t count(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

Array zeros(std::vector<int64_t> shape) {
  Array a;
  a.shape = std::move(shape);
  a.data.assign(count(a.shape), 0.0);
  return a;
}

/// Row-major offset of `index` in `shape`.
int64_t offsetOf(const std::vector<int64_t> &shape,
                 const std::vector<int64_t> &index) {
  int64_t offset = 0;
  for (size_t i = 0; i < shape.size(); ++i)
    offset = offset * shape[i] + index[i];
  return offset;
}

/// Calls fn(index) for every index of `shape`, in row-major order.
template <typename Fn> void forEach(const std::vector<int64_t> &shape, Fn fn) {
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t n = count(shape), flat = 0; flat < n; ++flat) {
    fn(index);
    for (size_t i = shape.size(); i-- > 0;) {
      if (++index[i] < shape[i])
        break;
      index[i] = 0;
    }
  }
}

class Evaluator {
public:
  Evaluator(ModuleOp module) : symbols(module) {}

  absl::Status
  run(ir::GraphOp graph, std::vector<Array> arguments,
      std::map<std::string, int64_t> sizes,
      std::map<std::string, std::vector<int64_t>> lengths,
      const std::map<std::string, Array> &parameters,
      std::vector<Array> &results,
      std::vector<std::pair<std::string, nn::reference::Loss>> &losses);

private:
  SymbolTable symbols;
};

/// One graph's evaluation state.
struct Frame {
  Frame(std::map<std::string, int64_t> sizes,
        std::map<std::string, std::vector<int64_t>> lengths, ir::DimTable table)
      : sizes(std::move(sizes)), lengths(std::move(lengths)),
        table(std::move(table)) {}

  std::map<std::string, int64_t> sizes;
  std::map<std::string, std::vector<int64_t>> lengths;
  ir::DimTable table;
  llvm::DenseMap<Value, Array> values;

  int64_t size(ir::NNTensorType type, unsigned axis) {
    return type.isNamedDim(axis) ? sizes.at(type.getDimName(axis).str())
                                 : type.getStaticSize(axis);
  }
  std::vector<int64_t> shape(ir::NNTensorType type) {
    std::vector<int64_t> s;
    for (unsigned i = 0; i < type.getRank(); ++i)
      s.push_back(size(type, i));
    return s;
  }
  /// Whether position `index` of a value of `type` is a real frame.
  bool valid(ir::NNTensorType type, const std::vector<int64_t> &index) {
    for (unsigned i = 1; i < type.getNumPositionDims(); ++i) {
      std::string dim = type.getDimName(i).str();
      if (lengths.count(dim) && index[i] >= lengths.at(dim)[index[0]])
        return false;
    }
    return true;
  }
};

ir::NNTensorType typeOf(Value v) { return cast<ir::NNTensorType>(v.getType()); }

/// The sum of a loss over its valid positions and its normalization, as
/// nn.mark_loss describes them.
nn::reference::Loss lossTerms(Frame &f, Value lossValue, const Array &loss,
                              ir::LossNormalization normalization,
                              const Array *custom) {
  ir::NNTensorType type = typeOf(lossValue);
  nn::reference::Loss value;
  forEach(loss.shape, [&](const std::vector<int64_t> &index) {
    if (f.valid(type, index))
      value.sum += loss.data[offsetOf(loss.shape, index)];
  });
  FailureOr<ir::Positions> positions = ir::classifyPositions(
      type, f.table, [&] { return mlir::emitError(lossValue.getLoc()); });
  switch (normalization) {
  case ir::LossNormalization::sum:
    value.normalization = 1;
    break;
  case ir::LossNormalization::per_sequence:
    value.normalization = f.sizes.at(positions->batch.str());
    break;
  case ir::LossNormalization::per_frame:
    forEach(loss.shape, [&](const std::vector<int64_t> &index) {
      if (f.valid(type, index))
        value.normalization += 1;
    });
    break;
  case ir::LossNormalization::custom:
    for (double v : custom->data)
      value.normalization += v;
    break;
  }
  return value;
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// Per row (all axes but the last) log-softmax.
Array logSoftmax(const Array &x) {
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

/// A rank-0 array.
Array scalar(double value) {
  Array a;
  a.data.push_back(value);
  return a;
}

/// A forward LSTM over sequence b's first len(b) frames; zero elsewhere.
/// `reverse` walks each sequence from its own last frame.
void lstm(const Array &x, const std::vector<int64_t> &len, const double *wi,
          const double *wh, const double *bias, int64_t hidden, bool reverse,
          Array &y, int64_t featureOffset) {
  int64_t batch = x.shape[0], time = x.shape[1], in = x.shape[2];
  int64_t out = y.shape[2];
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<double> h(hidden, 0.0), c(hidden, 0.0), gates(4 * hidden);
    for (int64_t step = 0; step < len[b]; ++step) {
      int64_t t = reverse ? len[b] - 1 - step : step;
      for (int64_t g = 0; g < 4 * hidden; ++g) {
        double sum = bias[g];
        for (int64_t i = 0; i < in; ++i)
          sum += wi[g * in + i] * x.data[(b * time + t) * in + i];
        for (int64_t j = 0; j < hidden; ++j)
          sum += wh[g * hidden + j] * h[j];
        gates[g] = sum;
      }
      for (int64_t j = 0; j < hidden; ++j) {
        double i = sigmoid(gates[j]), f = sigmoid(gates[hidden + j]);
        double g = std::tanh(gates[2 * hidden + j]);
        double o = sigmoid(gates[3 * hidden + j]);
        c[j] = f * c[j] + i * g;
        h[j] = o * std::tanh(c[j]);
        y.data[(b * time + t) * out + featureOffset + j] = h[j];
      }
    }
  }
  (void)time;
}

/// Backpropagation through time of `lstm` above, in the textbook order:
/// run the sequence forward keeping every step's state, then walk back
/// from its last step. dy is read at `featureOffset`; the gradients add
/// into dx, dwi, dwh and db.
void lstmGrad(const Array &x, const std::vector<int64_t> &len, const Array &dy,
              const double *wi, const double *wh, const double *bias,
              int64_t hidden, bool reverse, int64_t featureOffset, Array &dx,
              double *dwi, double *dwh, double *db) {
  int64_t batch = x.shape[0], time = x.shape[1], in = x.shape[2];
  int64_t out = dy.shape[2], gates = 4 * hidden;
  for (int64_t b = 0; b < batch; ++b) {
    int64_t steps = len[b];
    auto frame = [&](int64_t k) { return reverse ? steps - 1 - k : k; };
    // State after step k is at k + 1; index 0 is the zero initial state.
    std::vector<std::vector<double>> h(steps + 1,
                                       std::vector<double>(hidden, 0.0)),
        c = h, act(steps, std::vector<double>(gates));
    for (int64_t k = 0; k < steps; ++k) {
      const double *xt = &x.data[(b * time + frame(k)) * in];
      for (int64_t g = 0; g < gates; ++g) {
        double sum = bias[g];
        for (int64_t i = 0; i < in; ++i)
          sum += wi[g * in + i] * xt[i];
        for (int64_t j = 0; j < hidden; ++j)
          sum += wh[g * hidden + j] * h[k][j];
        act[k][g] = g / hidden == 2 ? std::tanh(sum) : sigmoid(sum);
      }
      for (int64_t j = 0; j < hidden; ++j) {
        c[k + 1][j] =
            act[k][hidden + j] * c[k][j] + act[k][j] * act[k][2 * hidden + j];
        h[k + 1][j] = act[k][3 * hidden + j] * std::tanh(c[k + 1][j]);
      }
    }
    std::vector<double> dhNext(hidden, 0.0), dcNext(hidden, 0.0), da(gates);
    for (int64_t k = steps - 1; k >= 0; --k) {
      int64_t t = frame(k);
      for (int64_t j = 0; j < hidden; ++j) {
        double i = act[k][j], f = act[k][hidden + j],
               g = act[k][2 * hidden + j], o = act[k][3 * hidden + j];
        double dh =
            dy.data[(b * time + t) * out + featureOffset + j] + dhNext[j];
        double tc = std::tanh(c[k + 1][j]);
        double dc = dcNext[j] + dh * o * (1 - tc * tc);
        da[j] = dc * g * i * (1 - i);
        da[hidden + j] = dc * c[k][j] * f * (1 - f);
        da[2 * hidden + j] = dc * i * (1 - g * g);
        da[3 * hidden + j] = dh * tc * o * (1 - o);
        dcNext[j] = dc * f;
      }
      const double *xt = &x.data[(b * time + t) * in];
      for (int64_t j = 0; j < hidden; ++j) {
        dhNext[j] = 0;
        for (int64_t g = 0; g < gates; ++g)
          dhNext[j] += da[g] * wh[g * hidden + j];
      }
      for (int64_t g = 0; g < gates; ++g) {
        db[g] += da[g];
        for (int64_t i = 0; i < in; ++i) {
          dwi[g * in + i] += da[g] * xt[i];
          dx.data[(b * time + t) * in + i] += da[g] * wi[g * in + i];
        }
        for (int64_t j = 0; j < hidden; ++j)
          dwh[g * hidden + j] += da[g] * h[k][j];
      }
    }
  }
}

/// For each frame of an RNA alignment [B, T], the prediction state it is
/// in: the labels emitted on the frames before it (classes neither blank
/// nor negative), at most U1_b - 1; -1 on padded frames.
std::vector<int64_t> gatheredStates(const Frame &f, Value states,
                                    Value alignmentValue,
                                    const Array &alignment, int64_t blank) {
  const auto &frames = f.lengths.at(typeOf(alignmentValue).getDimName(1).str());
  const auto &counts = f.lengths.at(typeOf(states).getDimName(1).str());
  int64_t batch = alignment.shape[0], time = alignment.shape[1];
  std::vector<int64_t> positions(batch * time, -1);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t emitted = 0;
    for (int64_t t = 0; t < frames[b]; ++t) {
      positions[b * time + t] = std::min(emitted, counts[b] - 1);
      auto cls = (int64_t)alignment.data[b * time + t];
      if (cls != blank && cls >= 0)
        ++emitted;
    }
  }
  return positions;
}

/// The (t, u) rows of a transducer joint: packed (sequence by sequence,
/// t-major) or padded [B, T, U1, ...].
struct TransducerGrid {
  TransducerGrid(const Frame &f, ir::NNTensorType encoder,
                 ir::NNTensorType prediction, ir::NNTensorType joint,
                 int64_t batch, int64_t time, int64_t states)
      : frames(f.lengths.at(encoder.getDimName(1).str())),
        columns(f.lengths.at(prediction.getDimName(1).str())),
        packed(joint.getNumPositionDims() == 1), batch(batch), time(time),
        states(states) {}
  /// For a loss: the joint's own dims name T and U1.
  TransducerGrid(const Frame &f, ir::NNTensorType joint, int64_t batch)
      : packed(joint.getNumPositionDims() == 1), batch(batch) {
    std::string t, u1;
    if (packed) {
      ir::DimDeclAttr decl = f.table.lookup(joint.getDimName(0));
      t = decl.getSource().str();
      u1 = decl.getInner().str();
    } else {
      t = joint.getDimName(1).str();
      u1 = joint.getDimName(2).str();
    }
    frames = f.lengths.at(t);
    columns = f.lengths.at(u1);
    time = f.sizes.at(t);
    states = f.sizes.at(u1);
  }

  std::vector<int64_t> shape(int64_t width) const {
    if (!packed)
      return {batch, time, states, width};
    int64_t rows = 0;
    for (int64_t b = 0; b < batch; ++b)
      rows += frames[b] * columns[b];
    return {rows, width};
  }

  /// fn(b, t, u, row) for every valid (t, u) of every sequence.
  void forEachRow(
      const std::function<void(int64_t, int64_t, int64_t, int64_t)> &fn) const {
    int64_t row = 0;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = 0; t < frames[b]; ++t)
        for (int64_t u = 0; u < columns[b]; ++u)
          fn(b, t, u, packed ? row++ : (b * time + t) * states + u);
  }

  std::vector<int64_t> frames, columns;
  bool packed;
  int64_t batch, time = 0, states = 0;
};

/// The transducer lattice of a joint's log-probs, solved per sequence by
/// the forward and backward recursions in float64.
struct TransducerLattice {
  TransducerLattice(const Frame &f, Value jointValue, Value labelsValue,
                    const Array &joint, const Array &labelArray,
                    ir::LossInput kind, ir::TransducerTopology topology,
                    int64_t blank)
      : grid(f, typeOf(jointValue), labelArray.shape[0]),
        logProbs(kind == ir::LossInput::logits ? logSoftmax(joint) : joint),
        labelArray(labelArray), classes(joint.shape.back()), blank(blank),
        batch(labelArray.shape[0]),
        rna(topology == ir::TransducerTopology::rna) {
    rowOf.resize(batch);
    for (int64_t b = 0; b < batch; ++b)
      rowOf[b].assign(grid.frames[b],
                      std::vector<int64_t>(grid.columns[b], -1));
    grid.forEachRow([&](int64_t b, int64_t t, int64_t u, int64_t row) {
      rowOf[b][t][u] = row;
    });
  }

  double lp(int64_t row, int64_t k) const {
    return logProbs.data[row * classes + k];
  }
  int64_t label(int64_t b, int64_t u) const {
    return (int64_t)labelArray.data[b * labelArray.shape[1] + u];
  }

  struct Solution {
    /// rnnt: alpha[t][u] for t < T; rna: alpha[t][u] after t frames
    /// (t <= T). beta likewise: the log-prob of finishing from there.
    std::vector<std::vector<double>> alpha, beta;
    int64_t frames, labels;
    bool rna;
    double logP;
    /// beta of where the blank (label) at (t, u) leads.
    double afterBlank(int64_t t, int64_t u) const {
      if (rna)
        return beta[t + 1][u];
      if (t + 1 < frames)
        return beta[t + 1][u];
      return u == labels ? 0.0 : -kInf;
    }
    double afterLabel(int64_t t, int64_t u) const {
      return rna ? beta[t + 1][u + 1] : beta[t][u + 1];
    }
  };

  static double logAdd(double a, double b) {
    double m = std::max(a, b);
    return m == -kInf ? -kInf : m + std::log(std::exp(a - m) + std::exp(b - m));
  }

  /// The best RNA path of sequence b (written from nn.transducer_align's
  /// description: ties to the blank): each frame's class, and its
  /// log-probability; -inf and no classes when no path fits.
  std::pair<std::vector<int64_t>, double> bestPath(int64_t b) const {
    int64_t T = grid.frames[b], U = grid.columns[b] - 1;
    // best[t][u]: the best score of emitting u labels in t frames.
    std::vector<std::vector<double>> best(T + 1,
                                          std::vector<double>(U + 1, -kInf));
    best[0][0] = 0;
    auto stay = [&](int64_t t, int64_t u) {
      return best[t - 1][u] + lp(rowOf[b][t - 1][u], blank);
    };
    auto move = [&](int64_t t, int64_t u) {
      return u == 0 ? -kInf
                    : best[t - 1][u - 1] +
                          lp(rowOf[b][t - 1][u - 1], label(b, u - 1));
    };
    for (int64_t t = 1; t <= T; ++t)
      for (int64_t u = 0; u <= U; ++u)
        best[t][u] = std::max(stay(t, u), move(t, u));
    if (best[T][U] == -kInf)
      return {{}, -kInf};
    std::vector<int64_t> path(T);
    for (int64_t t = T, u = U; t >= 1; --t) {
      bool emits = move(t, u) > stay(t, u);
      path[t - 1] = emits ? label(b, u - 1) : blank;
      u -= emits;
    }
    return {path, best[T][U]};
  }

  Solution solve(int64_t b) const {
    Solution s;
    s.frames = grid.frames[b];
    s.labels = grid.columns[b] - 1;
    s.rna = rna;
    int64_t T = s.frames, U = s.labels;
    auto blankAt = [&](int64_t t, int64_t u) {
      return lp(rowOf[b][t][u], blank);
    };
    auto labelAt = [&](int64_t t, int64_t u) {
      return lp(rowOf[b][t][u], label(b, u));
    };
    int64_t rows = rna ? T + 1 : T;
    s.alpha.assign(rows, std::vector<double>(U + 1, -kInf));
    s.beta = s.alpha;
    if (!rna) {
      for (int64_t t = 0; t < T; ++t)
        for (int64_t u = 0; u <= U; ++u) {
          double a = t == 0 && u == 0 ? 0.0 : -kInf;
          if (t > 0)
            a = logAdd(a, s.alpha[t - 1][u] + blankAt(t - 1, u));
          if (u > 0)
            a = logAdd(a, s.alpha[t][u - 1] + labelAt(t, u - 1));
          s.alpha[t][u] = a;
        }
      for (int64_t t = T - 1; t >= 0; --t)
        for (int64_t u = U; u >= 0; --u) {
          double v = blankAt(t, u) + s.afterBlank(t, u);
          if (u < U)
            v = logAdd(v, labelAt(t, u) + s.beta[t][u + 1]);
          s.beta[t][u] = v;
        }
      s.logP = T == 0 ? -kInf : s.beta[0][0];
      return s;
    }
    s.alpha[0][0] = 0;
    for (int64_t t = 1; t <= T; ++t)
      for (int64_t u = 0; u <= U; ++u) {
        double a = s.alpha[t - 1][u] + blankAt(t - 1, u);
        if (u > 0)
          a = logAdd(a, s.alpha[t - 1][u - 1] + labelAt(t - 1, u - 1));
        s.alpha[t][u] = a;
      }
    s.beta[T][U] = 0;
    for (int64_t t = T - 1; t >= 0; --t)
      for (int64_t u = 0; u <= U; ++u) {
        double v = blankAt(t, u) + s.beta[t + 1][u];
        if (u < U)
          v = logAdd(v, labelAt(t, u) + s.beta[t + 1][u + 1]);
        s.beta[t][u] = v;
      }
    s.logP = s.alpha[T][U];
    return s;
  }

  TransducerGrid grid;
  Array logProbs;
  const Array &labelArray;
  int64_t classes, blank, batch;
  bool rna;
  std::vector<std::vector<std::vector<int64_t>>> rowOf;
};

absl::Status Evaluator::run(
    ir::GraphOp graph, std::vector<Array> arguments,
    std::map<std::string, int64_t> sizes,
    std::map<std::string, std::vector<int64_t>> lengths,
    const std::map<std::string, Array> &parameters, std::vector<Array> &results,
    std::vector<std::pair<std::string, nn::reference::Loss>> &losses) {
  Frame f(std::move(sizes), std::move(lengths), ir::DimTable(graph.getDims()));
  // Derived and packed dims from the roots.
  for (ir::DimDeclAttr decl : f.table.getDecls()) {
    std::string name = decl.getName().str();
    if (decl.isDerived()) {
      std::string source = decl.getSource().str();
      f.sizes[name] = decl.deriveLength(f.sizes.at(source));
      f.lengths[name].clear();
      for (int64_t l : f.lengths.at(source))
        f.lengths[name].push_back(decl.deriveLength(l));
    } else if (decl.isGridPacked()) {
      const std::vector<int64_t> &rows = f.lengths.at(decl.getSource().str());
      const std::vector<int64_t> &columns = f.lengths.at(decl.getInner().str());
      int64_t total = 0;
      for (size_t b = 0; b < rows.size(); ++b)
        total += rows[b] * columns[b];
      f.sizes[name] = total;
    } else if (decl.getKind() == ir::DimKind::packed) {
      int64_t total = 0;
      for (int64_t l : f.lengths.at(decl.getSource().str()))
        total += l;
      f.sizes[name] = total;
    }
  }
  for (auto [argument, array] : llvm::zip(graph.getArguments(), arguments))
    f.values[argument] = array;

  for (Operation &op : graph.getBody().front()) {
    auto in = [&](unsigned i) -> const Array & {
      return f.values[op.getOperand(i)];
    };
    auto set = [&](Array a, unsigned result = 0) {
      f.values[op.getResult(result)] = std::move(a);
    };
    absl::Status status;
    llvm::TypeSwitch<Operation *>(&op)
        .Case([&](ir::ParamRefOp ref) {
          set(parameters.at(ref.getName().str()));
        })
        .Case([&](ir::LinearOp linear) {
          const Array &x = in(0), &w = in(1);
          int64_t out = w.shape[0], width = w.shape[1];
          std::vector<int64_t> shape = x.shape;
          shape.back() = out;
          Array y = zeros(shape);
          int64_t rows = count(x.shape) / width;
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t o = 0; o < out; ++o) {
              double sum = linear.getBias() ? in(2).data[o] : 0.0;
              for (int64_t i = 0; i < width; ++i)
                sum += x.data[r * width + i] * w.data[o * width + i];
              y.data[r * out + o] = sum;
            }
          set(y);
        })
        .Case<ir::AddOp, ir::MulOp>([&](Operation *binary) {
          Array y = in(0);
          for (size_t i = 0; i < y.data.size(); ++i)
            y.data[i] = isa<ir::AddOp>(binary) ? y.data[i] + in(1).data[i]
                                               : y.data[i] * in(1).data[i];
          set(y);
        })
        .Case([&](ir::DropoutOp dropout) {
          Array y = in(0);
          if (!dropout.getSeed()) {
            set(y);
            return;
          }
          // The mask as the op's description states it.
          auto mix = [](uint32_t h) {
            h ^= h >> 16;
            h *= 0x85ebca6bu;
            h ^= h >> 13;
            h *= 0xc2b2ae35u;
            h ^= h >> 16;
            return h;
          };
          double rate = dropout.getRate().convertToDouble();
          auto threshold = static_cast<uint32_t>(std::ceil(rate * 16777216.0));
          uint32_t seed =
              static_cast<uint32_t>(static_cast<int64_t>(in(1).data[0]));
          uint32_t base = mix(mix(seed + 0x9e3779b9u) ^
                              static_cast<uint32_t>(dropout.getKey()));
          ir::NNTensorType type = typeOf(dropout.getResult());
          FailureOr<ir::Positions> positions = ir::classifyPositions(
              type, f.table, [&] { return mlir::emitError(dropout.getLoc()); });
          // Packed rows: the (sequence, frame) each holds.
          std::vector<std::pair<int64_t, int64_t>> rows;
          bool packed = positions->kind == ir::PositionKind::Packed;
          if (packed)
            for (auto [b, length] :
                 llvm::enumerate(f.lengths.at(positions->sequences[0].str())))
              for (int64_t t = 0; t < length; ++t)
                rows.emplace_back(b, t);
          int64_t flat = 0;
          forEach(y.shape, [&](const std::vector<int64_t> &index) {
            std::vector<int64_t> logical;
            if (packed) {
              logical = {rows[index[0]].first, rows[index[0]].second};
              logical.insert(logical.end(), index.begin() + 1, index.end());
            } else {
              logical = index;
            }
            uint32_t h = base;
            for (int64_t c : logical)
              h = mix(h ^ static_cast<uint32_t>(c));
            bool keep = (h >> 8) >= threshold;
            y.data[flat] = keep ? y.data[flat] / (1.0 - rate) : 0.0;
            ++flat;
          });
          set(y);
        })
        .Case<ir::ReluOp, ir::TanhOp, ir::SigmoidOp, ir::GeluOp>(
            [&](Operation *unary) {
              Array y = in(0);
              for (double &v : y.data) {
                if (isa<ir::ReluOp>(unary))
                  v = v > 0 ? v : 0.0;
                else if (isa<ir::TanhOp>(unary))
                  v = std::tanh(v);
                else if (isa<ir::SigmoidOp>(unary))
                  v = sigmoid(v);
                else if (isa<ir::GeluOp>(unary))
                  v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
              }
              set(y);
            })
        .Case([&](ir::LogSoftmaxOp) { set(logSoftmax(in(0))); })
        .Case([&](ir::SoftmaxOp) {
          Array y = logSoftmax(in(0));
          for (double &v : y.data)
            v = std::exp(v);
          set(y);
        })
        .Case([&](ir::LayerNormOp norm) {
          Array y = in(0);
          int64_t width = y.shape.back(), rows = count(y.shape) / width;
          double eps = norm.getEpsilon().convertToDouble();
          for (int64_t r = 0; r < rows; ++r) {
            double mean = 0, var = 0;
            for (int64_t c = 0; c < width; ++c)
              mean += y.data[r * width + c] / width;
            for (int64_t c = 0; c < width; ++c) {
              double d = y.data[r * width + c] - mean;
              var += d * d / width;
            }
            for (int64_t c = 0; c < width; ++c)
              y.data[r * width + c] = (y.data[r * width + c] - mean) /
                                          std::sqrt(var + eps) * in(1).data[c] +
                                      in(2).data[c];
          }
          set(y);
        })
        .Case([&](ir::EmbeddingOp embedding) {
          const Array &ids = in(0), &table = in(1);
          int64_t width = table.shape[1], vocabulary = table.shape[0];
          std::vector<int64_t> shape = ids.shape;
          shape.push_back(width);
          Array y = zeros(shape);
          ir::NNTensorType idsType = typeOf(embedding.getIndices());
          forEach(ids.shape, [&](const std::vector<int64_t> &index) {
            int64_t id = (int64_t)ids.data[offsetOf(ids.shape, index)];
            if (!f.valid(idsType, index) || id < 0 || id >= vocabulary)
              return;
            for (int64_t d = 0; d < width; ++d)
              y.data[offsetOf(ids.shape, index) * width + d] =
                  table.data[id * width + d];
          });
          set(y);
        })
        .Case([&](ir::ConcatOp concat) {
          std::vector<int64_t> shape = f.shape(typeOf(concat.getResult()));
          Array y = zeros(shape);
          int64_t total = shape.back(), rows = count(shape) / total, at = 0;
          for (unsigned i = 0; i < op.getNumOperands(); ++i) {
            int64_t width = in(i).shape.back();
            for (int64_t r = 0; r < rows; ++r)
              for (int64_t c = 0; c < width; ++c)
                y.data[r * total + at + c] = in(i).data[r * width + c];
            at += width;
          }
          set(y);
        })
        .Case([&](ir::LstmOp layer) {
          const Array &x = in(0), &wi = in(1), &wh = in(2), &bias = in(3);
          ir::NNTensorType type = typeOf(layer.getInput());
          const std::vector<int64_t> &len =
              f.lengths.at(type.getDimName(1).str());
          int64_t hidden = wh.shape.back();
          Array y = zeros(f.shape(typeOf(layer.getResult())));
          switch (layer.getDirection()) {
          case ir::LstmDirection::forward:
          case ir::LstmDirection::backward:
            lstm(x, len, wi.data.data(), wh.data.data(), bias.data.data(),
                 hidden, layer.getDirection() == ir::LstmDirection::backward, y,
                 0);
            break;
          case ir::LstmDirection::bidirectional: {
            int64_t wiSize = count(wi.shape) / 2, whSize = count(wh.shape) / 2;
            for (int d = 0; d < 2; ++d)
              lstm(x, len, wi.data.data() + d * wiSize,
                   wh.data.data() + d * whSize,
                   bias.data.data() + d * 4 * hidden, hidden, d == 1, y,
                   d * hidden);
            break;
          }
          }
          set(y);
        })
        .Case([&](ir::Conv1dOp conv) {
          const Array &x = in(0), &w = in(1);
          ir::NNTensorType type = typeOf(conv.getInput());
          const std::vector<int64_t> &len =
              f.lengths.at(type.getDimName(1).str());
          std::vector<int64_t> shape = f.shape(typeOf(conv.getResult()));
          Array y = zeros(shape);
          int64_t outC = w.shape[0], kernel = w.shape[1], inC = w.shape[2];
          int64_t stride = conv.getStride();
          for (int64_t b = 0; b < shape[0]; ++b)
            for (int64_t t = 0; t < shape[1]; ++t)
              for (int64_t o = 0; o < outC; ++o) {
                double sum = conv.getBias() ? in(2).data[o] : 0.0;
                for (int64_t k = 0; k < kernel; ++k) {
                  int64_t source = t * stride - (kernel - 1) / 2 + k;
                  if (source < 0 || source >= len[b])
                    continue;
                  for (int64_t c = 0; c < inC; ++c)
                    sum += w.data[(o * kernel + k) * inC + c] *
                           x.data[(b * x.shape[1] + source) * inC + c];
                }
                y.data[(b * shape[1] + t) * outC + o] = sum;
              }
          set(y);
        })
        .Case([&](ir::PoolOp pool) {
          const Array &x = in(0);
          ir::NNTensorType type = typeOf(pool.getInput());
          const std::vector<int64_t> &len =
              f.lengths.at(type.getDimName(1).str());
          std::vector<int64_t> shape = f.shape(typeOf(pool.getResult()));
          Array y = zeros(shape);
          int64_t channels = shape[2];
          for (int64_t b = 0; b < shape[0]; ++b)
            for (int64_t t = 0; t < shape[1]; ++t)
              for (int64_t c = 0; c < channels; ++c) {
                double max = -kInf, sum = 0;
                int64_t n = 0;
                for (int64_t k = 0; k < (int64_t)pool.getWindow(); ++k) {
                  int64_t source = t * (int64_t)pool.getStride() + k;
                  if (source >= len[b])
                    break;
                  double v = x.data[(b * x.shape[1] + source) * channels + c];
                  max = std::max(max, v);
                  sum += v;
                  ++n;
                }
                y.data[(b * shape[1] + t) * channels + c] =
                    pool.getKind() == ir::PoolKind::max ? max
                                                        : (n ? sum / n : 0.0);
              }
          set(y);
        })
        .Case([&](ir::ReduceOp reduce) {
          const Array &x = in(0);
          unsigned axis = reduce.getAxis();
          ir::NNTensorType type = typeOf(reduce.getInput());
          const std::vector<int64_t> &len =
              f.lengths.at(type.getDimName(axis).str());
          Array y = zeros(f.shape(typeOf(reduce.getResult())));
          std::vector<double> counts(y.data.size(), 0.0);
          if (reduce.getKind() == ir::ReduceKind::max)
            std::fill(y.data.begin(), y.data.end(), -kInf);
          forEach(x.shape, [&](const std::vector<int64_t> &index) {
            if (index[axis] >= len[index[0]])
              return;
            std::vector<int64_t> outIndex = index;
            outIndex.erase(outIndex.begin() + axis);
            double &acc = y.data[offsetOf(y.shape, outIndex)];
            double v = x.data[offsetOf(x.shape, index)];
            acc = reduce.getKind() == ir::ReduceKind::max ? std::max(acc, v)
                                                          : acc + v;
            counts[offsetOf(y.shape, outIndex)] += 1;
          });
          if (reduce.getKind() == ir::ReduceKind::mean)
            for (size_t i = 0; i < y.data.size(); ++i)
              y.data[i] = counts[i] ? y.data[i] / counts[i] : 0.0;
          set(y);
        })
        .Case([&](ir::CrossEntropyOp ce) {
          Array lp = ce.getInputKind() == ir::LossInput::logits
                         ? logSoftmax(in(0))
                         : in(0);
          const Array &targets = in(1);
          int64_t classes = lp.shape.back();
          double eps = ce.getLabelSmoothing().convertToDouble();
          Array y = zeros(targets.shape);
          ir::NNTensorType type = typeOf(ce.getTargets());
          forEach(targets.shape, [&](const std::vector<int64_t> &index) {
            int64_t row = offsetOf(targets.shape, index);
            int64_t target = (int64_t)targets.data[row];
            if (!f.valid(type, index) || target < 0 || target >= classes)
              return;
            double all = 0;
            for (int64_t c = 0; c < classes; ++c)
              all += lp.data[row * classes + c];
            double picked = lp.data[row * classes + target];
            y.data[row] =
                -((1 - eps) * picked +
                  (eps > 0 ? eps / (classes - 1) * (all - picked) : 0));
          });
          set(y);
        })
        .Case([&](ir::LinearCrossEntropyOp ce) {
          // The logits of each valid row, then the smoothed cross entropy
          // of their log-softmax, as the op's description says.
          const Array &x = in(0), &w = in(1);
          const Array &targets = in(ce.getBias() ? 3 : 2);
          int64_t classes = w.shape[0], width = w.shape[1];
          double eps = ce.getLabelSmoothing().convertToDouble();
          Array y = zeros(targets.shape);
          ir::NNTensorType type = typeOf(ce.getTargets());
          forEach(targets.shape, [&](const std::vector<int64_t> &index) {
            int64_t row = offsetOf(targets.shape, index);
            auto target = (int64_t)targets.data[row];
            if (!f.valid(type, index) || target < 0 || target >= classes)
              return;
            std::vector<double> z(classes);
            double max = -std::numeric_limits<double>::infinity();
            for (int64_t c = 0; c < classes; ++c) {
              double sum = ce.getBias() ? in(2).data[c] : 0.0;
              for (int64_t i = 0; i < width; ++i)
                sum += x.data[row * width + i] * w.data[c * width + i];
              z[c] = sum;
              max = std::max(max, sum);
            }
            double total = 0;
            for (double v : z)
              total += std::exp(v - max);
            double lse = max + std::log(total);
            double all = 0;
            for (double v : z)
              all += v - lse;
            double picked = z[target] - lse;
            y.data[row] =
                -((1 - eps) * picked +
                  (eps > 0 ? eps / (classes - 1) * (all - picked) : 0));
          });
          set(y);
        })
        .Case([&](ir::FrameErrorOp) {
          // Written from the op's description: 1 when some class scores
          // strictly higher than the target or a score is NaN.
          const Array &scores = in(0), &targets = in(1);
          int64_t classes = scores.shape.back();
          Array y = zeros(targets.shape);
          for (int64_t row = 0; row < count(targets.shape); ++row) {
            auto target = (int64_t)targets.data[row];
            target =
                std::min<int64_t>(std::max<int64_t>(target, 0), classes - 1);
            double picked = scores.data[row * classes + target];
            bool wrong = std::isnan(picked);
            for (int64_t c = 0; c < classes; ++c) {
              double v = scores.data[row * classes + c];
              wrong = wrong || std::isnan(v) || v > picked;
            }
            y.data[row] = wrong ? 1.0 : 0.0;
          }
          set(y);
        })
        .Case([&](ir::MseOp) {
          const Array &a = in(0), &b = in(1);
          std::vector<int64_t> shape = a.shape;
          int64_t width = shape.back();
          shape.pop_back();
          Array y = zeros(shape);
          for (int64_t r = 0; r < count(shape); ++r)
            for (int64_t c = 0; c < width; ++c) {
              double d = a.data[r * width + c] - b.data[r * width + c];
              y.data[r] += d * d;
            }
          set(y);
        })
        .Case([&](ir::CtcLossOp ctc) {
          Array lp = ctc.getInputKind() == ir::LossInput::logits
                         ? logSoftmax(in(0))
                         : in(0);
          const Array &labels = in(1);
          ir::NNTensorType logitsType = typeOf(ctc.getLogits());
          ir::NNTensorType labelsType = typeOf(ctc.getLabels());
          const auto &frames = f.lengths.at(logitsType.getDimName(1).str());
          const auto &labelCounts =
              f.lengths.at(labelsType.getDimName(1).str());
          int64_t batch = lp.shape[0], time = lp.shape[1],
                  classes = lp.shape[2];
          int64_t blank = ctc.getBlank();
          Array y = zeros({batch});
          auto logAdd = [](double a, double b) {
            double m = std::max(a, b);
            return m == -kInf ? -kInf
                              : m + std::log(std::exp(a - m) + std::exp(b - m));
          };
          for (int64_t b = 0; b < batch; ++b) {
            int64_t u = labelCounts[b], states = 2 * u + 1;
            auto label = [&](int64_t s) {
              return s % 2 ? (int64_t)labels.data[b * labels.shape[1] + s / 2]
                           : blank;
            };
            auto emit = [&](int64_t t, int64_t s) {
              return lp.data[(b * time + t) * classes + label(s)];
            };
            double loss;
            if (frames[b] == 0) {
              loss = u == 0 ? 0.0 : kInf;
            } else {
              std::vector<double> alpha(states, -kInf), next(states);
              alpha[0] = emit(0, 0);
              if (states > 1)
                alpha[1] = emit(0, 1);
              for (int64_t t = 1; t < frames[b]; ++t) {
                for (int64_t s = 0; s < states; ++s) {
                  double sum = alpha[s];
                  if (s >= 1)
                    sum = logAdd(sum, alpha[s - 1]);
                  if (s >= 2 && s % 2 && label(s) != label(s - 2))
                    sum = logAdd(sum, alpha[s - 2]);
                  next[s] = sum + emit(t, s);
                }
                alpha = next;
              }
              double ll = alpha[states - 1];
              if (states > 1)
                ll = logAdd(ll, alpha[states - 2]);
              loss = -ll;
            }
            if (ctc.getZeroInfinity() && std::isinf(loss))
              loss = 0.0;
            y.data[b] = loss;
          }
          set(y);
        })
        .Case([&](ir::ViterbiAlignOp align) {
          // Written from the op's description: the best path, ties to the
          // predecessor with the higher state index, -1 and -inf when no
          // path fits; a prior's values subtracted in the search, the
          // score the path's log-probability.
          Array lp = align.getInputKind() == ir::LossInput::logits
                         ? logSoftmax(in(0))
                         : in(0);
          const Array &labels = in(1);
          bool hasPrior = (bool)align.getPrior();
          const auto &frames =
              f.lengths.at(typeOf(align.getScores()).getDimName(1).str());
          const auto &labelCounts =
              f.lengths.at(typeOf(align.getLabels()).getDimName(1).str());
          int64_t batch = lp.shape[0], time = lp.shape[1],
                  classes = lp.shape[2], blank = align.getBlank();
          bool rna = align.getTopology() == ir::AlignTopology::rna;
          Array path = zeros({batch, time}), best = zeros({batch});
          std::fill(path.data.begin(), path.data.end(), -1.0);
          for (int64_t b = 0; b < batch; ++b) {
            int64_t u = labelCounts[b];
            auto label = [&](int64_t k) {
              return (int64_t)labels.data[b * labels.shape[1] + k];
            };
            auto pathLogProb = [&](int64_t t, int64_t c) {
              return lp.data[(b * time + t) * classes + c];
            };
            auto logProb = [&](int64_t t, int64_t c) {
              return pathLogProb(t, c) - (hasPrior ? in(2).data[c] : 0.0);
            };
            // CTC state s emits blank (even) or label s / 2 (odd); RNA
            // state k has emitted k labels.
            int64_t states = rna ? u + 1 : 2 * u + 1;
            auto ctcClass = [&](int64_t s) {
              return s % 2 ? label(s / 2) : blank;
            };
            std::vector<double> delta(states, -kInf);
            delta[0] = 0; // before frame 0
            std::vector<std::vector<int>> moves(frames[b],
                                                std::vector<int>(states));
            for (int64_t t = 0; t < frames[b]; ++t) {
              std::vector<double> next(states, -kInf);
              for (int64_t s = 0; s < states; ++s) {
                std::vector<double> from(3, -kInf);
                if (rna) {
                  from[0] = delta[s] + logProb(t, blank);
                  if (s >= 1)
                    from[1] = delta[s - 1] + logProb(t, label(s - 1));
                } else {
                  double e = logProb(t, ctcClass(s));
                  from[0] = delta[s] + e;
                  if (s >= 1)
                    from[1] = delta[s - 1] + e;
                  if (s >= 2 && s % 2 && label(s / 2) != label(s / 2 - 1))
                    from[2] = delta[s - 2] + e;
                }
                int move = 0;
                for (int k = 1; k < 3; ++k)
                  if (from[k] > from[move])
                    move = k;
                next[s] = from[move];
                moves[t][s] = move;
              }
              delta = next;
            }
            int64_t last = states - 1;
            if (!rna && u > 0 && delta[last - 1] > delta[last])
              last = last - 1;
            best.data[b] = delta[last];
            if (delta[last] == -kInf)
              continue;
            double score = 0;
            for (int64_t t = frames[b] - 1; t >= 0; --t) {
              int move = moves[t][last];
              int64_t c =
                  rna ? (move == 0 ? blank : label(last - 1)) : ctcClass(last);
              path.data[b * time + t] = (double)c;
              score += pathLogProb(t, c);
              last -= move;
            }
            if (hasPrior)
              best.data[b] = score;
          }
          set(path, 0);
          set(best, 1);
        })
        .Case([&](ir::MarkLossOp mark) {
          losses.emplace_back(
              mark.getName().str(),
              lossTerms(f, mark.getLoss(), in(0), mark.getNormalization(),
                        mark.getCustomInvNormFactor() ? &in(1) : nullptr));
        })
        .Case([&](ir::LossTermsOp terms) {
          nn::reference::Loss value =
              lossTerms(f, terms.getLoss(), in(0), terms.getNormalization(),
                        terms.getCustomInvNormFactor() ? &in(1) : nullptr);
          f.values[terms.getSum()] = scalar(value.sum);
          f.values[terms.getInvNorm()] = scalar(value.normalization);
        })
        // The gradient ops, as their descriptions read.
        .Case([&](ir::LossSeedOp seed) {
          ir::NNTensorType type = typeOf(seed.getLoss());
          double norm = in(1).data[0],
                 scale = seed.getScale().convertToDouble();
          double value = seed.getUnnormalized() ? scale
                         : norm == 0            ? 0.0
                                                : scale / norm;
          Array y = zeros(f.shape(type));
          forEach(y.shape, [&](const std::vector<int64_t> &index) {
            if (f.valid(type, index))
              y.data[offsetOf(y.shape, index)] = value;
          });
          set(y);
        })
        .Case([&](ir::LstmGradOp grad) {
          const Array &dy = in(0), &x = in(1), &wi = in(2), &wh = in(3),
                      &bias = in(4);
          ir::NNTensorType type = typeOf(grad.getInput());
          const std::vector<int64_t> &len =
              f.lengths.at(type.getDimName(1).str());
          int64_t hidden = wh.shape.back();
          Array dx = zeros(x.shape), dwi = zeros(wi.shape),
                dwh = zeros(wh.shape), db = zeros(bias.shape);
          bool bidirectional =
              grad.getDirection() == ir::LstmDirection::bidirectional;
          int64_t wiSize = count(wi.shape) / (bidirectional ? 2 : 1),
                  whSize = count(wh.shape) / (bidirectional ? 2 : 1);
          for (int d = 0; d < (bidirectional ? 2 : 1); ++d) {
            bool reverse =
                d == 1 || grad.getDirection() == ir::LstmDirection::backward;
            lstmGrad(
                x, len, dy, wi.data.data() + d * wiSize,
                wh.data.data() + d * whSize, bias.data.data() + d * 4 * hidden,
                hidden, reverse, d * hidden, dx, dwi.data.data() + d * wiSize,
                dwh.data.data() + d * whSize, db.data.data() + d * 4 * hidden);
          }
          f.values[grad.getInputGrad()] = dx;
          f.values[grad.getInputWeightGrad()] = dwi;
          f.values[grad.getRecurrentWeightGrad()] = dwh;
          f.values[grad.getBiasGrad()] = db;
        })
        .Case([&](ir::Conv1dGradOp grad) {
          const Array &dy = in(0), &x = in(1), &w = in(2);
          const auto &len =
              f.lengths.at(typeOf(grad.getInput()).getDimName(1).str());
          const auto &outLen =
              f.lengths.at(typeOf(grad.getGrad()).getDimName(1).str());
          int64_t outC = w.shape[0], kernel = w.shape[1], inC = w.shape[2];
          int64_t stride = grad.getStride(), time = x.shape[1],
                  outTime = dy.shape[1];
          Array dx = zeros(x.shape), dw = zeros(w.shape);
          for (int64_t b = 0; b < x.shape[0]; ++b)
            for (int64_t t = 0; t < outLen[b]; ++t)
              for (int64_t k = 0; k < kernel; ++k) {
                int64_t source = t * stride - (kernel - 1) / 2 + k;
                if (source < 0 || source >= len[b])
                  continue;
                for (int64_t o = 0; o < outC; ++o) {
                  double g = dy.data[(b * outTime + t) * outC + o];
                  for (int64_t c = 0; c < inC; ++c) {
                    dx.data[(b * time + source) * inC + c] +=
                        g * w.data[(o * kernel + k) * inC + c];
                    dw.data[(o * kernel + k) * inC + c] +=
                        g * x.data[(b * time + source) * inC + c];
                  }
                }
              }
          f.values[grad.getInputGrad()] = dx;
          f.values[grad.getWeightGrad()] = dw;
        })
        .Case([&](ir::PrependStartOp prepend) {
          const Array &labels = in(0);
          const auto &counts =
              f.lengths.at(typeOf(prepend.getLabels()).getDimName(1).str());
          int64_t batch = labels.shape[0], width = labels.shape[1];
          Array y = zeros({batch, width + 1});
          for (int64_t b = 0; b < batch; ++b)
            for (int64_t u = 0; u <= width; ++u)
              y.data[b * (width + 1) + u] = u >= 1 && u <= counts[b]
                                                ? labels.data[b * width + u - 1]
                                                : (double)prepend.getStart();
          set(y);
        })
        .Case([&](ir::TransducerJoinOp join) {
          const Array &e = in(0), &p = in(1);
          TransducerGrid grid(
              f, typeOf(join.getEncoder()), typeOf(join.getPrediction()),
              typeOf(join.getResult()), e.shape[0], e.shape[1], p.shape[1]);
          int64_t width = e.shape[2];
          Array y = zeros(grid.shape(width));
          grid.forEachRow([&](int64_t b, int64_t t, int64_t u, int64_t row) {
            for (int64_t d = 0; d < width; ++d)
              y.data[row * width + d] =
                  e.data[(b * e.shape[1] + t) * width + d] +
                  p.data[(b * p.shape[1] + u) * width + d];
          });
          set(y);
        })
        .Case([&](ir::TransducerJoinGradOp grad) {
          const Array &g = in(0);
          ir::NNTensorType encType = typeOf(grad.getEncoder()),
                           predType = typeOf(grad.getPrediction());
          int64_t batch = f.sizes.at(encType.getDimName(0).str()),
                  time = f.sizes.at(encType.getDimName(1).str()),
                  states = f.sizes.at(predType.getDimName(1).str());
          TransducerGrid grid(f, encType, predType, typeOf(grad.getGrad()),
                              batch, time, states);
          int64_t width = g.shape.back();
          Array de = zeros({batch, time, width}),
                dp = zeros({batch, states, width});
          grid.forEachRow([&](int64_t b, int64_t t, int64_t u, int64_t row) {
            for (int64_t d = 0; d < width; ++d) {
              de.data[(b * time + t) * width + d] += g.data[row * width + d];
              dp.data[(b * states + u) * width + d] += g.data[row * width + d];
            }
          });
          set(de, 0);
          set(dp, 1);
        })
        .Case([&](ir::GatherStatesOp gather) {
          const Array &states = in(0), &alignment = in(1);
          std::vector<int64_t> positions =
              gatheredStates(f, gather.getStates(), gather.getAlignment(),
                             alignment, gather.getBlank());
          int64_t batch = alignment.shape[0], time = alignment.shape[1],
                  width = states.shape[2], rows = states.shape[1];
          Array y = zeros({batch, time, width});
          for (int64_t b = 0; b < batch; ++b)
            for (int64_t t = 0; t < time; ++t) {
              int64_t u = positions[b * time + t];
              for (int64_t d = 0; d < width && u >= 0; ++d)
                y.data[(b * time + t) * width + d] =
                    states.data[(b * rows + u) * width + d];
            }
          set(y);
        })
        .Case([&](ir::GatherStatesGradOp grad) {
          const Array &g = in(0), &alignment = in(1);
          std::vector<int64_t> positions =
              gatheredStates(f, grad.getResult(), grad.getAlignment(),
                             alignment, grad.getBlank());
          ir::NNTensorType type = typeOf(grad.getResult());
          int64_t batch = alignment.shape[0], time = alignment.shape[1],
                  width = g.shape[2],
                  rows = f.sizes.at(type.getDimName(1).str());
          Array y = zeros({batch, rows, width});
          for (int64_t b = 0; b < batch; ++b)
            for (int64_t t = 0; t < time; ++t) {
              int64_t u = positions[b * time + t];
              for (int64_t d = 0; d < width && u >= 0; ++d)
                y.data[(b * rows + u) * width + d] +=
                    g.data[(b * time + t) * width + d];
            }
          set(y);
        })
        .Case([&](ir::TransducerLossOp loss) {
          TransducerLattice lattice(f, loss.getJoint(), loss.getLabels(), in(0),
                                    in(1), loss.getInputKind(),
                                    loss.getTopology(), loss.getBlank());
          Array y = zeros({lattice.batch});
          for (int64_t b = 0; b < lattice.batch; ++b) {
            double logP = lattice.solve(b).logP;
            y.data[b] = logP == -kInf && loss.getZeroInfinity() ? 0.0 : -logP;
          }
          set(y);
        })
        .Case([&](ir::TransducerAlignOp align) {
          TransducerLattice lattice(f, align.getJoint(), align.getLabels(),
                                    in(0), in(1), align.getInputKind(),
                                    align.getTopology(), align.getBlank());
          std::vector<int64_t> shape = f.shape(typeOf(align.getAlignment()));
          Array path = zeros(shape), score = zeros({lattice.batch});
          std::fill(path.data.begin(), path.data.end(), -1.0);
          for (int64_t b = 0; b < lattice.batch; ++b) {
            auto [classes, best] = lattice.bestPath(b);
            for (size_t t = 0; t < classes.size(); ++t)
              path.data[b * shape[1] + t] = (double)classes[t];
            score.data[b] = best;
          }
          set(path, 0);
          set(score, 1);
        })
        .Case([&](ir::TransducerLossGradOp grad) {
          const Array &g = in(0);
          TransducerLattice lattice(f, grad.getJoint(), grad.getLabels(), in(1),
                                    in(2), grad.getInputKind(),
                                    grad.getTopology(), grad.getBlank());
          bool fromLogits = grad.getInputKind() == ir::LossInput::logits;
          int64_t classes = lattice.classes;
          Array dx = zeros(in(1).shape);
          for (int64_t b = 0; b < lattice.batch; ++b) {
            TransducerLattice::Solution s = lattice.solve(b);
            lattice.grid.forEachRow([&](int64_t rb, int64_t t, int64_t u,
                                        int64_t row) {
              if (rb != b)
                return;
              double *out = &dx.data[row * classes];
              if (s.logP == -kInf) {
                double v = grad.getZeroInfinity()
                               ? 0.0
                               : std::numeric_limits<double>::quiet_NaN();
                for (int64_t k = 0; k < classes; ++k)
                  out[k] = v;
                return;
              }
              // gamma_k: the paths through (t, u) that emit k there.
              double gBlank =
                  std::exp(s.alpha[t][u] + lattice.lp(row, lattice.blank) +
                           s.afterBlank(t, u) - s.logP);
              double gLabel =
                  u < s.labels ? std::exp(s.alpha[t][u] +
                                          lattice.lp(row, lattice.label(b, u)) +
                                          s.afterLabel(t, u) - s.logP)
                               : 0.0;
              double occupancy = gBlank + gLabel;
              for (int64_t k = 0; k < classes; ++k) {
                double gamma =
                    (k == lattice.blank ? gBlank : 0.0) +
                    (u < s.labels && k == lattice.label(b, u) ? gLabel : 0.0);
                double soft =
                    fromLogits ? occupancy * std::exp(lattice.lp(row, k)) : 0;
                out[k] = g.data[b] * (soft - gamma);
              }
            });
          }
          set(dx);
        })
        .Case([&](ir::CtcLossGradOp grad) {
          const Array &g = in(0), &labels = in(2);
          bool fromLogits = grad.getInputKind() == ir::LossInput::logits;
          Array lp = fromLogits ? logSoftmax(in(1)) : in(1);
          const auto &frames =
              f.lengths.at(typeOf(grad.getLogits()).getDimName(1).str());
          const auto &labelCounts =
              f.lengths.at(typeOf(grad.getLabels()).getDimName(1).str());
          int64_t batch = lp.shape[0], time = lp.shape[1],
                  classes = lp.shape[2];
          int64_t blank = grad.getBlank();
          auto logAdd = [](double a, double b) {
            double m = std::max(a, b);
            return m == -kInf ? -kInf
                              : m + std::log(std::exp(a - m) + std::exp(b - m));
          };
          Array dx = zeros(lp.shape);
          for (int64_t b = 0; b < batch; ++b) {
            int64_t n = frames[b], states = 2 * labelCounts[b] + 1;
            auto label = [&](int64_t st) {
              return st % 2 ? (int64_t)labels.data[b * labels.shape[1] + st / 2]
                            : blank;
            };
            auto emit = [&](int64_t t, int64_t st) {
              return lp.data[(b * time + t) * classes + label(st)];
            };
            // alpha[t][s] includes frame t's emission, beta[t][s] only the
            // frames after t: a state whose class has log-prob -inf at t
            // then has posterior exp(-inf) = 0 (no path passes there), not
            // the NaN of dividing its emission back out.
            std::vector<std::vector<double>> alpha(
                n, std::vector<double>(states, -kInf)),
                beta = alpha;
            for (int64_t t = 0; t < n; ++t)
              for (int64_t st = 0; st < states; ++st) {
                double sum;
                if (t == 0) {
                  sum = st < 2 ? 0.0 : -kInf;
                } else {
                  sum = alpha[t - 1][st];
                  if (st >= 1)
                    sum = logAdd(sum, alpha[t - 1][st - 1]);
                  if (st >= 2 && st % 2 && label(st) != label(st - 2))
                    sum = logAdd(sum, alpha[t - 1][st - 2]);
                }
                alpha[t][st] = sum + emit(t, st);
              }
            for (int64_t t = n - 1; t >= 0; --t)
              for (int64_t st = states - 1; st >= 0; --st) {
                double sum;
                if (t == n - 1) {
                  sum = st >= states - 2 ? 0.0 : -kInf;
                } else {
                  auto after = [&](int64_t to) {
                    return beta[t + 1][to] + emit(t + 1, to);
                  };
                  sum = after(st);
                  if (st + 1 < states)
                    sum = logAdd(sum, after(st + 1));
                  if (st + 2 < states && st % 2 && label(st) != label(st + 2))
                    sum = logAdd(sum, after(st + 2));
                }
                beta[t][st] = sum;
              }
            double logP;
            if (n == 0)
              logP = states == 1 ? 0.0 : -kInf;
            else
              logP = states > 1 ? logAdd(alpha[n - 1][states - 1],
                                         alpha[n - 1][states - 2])
                                : alpha[n - 1][0];
            for (int64_t t = 0; t < n; ++t) {
              double *row = &dx.data[(b * time + t) * classes];
              if (logP == -kInf) {
                double v = grad.getZeroInfinity()
                               ? 0.0
                               : std::numeric_limits<double>::quiet_NaN();
                for (int64_t c = 0; c < classes; ++c)
                  row[c] = v;
                continue;
              }
              std::vector<double> gamma(classes, 0.0);
              for (int64_t st = 0; st < states; ++st)
                gamma[label(st)] += std::exp(alpha[t][st] + beta[t][st] - logP);
              for (int64_t c = 0; c < classes; ++c) {
                double p = std::exp(lp.data[(b * time + t) * classes + c]);
                row[c] = fromLogits ? g.data[b] * (p - gamma[c])
                                    : -g.data[b] * gamma[c];
              }
            }
          }
          set(dx);
        })
        .Case([&](ir::LinearGradInputOp) {
          const Array &dy = in(0), &w = in(1);
          int64_t out = w.shape[0], width = w.shape[1];
          std::vector<int64_t> shape = dy.shape;
          shape.back() = width;
          Array dx = zeros(shape);
          for (int64_t r = 0, rows = count(dy.shape) / out; r < rows; ++r)
            for (int64_t i = 0; i < width; ++i)
              for (int64_t o = 0; o < out; ++o)
                dx.data[r * width + i] +=
                    dy.data[r * out + o] * w.data[o * width + i];
          set(dx);
        })
        .Case([&](ir::LinearGradWeightOp op) {
          const Array &dy = in(0), &x = in(1);
          ir::NNTensorType type = typeOf(op.getGrad());
          int64_t out = dy.shape.back(), width = x.shape.back();
          Array dw = zeros({out, width});
          std::vector<int64_t> positions(dy.shape.begin(), dy.shape.end() - 1);
          forEach(positions, [&](const std::vector<int64_t> &index) {
            std::vector<int64_t> full = index;
            full.push_back(0);
            if (!f.valid(type, full))
              return;
            int64_t row = offsetOf(positions, index);
            for (int64_t o = 0; o < out; ++o)
              for (int64_t i = 0; i < width; ++i)
                dw.data[o * width + i] +=
                    dy.data[row * out + o] * x.data[row * width + i];
          });
          set(dw);
        })
        .Case([&](ir::SumPositionsOp op) {
          const Array &x = in(0);
          ir::NNTensorType type = typeOf(op.getInput());
          unsigned positions = type.getNumPositionDims();
          std::vector<int64_t> features(x.shape.begin() + positions,
                                        x.shape.end());
          Array y = zeros(features);
          int64_t width = count(features);
          forEach(x.shape, [&](const std::vector<int64_t> &index) {
            if (f.valid(type, index))
              y.data[offsetOf(x.shape, index) % std::max<int64_t>(width, 1)] +=
                  x.data[offsetOf(x.shape, index)];
          });
          set(y);
        })
        .Case([&](ir::ActivationGradOp op) {
          Array dx = in(0);
          const Array &x = in(1);
          for (size_t i = 0; i < dx.data.size(); ++i) {
            double v = x.data[i], d = 0;
            switch (op.getKind()) {
            case ir::Activation::relu:
              d = v > 0 ? 1.0 : 0.0;
              break;
            case ir::Activation::tanh:
              d = 1.0 - std::tanh(v) * std::tanh(v);
              break;
            case ir::Activation::sigmoid:
              d = sigmoid(v) * (1.0 - sigmoid(v));
              break;
            case ir::Activation::gelu:
              d = 0.5 * (1.0 + std::erf(v / std::sqrt(2.0))) +
                  v * std::exp(-0.5 * v * v) / std::sqrt(2.0 * M_PI);
              break;
            }
            dx.data[i] *= d;
          }
          set(dx);
        })
        .Case<ir::LogSoftmaxGradOp, ir::SoftmaxGradOp>([&](Operation *op) {
          const Array &dy = in(0), &y = in(1);
          Array dx = dy;
          int64_t width = dy.shape.back();
          bool log = isa<ir::LogSoftmaxGradOp>(op);
          for (int64_t r = 0, rows = count(dy.shape) / width; r < rows; ++r) {
            double sum = 0;
            for (int64_t c = 0; c < width; ++c)
              sum +=
                  dy.data[r * width + c] * (log ? 1.0 : y.data[r * width + c]);
            for (int64_t c = 0; c < width; ++c) {
              int64_t k = r * width + c;
              dx.data[k] = log ? dy.data[k] - std::exp(y.data[k]) * sum
                               : y.data[k] * (dy.data[k] - sum);
            }
          }
          set(dx);
        })
        .Case([&](ir::CrossEntropyGradOp op) {
          const Array &g = in(0), &x = in(1), &targets = in(2);
          int64_t classes = x.shape.back();
          double eps = op.getLabelSmoothing().convertToDouble();
          bool fromLogits = op.getInputKind() == ir::LossInput::logits;
          Array probs = logSoftmax(x);
          Array dx = zeros(x.shape);
          for (int64_t r = 0, rows = count(g.shape); r < rows; ++r) {
            int64_t target =
                std::clamp<int64_t>((int64_t)targets.data[r], 0, classes - 1);
            for (int64_t c = 0; c < classes; ++c) {
              double q = c == target ? 1.0 - eps
                                     : (classes > 1 ? eps / (classes - 1) : 0);
              double p = std::exp(probs.data[r * classes + c]);
              dx.data[r * classes + c] = g.data[r] * (fromLogits ? p - q : -q);
            }
          }
          set(dx);
        })
        .Case([&](ir::ZeroPaddingOp op) {
          Array y = in(0);
          ir::NNTensorType type = typeOf(op.getInput());
          unsigned positions = type.getNumPositionDims();
          std::vector<int64_t> positionShape(y.shape.begin(),
                                             y.shape.begin() + positions);
          int64_t features =
              count(y.shape) / std::max<int64_t>(1, count(positionShape));
          forEach(positionShape, [&](const std::vector<int64_t> &index) {
            if (f.valid(type, index))
              return;
            int64_t row = offsetOf(positionShape, index);
            for (int64_t i = 0; i < features; ++i)
              y.data[row * features + i] = 0.0;
          });
          set(y);
        })
        .Case([&](ir::SliceFeaturesOp slice) {
          const Array &x = in(0);
          int64_t width = x.shape.back(), offset = slice.getOffset(),
                  keep = slice.getWidth();
          std::vector<int64_t> shape = x.shape;
          shape.back() = keep;
          Array y = zeros(shape);
          for (int64_t r = 0, rows = count(x.shape) / width; r < rows; ++r)
            for (int64_t c = 0; c < keep; ++c)
              y.data[r * keep + c] = x.data[r * width + offset + c];
          set(y);
        })
        .Case<ir::LayerNormGradInputOp, ir::LayerNormGradScaleOp>(
            [&](Operation *op) {
              // Per frame: xhat = (x - mean) / sqrt(var + eps) and
              // g = dy * scale (scale 1 for the scale gradient).
              const Array &dy = in(0), &x = in(1);
              bool input = isa<ir::LayerNormGradInputOp>(op);
              double eps = input ? cast<ir::LayerNormGradInputOp>(op)
                                       .getEpsilon()
                                       .convertToDouble()
                                 : cast<ir::LayerNormGradScaleOp>(op)
                                       .getEpsilon()
                                       .convertToDouble();
              ir::NNTensorType type = typeOf(op->getOperand(1));
              int64_t width = x.shape.back(), rows = count(x.shape) / width;
              Array dx = zeros(x.shape), dscale = zeros({width});
              std::vector<int64_t> positions(x.shape.begin(),
                                             x.shape.end() - 1);
              for (int64_t r = 0; r < rows; ++r) {
                const double *row = &x.data[r * width];
                double mean = 0, var = 0;
                for (int64_t c = 0; c < width; ++c)
                  mean += row[c] / width;
                for (int64_t c = 0; c < width; ++c)
                  var += (row[c] - mean) * (row[c] - mean) / width;
                double rstd = 1.0 / std::sqrt(var + eps);
                double meanG = 0, meanGx = 0;
                for (int64_t c = 0; c < width; ++c) {
                  double g =
                      dy.data[r * width + c] * (input ? in(2).data[c] : 1.0);
                  meanG += g / width;
                  meanGx += g * (row[c] - mean) * rstd / width;
                }
                std::vector<int64_t> index(positions.size());
                for (int64_t k = (int64_t)positions.size() - 1, rest = r;
                     k >= 0; --k) {
                  index[k] = rest % positions[k];
                  rest /= positions[k];
                }
                index.push_back(0);
                bool valid = f.valid(type, index);
                for (int64_t c = 0; c < width; ++c) {
                  double xhat = (row[c] - mean) * rstd;
                  double g =
                      dy.data[r * width + c] * (input ? in(2).data[c] : 1.0);
                  dx.data[r * width + c] = rstd * (g - meanG - xhat * meanGx);
                  if (valid)
                    dscale.data[c] += dy.data[r * width + c] * xhat;
                }
              }
              set(input ? dx : dscale);
            })
        .Case([&](ir::EmbeddingGradOp op) {
          const Array &dy = in(0), &indices = in(1);
          ir::NNTensorType type = typeOf(op.getIndices());
          ir::NNTensorType tableType = typeOf(op.getResult());
          int64_t vocabulary = tableType.getStaticSize(0),
                  width = tableType.getStaticSize(1);
          Array table = zeros({vocabulary, width});
          forEach(indices.shape, [&](const std::vector<int64_t> &index) {
            if (!f.valid(type, index))
              return;
            int64_t p = offsetOf(indices.shape, index);
            int64_t v = std::clamp<int64_t>((int64_t)indices.data[p], 0,
                                            vocabulary - 1);
            for (int64_t c = 0; c < width; ++c)
              table.data[v * width + c] += dy.data[p * width + c];
          });
          set(table);
        })
        .Case([&](ir::ReduceGradOp op) {
          const Array &dy = in(0), &x = in(1), &y = in(2);
          ir::NNTensorType type = typeOf(op.getInput());
          unsigned axis = op.getAxis();
          const auto &len = f.lengths.at(type.getDimName(axis).str());
          Array dx = zeros(x.shape);
          std::vector<int64_t> reducedShape = dy.shape;
          std::vector<int64_t> firstMax(count(dy.shape), -1);
          forEach(x.shape, [&](const std::vector<int64_t> &index) {
            if (index[axis] >= len[index[0]])
              return;
            std::vector<int64_t> r = index;
            r.erase(r.begin() + axis);
            int64_t at = offsetOf(reducedShape, r);
            double g = dy.data[at];
            double &out = dx.data[offsetOf(x.shape, index)];
            switch (op.getKind()) {
            case ir::ReduceKind::sum:
              out = g;
              break;
            case ir::ReduceKind::mean:
              out = g / len[index[0]];
              break;
            case ir::ReduceKind::max:
              if (firstMax[at] < 0 &&
                  x.data[offsetOf(x.shape, index)] == y.data[at]) {
                firstMax[at] = index[axis];
                out = g;
              }
              break;
            }
          });
          set(dx);
        })
        .Case([&](ir::PoolGradOp op) {
          const Array &dy = in(0), &x = in(1), &y = in(2);
          ir::NNTensorType inType = typeOf(op.getInput());
          ir::NNTensorType outType = typeOf(op.getGrad());
          const auto &len = f.lengths.at(inType.getDimName(1).str());
          const auto &outLen = f.lengths.at(outType.getDimName(1).str());
          int64_t window = op.getWindow(), stride = op.getStride();
          int64_t batch = x.shape[0], time = x.shape[1], width = x.shape[2],
                  outTime = dy.shape[1];
          bool isMax = op.getKind() == ir::PoolKind::max;
          Array dx = zeros(x.shape);
          for (int64_t b = 0; b < batch; ++b)
            for (int64_t o = 0; o < std::min(outTime, outLen[b]); ++o)
              for (int64_t c = 0; c < width; ++c) {
                int64_t first = o * stride,
                        last = std::min(first + window, len[b]);
                double g = dy.data[(b * outTime + o) * width + c];
                if (!isMax) {
                  int64_t count = std::max<int64_t>(1, last - first);
                  for (int64_t t = first; t < last; ++t)
                    dx.data[(b * time + t) * width + c] += g / count;
                  continue;
                }
                for (int64_t t = first; t < last; ++t)
                  if (x.data[(b * time + t) * width + c] ==
                      y.data[(b * outTime + o) * width + c]) {
                    dx.data[(b * time + t) * width + c] += g;
                    break;
                  }
              }
          set(dx);
        })
        .Case([&](ir::MseGradOp) {
          const Array &g = in(0), &p = in(1), &t = in(2);
          Array dp = p;
          int64_t width = p.shape.back();
          for (size_t i = 0; i < dp.data.size(); ++i)
            dp.data[i] = 2.0 * g.data[i / width] * (p.data[i] - t.data[i]);
          set(dp);
        })
        .Case([&](ir::PackOp pack) {
          const Array &x = in(0);
          ir::NNTensorType type = typeOf(pack.getInput());
          const auto &len = f.lengths.at(type.getDimName(1).str());
          Array y = zeros(f.shape(typeOf(pack.getResult())));
          int64_t width = count(x.shape) / (x.shape[0] * x.shape[1]), n = 0;
          for (int64_t b = 0; b < x.shape[0]; ++b)
            for (int64_t t = 0; t < len[b]; ++t, ++n)
              for (int64_t c = 0; c < width; ++c)
                y.data[n * width + c] =
                    x.data[(b * x.shape[1] + t) * width + c];
          set(y);
        })
        .Case([&](ir::UnpackOp unpack) {
          const Array &x = in(0);
          ir::NNTensorType type = typeOf(unpack.getResult());
          const auto &len = f.lengths.at(type.getDimName(1).str());
          Array y = zeros(f.shape(type));
          int64_t width = count(y.shape) / (y.shape[0] * y.shape[1]), n = 0;
          for (int64_t b = 0; b < y.shape[0]; ++b)
            for (int64_t t = 0; t < len[b]; ++t, ++n)
              for (int64_t c = 0; c < width; ++c)
                y.data[(b * y.shape[1] + t) * width + c] =
                    x.data[n * width + c];
          set(y);
        })
        .Case([&](ir::BroadcastSeqOp broadcast) {
          const Array &x = in(0);
          ir::NNTensorType type = typeOf(broadcast.getResult());
          const auto &len = f.lengths.at(type.getDimName(1).str());
          Array y = zeros(f.shape(type));
          int64_t width = count(x.shape) / x.shape[0];
          for (int64_t b = 0; b < y.shape[0]; ++b)
            for (int64_t t = 0; t < len[b]; ++t)
              for (int64_t c = 0; c < width; ++c)
                y.data[(b * y.shape[1] + t) * width + c] =
                    x.data[b * width + c];
          set(y);
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
        .Case([&](ir::ReturnOp ret) {
          for (Value operand : ret.getOperands())
            results.push_back(f.values[operand]);
        })
        .Default([&](Operation *other) {
          status =
              absl::InvalidArgumentError("reference: no evaluation for " +
                                         other->getName().getStringRef().str());
        });
    if (!status.ok())
      return status;
  }
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
  std::vector<std::pair<std::string, Loss>> losses;
  result = Result();
  absl::Status status = evaluator.run(graph, arguments, sizes, lengths,
                                      parameters, result.outputs, losses);
  for (auto &[name, loss] : losses)
    result.losses[name] = loss;
  result.lengths = lengths;
  return status;
}
