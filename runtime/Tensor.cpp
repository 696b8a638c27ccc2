//===- Tensor.cpp - host tensors and element types ------------------------===//

#include "nn/Runtime.h"

#include <algorithm>
#include <cstring>

using namespace nn;

const char *nn::toString(DType type) {
  switch (type) {
  case DType::f32:
    return "f32";
  case DType::f64:
    return "f64";
  case DType::i32:
    return "i32";
  case DType::i64:
    return "i64";
  }
  return "?";
}

bool nn::parseDType(const std::string &text, DType &type) {
  for (DType candidate : {DType::f32, DType::f64, DType::i32, DType::i64})
    if (text == toString(candidate)) {
      type = candidate;
      return true;
    }
  return false;
}

size_t nn::byteSize(DType type) {
  return type == DType::f64 || type == DType::i64 ? 8 : 4;
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

bool nn::checkedByteSize(DType dtype, const std::vector<int64_t> &shape,
                         int64_t &bytes) {
  int64_t total = (int64_t)byteSize(dtype);
  for (int64_t size : shape)
    if (size < 0 || __builtin_mul_overflow(total, size, &total))
      return false;
  bytes = total;
  return true;
}

std::string nn::shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
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
