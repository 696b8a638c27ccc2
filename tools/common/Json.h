//===- Json.h - nn-exec's JSON output ---------------------------*- C++ -*-===//
//
// nn-exec prints results as JSON for scripts. It is the one tool without
// LLVM (the runtime alone), so it keeps this small writer; everything that
// links LLVM writes JSON lines through support/JsonLine.h, to the same
// rules. JSON has no infinities or NaN, and a loss can be either (an
// infeasible CTC sequence without zero_infinity is +inf), so non-finite
// numbers are written as the strings "Infinity", "-Infinity" and "NaN"
// (what JavaScript's Number() and Python's float() parse back); every
// other number is a JSON number with enough digits to round-trip a
// float32 (docs/runtime.md).
//
//===----------------------------------------------------------------------===//

#ifndef NN_TOOLS_COMMON_JSON_H
#define NN_TOOLS_COMMON_JSON_H

#include <cmath>
#include <cstdio>
#include <string>

namespace nn::tools {

inline std::string jsonNumber(double value) {
  if (std::isnan(value))
    return "\"NaN\"";
  if (std::isinf(value))
    return value > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.9g", value);
  return buffer;
}

inline std::string jsonString(const std::string &text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += (char)c;
    } else if (c < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
      out += buffer;
    } else {
      out += (char)c;
    }
  }
  return out + "\"";
}

} // namespace nn::tools

#endif // NN_TOOLS_COMMON_JSON_H
