//===- Flags.h - command-line checks shared by the tools --------*- C++ -*-===//
//
// LLVM's command line takes `--beta1 ''` as 0 and `inf` as a number, and
// lets a flag repeat with the last value winning; for a training run each
// of these is a silently wrong setting. Tools declare their float flags
// with FiniteDouble and call rejectRepeatedFlags() after parsing.
//
//===----------------------------------------------------------------------===//

#ifndef NN_TOOLS_COMMON_FLAGS_H
#define NN_TOOLS_COMMON_FLAGS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace nn::tools {

/// A double flag that must be a finite number: no empty string, no
/// trailing text, no inf or nan.
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

using FiniteDouble = llvm::cl::opt<double, false, FiniteDoubleParser>;

/// Returns "--flag" for the first flag of the top-level command (or
/// `subcommand`) given more than once that takes one value, or "".
inline std::string repeatedFlag(
    llvm::cl::SubCommand &subcommand = llvm::cl::SubCommand::getTopLevel()) {
  for (const auto &entry : llvm::cl::getRegisteredOptions(subcommand)) {
    llvm::cl::Option *option = entry.second;
    bool single = option->getNumOccurrencesFlag() == llvm::cl::Optional ||
                  option->getNumOccurrencesFlag() == llvm::cl::Required;
    if (single && option->getNumOccurrences() > 1 &&
        entry.first() == option->ArgStr)
      return "--" + option->ArgStr.str();
  }
  return "";
}

} // namespace nn::tools

#endif // NN_TOOLS_COMMON_FLAGS_H
