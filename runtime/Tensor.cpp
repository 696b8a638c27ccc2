//===- Tensor.cpp - host tensors ------------------------------------------===//

#include "nn/Runtime.h"

#include <algorithm>
#include <cstring>

using namespace nn;

namespace {
/// The prefix of the outputs that hold gradients (compiler/ManifestBuilder).
constexpr const char kGradientPrefix[] = "grad:";
constexpr const char kInputGradientPrefix[] = "grad_input:";
} // namespace

const Tensor *RunResult::inputGradient(const std::string &input) const {
  for (const auto &[name, tensor] : outputs)
    if (name == kInputGradientPrefix + input)
      return &tensor;
  return nullptr;
}

const Tensor *RunResult::gradient(const std::string &parameter) const {
  for (const auto &[name, tensor] : outputs)
    if (name == kGradientPrefix + parameter)
      return &tensor;
  return nullptr;
}

std::vector<std::string> RunResult::gradientNames() const {
  std::vector<std::string> names;
  size_t prefix = sizeof(kGradientPrefix) - 1;
  for (const auto &[name, tensor] : outputs)
    if (name.compare(0, prefix, kGradientPrefix) == 0)
      names.push_back(name.substr(prefix));
  return names;
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  // At least one byte, so that data() of an empty tensor is never null.
  size_t bytes = std::max<size_t>(sizeInBytes(), 1);
  owner_ = std::shared_ptr<uint8_t>(new uint8_t[bytes](),
                                    std::default_delete<uint8_t[]>());
  data_ = static_cast<uint8_t *>(owner_.get());
}

Tensor::Tensor(const Tensor &other) : Tensor(other.dtype_, other.shape_) {
  if (other.data_)
    std::memcpy(data_, other.data_, sizeInBytes());
}

Tensor &Tensor::operator=(const Tensor &other) {
  if (this != &other)
    *this = Tensor(other);
  return *this;
}

Tensor Tensor::adopt(DType dtype, std::vector<int64_t> shape, void *data,
                     std::shared_ptr<void> owner) {
  Tensor tensor;
  tensor.dtype_ = dtype;
  tensor.shape_ = std::move(shape);
  tensor.owner_ = std::move(owner);
  tensor.data_ = static_cast<uint8_t *>(data);
  return tensor;
}

int64_t Tensor::numElements() const {
  int64_t count = 1;
  for (int64_t size : shape_)
    count *= size;
  return count;
}

double Tensor::at(int64_t i) const {
  switch (dtype_) {
  case DType::f32:
    return data<float>()[i];
  case DType::f64:
    return data<double>()[i];
  case DType::i32:
    return data<int32_t>()[i];
  case DType::i64:
    return (double)data<int64_t>()[i];
  }
  return 0;
}
