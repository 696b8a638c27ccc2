//===- support/CommandLineBinder.h - options as tool flags -------*- C++
//-*-===//
//
// Declares the options of nn/Options.h structs as flags of a tool's
// command line: `--gemm-library=openblas`, `--weight-decay 0.01`. A bool
// that is on by default becomes `--no-NAME` (`--no-pack`), one that is
// off becomes `--NAME`. Doubles must be finite numbers; enumerations take
// their spellings. The flags write into the bound struct as they are
// parsed, so the struct must live until the command line is parsed (tools
// bind static structs before llvm::cl::ParseCommandLineOptions).
//
//   static nn::OptimizerOptions optimizer;
//   static nn::support::CommandLineBinder trainFlags(trainCategory);
//   optimizer.bindOptions(trainFlags);
//
//===----------------------------------------------------------------------===//

#ifndef NN_SUPPORT_COMMANDLINEBINDER_H
#define NN_SUPPORT_COMMANDLINEBINDER_H

#include "support/OptionParsers.h"

#include "llvm/Support/CommandLine.h"

#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace nn::support {

class CommandLineBinder {
public:
  /// Flags in `category` (for --help), of `subcommand` (the tool's own
  /// command line unless given).
  explicit CommandLineBinder(
      llvm::cl::OptionCategory &category,
      llvm::cl::SubCommand &subcommand = llvm::cl::SubCommand::getTopLevel())
      : category(category), subcommand(subcommand) {}
  /// Unregisters the flags before they go (llvm::cl would keep pointers
  /// to them).
  ~CommandLineBinder() {
    for (const std::unique_ptr<llvm::cl::Option> &flag : flags)
      flag->removeArgument();
  }
  CommandLineBinder(const CommandLineBinder &) = delete;
  CommandLineBinder &operator=(const CommandLineBinder &) = delete;

  void bind(bool &value, const OptionInfo &info) {
    if (value) {
      // On by default: the flag turns it off. llvm::cl keeps names and
      // descriptions as StringRefs: the binder owns the texts it makes.
      const std::string &name =
          texts.emplace_back("no-" + std::string(info.name));
      const std::string &help = texts.emplace_back(
          std::string("Turn off (on by default): ") + info.help);
      auto flag = std::make_unique<llvm::cl::opt<bool>>(
          llvm::StringRef(name), llvm::cl::desc(help), llvm::cl::cat(category),
          llvm::cl::sub(subcommand),
          llvm::cl::cb<void, bool>([&value](bool off) { value = !off; }));
      keep(std::move(flag));
      return;
    }
    keep(std::make_unique<llvm::cl::opt<bool, true>>(
        llvm::StringRef(info.name), llvm::cl::desc(info.help),
        llvm::cl::location(value), llvm::cl::cat(category),
        llvm::cl::sub(subcommand)));
  }

  void bind(double &value, const OptionInfo &info) {
    keep(std::make_unique<llvm::cl::opt<double, true, FiniteDoubleParser>>(
        llvm::StringRef(info.name), llvm::cl::desc(info.help),
        llvm::cl::location(value), llvm::cl::cat(category),
        llvm::cl::sub(subcommand)));
  }

  void bind(std::string &value, const OptionInfo &info) {
    keep(std::make_unique<llvm::cl::opt<std::string, true>>(
        llvm::StringRef(info.name), llvm::cl::desc(info.help),
        llvm::cl::location(value), llvm::cl::cat(category),
        llvm::cl::sub(subcommand)));
  }

  template <typename E>
  std::enable_if_t<std::is_enum_v<E>> bind(E &value, const OptionInfo &info) {
    keep(std::make_unique<llvm::cl::opt<E, true>>(
        llvm::StringRef(info.name), llvm::cl::desc(info.help),
        llvm::cl::location(value), llvm::cl::cat(category),
        llvm::cl::sub(subcommand)));
  }

  /// The flags of this binder given on the command line ("--no-pack"), in
  /// the order they were bound.
  std::vector<std::string> givenFlags() const {
    std::vector<std::string> given;
    for (const auto &flag : flags)
      if (flag->getNumOccurrences())
        given.push_back("--" + flag->ArgStr.str());
    return given;
  }

private:
  void keep(std::unique_ptr<llvm::cl::Option> flag) {
    flags.push_back(std::move(flag));
  }

  llvm::cl::OptionCategory &category;
  llvm::cl::SubCommand &subcommand;
  std::vector<std::unique_ptr<llvm::cl::Option>> flags;
  std::deque<std::string> texts;
};

} // namespace nn::support

#endif // NN_SUPPORT_COMMANDLINEBINDER_H
