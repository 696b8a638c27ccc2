//===- Pack.cpp - reference evaluation of packing -------------------------===//
//
// Padded [B, T, ...] to packed [N, ...] and back, and broadcasting per
// sequence values over frames (dialects/nn/NNPackOps.td).
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

} // namespace

bool nn::reference::evaluatePackOp(Frame &f, Operation *op) {
  bool handled = true;
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](ir::PackOp o) { evalPackOp(f, o); })
      .Case([&](ir::UnpackOp o) { evalUnpackOp(f, o); })
      .Case([&](ir::BroadcastSeqOp o) { evalBroadcastSeqOp(f, o); })
      .Default([&](Operation *) { handled = false; });
  return handled;
}
