//===- Flags.h - command-line checks shared by the tools --------*- C++ -*-===//
//
// LLVM's command line takes `--beta1 ''` as 0 and `inf` as a number, and
// lets a flag repeat with the last value winning; for a training run each
// of these is a silently wrong setting. Tools declare their float flags
// with FiniteDouble and check repeatedFlag() after parsing.
//
//===----------------------------------------------------------------------===//

#ifndef NN_TOOLS_COMMON_FLAGS_H
#define NN_TOOLS_COMMON_FLAGS_H

#include "support/OptionParsers.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <string>

namespace nn::tools {

/// A double flag that must be a finite number (support/OptionParsers.h).
using FiniteDouble = llvm::cl::opt<double, false, support::FiniteDoubleParser>;

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
