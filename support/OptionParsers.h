//===- support/OptionParsers.h - llvm::cl parsers for nn options -*- C++
//-*-===//
//
// How llvm::cl (tool flags) and MLIR pass options (which are llvm::cl
// options) parse nn's option types:
//
// * Enumerations of nn/Options.h parse by their EnumChoices. The parser is
//   llvm::cl::parser<E> itself (specialized below), so that every option of
//   such a type uses it: flags, pipeline options, and pass options declared
//   in a Passes.td with the enum as their type. A wrong value is the same
//   error everywhere: "unknown optimizer 'lion' (expected sgd, adam or
//   adamw)".
// * FiniteDoubleParser, for flags that must be finite numbers (LLVM takes
//   `''` as 0 and `inf` as a number; for a training run either is a
//   silently wrong setting).
//
//===----------------------------------------------------------------------===//

#ifndef NN_SUPPORT_OPTIONPARSERS_H
#define NN_SUPPORT_OPTIONPARSERS_H

#include "nn/Options.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace nn::support {

/// Parses enumeration E by its spellings.
template <typename E>
class EnumOptionParser : public llvm::cl::basic_parser<E> {
public:
  explicit EnumOptionParser(llvm::cl::Option &option)
      : llvm::cl::basic_parser<E>(option) {}

  bool parse(llvm::cl::Option &option, llvm::StringRef, llvm::StringRef text,
             E &value) {
    if (std::optional<E> parsed = parseEnum<E>(text.str())) {
      value = *parsed;
      return false;
    }
    return option.error(unknownEnumMessage<E>(text.str()));
  }

  /// --help shows `--optimizer=<sgd|adam|adamw>`.
  llvm::StringRef getValueName() const override {
    static const std::string names = [] {
      std::string joined;
      for (const EnumChoice<E> &choice : EnumChoices<E>::all)
        joined += (joined.empty() ? "" : "|") + std::string(choice.name);
      return joined;
    }();
    return names;
  }

  /// --print-options.
  void printOptionDiff(const llvm::cl::Option &option, E value,
                       const llvm::cl::OptionValue<E> &defaultValue,
                       size_t globalWidth) const {
    this->printOptionName(option, globalWidth);
    llvm::outs() << "= " << enumName(value);
    if (defaultValue.hasValue())
      llvm::outs() << " (default: " << enumName(defaultValue.getValue()) << ")";
    llvm::outs() << "\n";
  }

  /// How pass options print the value (a pipeline printed back as text).
  static void print(llvm::raw_ostream &os, const E &value) {
    os << enumName(value);
  }
};

/// A double that must be a finite number: no empty string, no trailing
/// text, no inf or nan.
class FiniteDoubleParser : public llvm::cl::parser<double> {
public:
  using llvm::cl::parser<double>::parser;
  bool parse(llvm::cl::Option &option, llvm::StringRef name,
             llvm::StringRef text, double &value) {
    std::string copy = text.trim().str();
    char *end = nullptr;
    errno = 0;
    value = copy.empty() ? 0.0 : std::strtod(copy.c_str(), &end);
    if (copy.empty() || *end != '\0' || errno == ERANGE ||
        !std::isfinite(value))
      return option.error("'" + text + "' is not a finite number", name);
    return false;
  }
};

} // namespace nn::support

/// Makes EnumOptionParser<E> the parser of every llvm::cl option of type E.
#define NN_ENUM_OPTION_PARSER(E)                                               \
  template <>                                                                  \
  class llvm::cl::parser<E> : public ::nn::support::EnumOptionParser<E> {      \
  public:                                                                      \
    using ::nn::support::EnumOptionParser<E>::EnumOptionParser;                \
  };

NN_ENUM_OPTION_PARSER(::nn::LossTailBackward)
NN_ENUM_OPTION_PARSER(::nn::PackFrontier)
NN_ENUM_OPTION_PARSER(::nn::OptimizerKind)
NN_ENUM_OPTION_PARSER(::nn::GemmLibrary)
NN_ENUM_OPTION_PARSER(::nn::GpuBinary)

#endif // NN_SUPPORT_OPTIONPARSERS_H
