//===- support/JsonOptionReader.h - options from a JSON object ---*- C++
//-*-===//
//
// Reads the options of an nn/Options.h struct from a JSON object, as stage
// files give them: each option under its key (the option's name with '_'
// for '-', or OptionInfo::key), absent keys keeping the struct's values.
// Types are checked as the declaration says (true/false, a finite number,
// a non-empty string, one of an enumeration's spellings); the error names
// the key through the caller's `error` (which adds the file and where).
//
//   nn::OptimizerOptions optimizer;
//   absl::Status status = nn::support::readJsonOptions(
//       object, optimizer, [&](const std::string &key, const std::string &why)
//       {
//         return reader.error(key, why);
//       });
//
//===----------------------------------------------------------------------===//

#ifndef NN_SUPPORT_JSONOPTIONREADER_H
#define NN_SUPPORT_JSONOPTIONREADER_H

#include "nn/Options.h"

#include "absl/status/status.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace nn::support {

/// The JSON key of an option.
inline std::string jsonKey(const OptionInfo &info) {
  if (info.key)
    return info.key;
  std::string key = info.name;
  for (char &c : key)
    if (c == '-')
      c = '_';
  return key;
}

/// Makes the error of a key: (key, why) -> status.
using JsonOptionError =
    std::function<absl::Status(const std::string &, const std::string &)>;

namespace detail {

class JsonOptionKeys {
public:
  template <typename T> void bind(T &, const OptionInfo &info) {
    keys.push_back(jsonKey(info));
  }
  std::vector<std::string> keys;
};

class JsonOptionParser {
public:
  JsonOptionParser(const llvm::json::Object &object, JsonOptionError error)
      : object(object), error(std::move(error)) {}

  void bind(bool &value, const OptionInfo &info) {
    if (const llvm::json::Value *found = lookup(info)) {
      if (std::optional<bool> parsed = found->getAsBoolean())
        value = *parsed;
      else
        fail(info, "must be true or false");
    }
  }
  void bind(double &value, const OptionInfo &info) {
    if (const llvm::json::Value *found = lookup(info)) {
      std::optional<double> parsed = found->getAsNumber();
      if (parsed && std::isfinite(*parsed))
        value = *parsed;
      else
        fail(info, "must be a finite number");
    }
  }
  void bind(std::string &value, const OptionInfo &info) {
    if (const llvm::json::Value *found = lookup(info)) {
      std::optional<llvm::StringRef> parsed = found->getAsString();
      if (parsed && !parsed->empty())
        value = parsed->str();
      else
        fail(info, "must be a non-empty string");
    }
  }
  template <typename E>
  std::enable_if_t<std::is_enum_v<E>> bind(E &value, const OptionInfo &info) {
    if (const llvm::json::Value *found = lookup(info)) {
      std::optional<llvm::StringRef> text = found->getAsString();
      if (!text) {
        fail(info, "must be one of " + enumSpellings<E>());
        return;
      }
      if (std::optional<E> parsed = parseEnum<E>(text->str()))
        value = *parsed;
      else
        fail(info, unknownEnumMessage<E>(text->str()));
    }
  }

  absl::Status status;

private:
  /// The value under the option's key, unless an earlier one failed.
  const llvm::json::Value *lookup(const OptionInfo &info) const {
    return status.ok() ? object.get(jsonKey(info)) : nullptr;
  }
  void fail(const OptionInfo &info, const std::string &why) {
    status = error(jsonKey(info), why);
  }

  const llvm::json::Object &object;
  JsonOptionError error;
};

} // namespace detail

/// The JSON keys of S's options, in declaration order.
template <typename S> std::vector<std::string> jsonOptionKeys() {
  S values;
  detail::JsonOptionKeys keys;
  values.bindOptions(keys);
  return keys.keys;
}

/// Sets the options of `values` that `object` gives; the first bad one is
/// the error `error` makes of its key.
template <typename S>
absl::Status readJsonOptions(const llvm::json::Object &object, S &values,
                             JsonOptionError error) {
  detail::JsonOptionParser parser(object, std::move(error));
  values.bindOptions(parser);
  return parser.status;
}

} // namespace nn::support

#endif // NN_SUPPORT_JSONOPTIONREADER_H
