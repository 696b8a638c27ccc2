//===- Tensor.cpp - host tensors and element types ------------------------===//

#include "nn/Runtime.h"

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
  bytes_.assign(numElements() * byteSize(dtype_), 0);
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
