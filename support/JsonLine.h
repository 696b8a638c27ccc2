//===- support/JsonLine.h - JSON lines with a fixed layout ------*- C++ -*-===//
//
// nn-train prints JSON lines whose layout is a documented contract
// (docs/training.md): `{"step": 1, "lr": 0.001, "losses": {"ce": 2.5}}`,
// with ": " and ", " between tokens, fields in the order they were added,
// numbers with 9 significant digits (enough to round-trip a float32) and
// the non-finite numbers JSON lacks as the strings "Infinity", "-Infinity"
// and "NaN" (what JavaScript's Number() and Python's float() read back; a
// loss can be +inf). llvm::json::Object keeps no order and
// llvm::json::OStream writes a compact layout with 17-digit numbers, so
// the layout is built here; llvm::json writes each string token (escaping,
// invalid UTF-8 replaced by U+FFFD). Header-only, like the rest of
// support/; its users link LLVM.
//
//   llvm::outs() << JsonObject().add("step", 3).add("lr", 1e-3) << "\n";
//
//===----------------------------------------------------------------------===//

#ifndef NN_SUPPORT_JSONLINE_H
#define NN_SUPPORT_JSONLINE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>

namespace nn::support {

/// `text` as a JSON string token, quoted and escaped by llvm::json; bytes
/// that are not UTF-8 become U+FFFD.
inline std::string jsonString(llvm::StringRef text) {
  std::string token;
  llvm::raw_string_ostream stream(token);
  // json::Value asserts on invalid UTF-8 (file names need not be UTF-8):
  // it is replaced first.
  if (llvm::json::isUTF8(text))
    stream << llvm::json::Value(text);
  else
    stream << llvm::json::Value(llvm::json::fixUTF8(text));
  return token;
}

/// `value` as a JSON number (%.9g), or "Infinity", "-Infinity", "NaN".
inline std::string jsonNumber(double value) {
  if (std::isnan(value))
    return "\"NaN\"";
  if (std::isinf(value))
    return value > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.9g", value);
  return buffer;
}

class JsonObject;
class JsonArray;

/// The text of one JSON value, made from what a field or item holds.
class JsonText {
public:
  JsonText(llvm::StringRef text) : text(jsonString(text)) {}
  JsonText(const std::string &text) : text(jsonString(text)) {}
  /// Without it, a string literal would convert to bool.
  JsonText(const char *text) : text(jsonString(text)) {}
  JsonText(double value) : text(jsonNumber(value)) {}
  JsonText(bool value) : text(value ? "true" : "false") {}
  template <typename Integer,
            typename = std::enable_if_t<std::is_integral_v<Integer> &&
                                        !std::is_same_v<Integer, bool>>>
  JsonText(Integer value) : text(std::to_string(value)) {}
  JsonText(const JsonObject &object);
  JsonText(const JsonArray &array);

  const std::string &str() const { return text; }

private:
  std::string text;
};

/// A JSON object written on one line, its fields in the order added.
class JsonObject {
public:
  /// Adds `"key": value` after the fields added before (keys are not
  /// checked for repeats).
  JsonObject &add(llvm::StringRef key, const JsonText &value) {
    if (!fields.empty())
      fields += ", ";
    fields += jsonString(key);
    fields += ": ";
    fields += value.str();
    return *this;
  }
  /// Adds `other`'s fields after these, in their order.
  JsonObject &append(const JsonObject &other) {
    if (!fields.empty() && !other.fields.empty())
      fields += ", ";
    fields += other.fields;
    return *this;
  }
  bool empty() const { return fields.empty(); }
  /// `{"key": value, ...}`.
  std::string str() const { return "{" + fields + "}"; }

private:
  std::string fields;
};

/// A JSON array: on one line, or one item per line indented by two spaces
/// (a record file's long list; the indent does not grow with nesting).
class JsonArray {
public:
  enum class Layout { line, itemPerLine };
  explicit JsonArray(Layout layout = Layout::line) : layout(layout) {}
  JsonArray &push(const JsonText &value) {
    if (layout == Layout::itemPerLine)
      items += items.empty() ? "\n  " : ",\n  ";
    else if (!items.empty())
      items += ", ";
    items += value.str();
    return *this;
  }
  bool empty() const { return items.empty(); }
  /// `[a, b]`, or `[\n  a,\n  b\n]`.
  std::string str() const {
    return "[" + items + (layout == Layout::itemPerLine ? "\n]" : "]");
  }

private:
  Layout layout;
  std::string items;
};

inline JsonText::JsonText(const JsonObject &object) : text(object.str()) {}
inline JsonText::JsonText(const JsonArray &array) : text(array.str()) {}

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                                     const JsonObject &object) {
  return os << object.str();
}

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                                     const JsonArray &array) {
  return os << array.str();
}

} // namespace nn::support

#endif // NN_SUPPORT_JSONLINE_H
