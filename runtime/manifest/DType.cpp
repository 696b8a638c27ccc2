//===- DType.cpp - element types and byte sizes ---------------------------===//

#include "nn/Manifest.h"

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
