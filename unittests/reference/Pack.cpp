//===- Pack.cpp - reference evaluation of packing -------------------------===//
//
// Padded [B, T, ...] to packed [N, ...] and back, and broadcasting per
// sequence values over frames (dialects/nn/NNPackOps.td); N-best lists
// [B, K, ...] to their flattened batch [H, ...] and back
// (dialects/nn/NNBeamOps.td).
//
//===----------------------------------------------------------------------===//

#include "Evaluators.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace nn::reference;

namespace {

void evalPackOp(Frame &f, ir::PackOp pack) {
  const Array &x = f.operand(pack, 0);
  ir::NNTensorType type = typeOf(pack.getInput());
  const auto &len = f.lengths.at(type.getDimName(1).str());
  Array y = zeros(f.shape(typeOf(pack.getResult())));
  int64_t width = count(x.shape) / (x.shape[0] * x.shape[1]), n = 0;
  for (int64_t b = 0; b < x.shape[0]; ++b)
    for (int64_t t = 0; t < len[b]; ++t, ++n)
      for (int64_t c = 0; c < width; ++c)
        y.data[n * width + c] = x.data[(b * x.shape[1] + t) * width + c];
  f.setResult(pack, y);
}

void evalUnpackOp(Frame &f, ir::UnpackOp unpack) {
  const Array &x = f.operand(unpack, 0);
  ir::NNTensorType type = typeOf(unpack.getResult());
  const auto &len = f.lengths.at(type.getDimName(1).str());
  Array y = zeros(f.shape(type));
  int64_t width = count(y.shape) / (y.shape[0] * y.shape[1]), n = 0;
  for (int64_t b = 0; b < y.shape[0]; ++b)
    for (int64_t t = 0; t < len[b]; ++t, ++n)
      for (int64_t c = 0; c < width; ++c)
        y.data[(b * y.shape[1] + t) * width + c] = x.data[n * width + c];
  f.setResult(unpack, y);
}

void evalBroadcastSeqOp(Frame &f, ir::BroadcastSeqOp broadcast) {
  const Array &x = f.operand(broadcast, 0);
  ir::NNTensorType type = typeOf(broadcast.getResult());
  const auto &len = f.lengths.at(type.getDimName(1).str());
  Array y = zeros(f.shape(type));
  int64_t width = count(x.shape) / x.shape[0];
  for (int64_t b = 0; b < y.shape[0]; ++b)
    for (int64_t t = 0; t < len[b]; ++t)
      for (int64_t c = 0; c < width; ++c)
        y.data[(b * y.shape[1] + t) * width + c] = x.data[b * width + c];
  f.setResult(broadcast, y);
}

/// The flattened batch H = flatten(B, K) and its B and K.
struct Flat {
  std::string name, batch, beam;
};

Flat flatOf(Frame &f, const std::string &name) {
  ir::DimDeclAttr decl = f.table.lookup(name);
  return {name, decl.getSource().str(), decl.getInner().str()};
}

/// Row h of x (all its trailing values) copied to row `to` of y.
void copyRow(const Array &x, int64_t from, Array &y, int64_t to,
             int64_t width) {
  for (int64_t c = 0; c < width; ++c)
    y.data[to * width + c] = x.data[from * width + c];
}

void evalFlattenBeamOp(Frame &f, ir::FlattenBeamOp op) {
  const Array &x = f.operand(op, 0);
  ir::NNTensorType result = typeOf(op.getResult());
  Flat flat = flatOf(f, result.getDimName(0).str());
  const auto &hyps = f.lengths.at(flat.beam);
  Array y = zeros(f.shape(result));
  int64_t slots = x.shape[1];
  int64_t width = count(x.shape) / std::max<int64_t>(1, x.shape[0] * slots);
  int64_t h = 0;
  for (int64_t b = 0; b < x.shape[0]; ++b)
    for (int64_t k = 0; k < hyps[b]; ++k)
      copyRow(x, b * slots + k, y, h++, width);
  f.setResult(op, y);
}

void evalUnflattenBeamOp(Frame &f, ir::UnflattenBeamOp op) {
  const Array &x = f.operand(op, 0);
  ir::NNTensorType result = typeOf(op.getResult());
  Flat flat = flatOf(f, typeOf(op.getInput()).getDimName(0).str());
  const auto &hyps = f.lengths.at(flat.beam);
  Array y = zeros(f.shape(result));
  int64_t slots = y.shape[1];
  int64_t width = count(y.shape) / std::max<int64_t>(1, y.shape[0] * slots);
  int64_t h = 0;
  for (int64_t b = 0; b < y.shape[0]; ++b)
    for (int64_t k = 0; k < hyps[b]; ++k)
      copyRow(x, h++, y, b * slots + k, width);
  f.setResult(op, y);
}

void evalRepeatBeamOp(Frame &f, ir::RepeatBeamOp op) {
  const Array &x = f.operand(op, 0);
  ir::NNTensorType result = typeOf(op.getResult());
  Flat flat = flatOf(f, result.getDimName(0).str());
  const auto &hyps = f.lengths.at(flat.beam);
  Array y = zeros(f.shape(result));
  int64_t width = count(x.shape) / std::max<int64_t>(1, x.shape[0]);
  int64_t h = 0;
  for (int64_t b = 0; b < x.shape[0]; ++b)
    for (int64_t k = 0; k < hyps[b]; ++k)
      copyRow(x, b, y, h++, width);
  f.setResult(op, y);
}

void evalSumBeamOp(Frame &f, ir::SumBeamOp op) {
  const Array &x = f.operand(op, 0);
  ir::NNTensorType result = typeOf(op.getResult());
  Flat flat = flatOf(f, typeOf(op.getInput()).getDimName(0).str());
  const auto &hyps = f.lengths.at(flat.beam);
  Array y = zeros(f.shape(result));
  int64_t width = count(y.shape) / std::max<int64_t>(1, y.shape[0]);
  int64_t h = 0;
  for (int64_t b = 0; b < y.shape[0]; ++b)
    for (int64_t k = 0; k < hyps[b]; ++k, ++h)
      for (int64_t c = 0; c < width; ++c)
        y.data[b * width + c] += x.data[h * width + c];
  f.setResult(op, y);
}

} // namespace

bool nn::reference::evaluatePackOp(Frame &f, Operation *op) {
  bool handled = true;
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](ir::PackOp o) { evalPackOp(f, o); })
      .Case([&](ir::UnpackOp o) { evalUnpackOp(f, o); })
      .Case([&](ir::BroadcastSeqOp o) { evalBroadcastSeqOp(f, o); })
      .Case([&](ir::FlattenBeamOp o) { evalFlattenBeamOp(f, o); })
      .Case([&](ir::UnflattenBeamOp o) { evalUnflattenBeamOp(f, o); })
      .Case([&](ir::RepeatBeamOp o) { evalRepeatBeamOp(f, o); })
      .Case([&](ir::SumBeamOp o) { evalSumBeamOp(f, o); })
      .Default([&](Operation *) { handled = false; });
  return handled;
}
