//===- CompileFlags.h - the compile flags nn-run and nn-train share -*- C++
//-*-===//
//
// The flags of every tool that compiles a model: the entry graph, the
// target, where GPU code goes, the threads of a run, and every option of
// the compilation phases, bound from their one declaration in
// nn/Options.h (so `--no-pack`, `--loss-tail-backward`, `--gemm-library`,
// `--gpu-chip`, ... mean the same in both tools and in a pipeline).
// nn-train adds the optimizer's options (a train category).
//
//===----------------------------------------------------------------------===//

#ifndef NN_TOOLS_COMMON_COMPILEFLAGS_H
#define NN_TOOLS_COMMON_COMPILEFLAGS_H

#include "nn/Compiler.h"
#include "support/CommandLineBinder.h"

#include "llvm/Support/CommandLine.h"

#include <optional>
#include <string>
#include <vector>

namespace nn::tools {

class CompileFlags {
public:
  /// Declares the flags: the model's in `model`, the cuda target's in
  /// `gpu`, and with `train` the train step's optimizer in it. Tools make
  /// one, statically, before parsing the command line.
  CompileFlags(llvm::cl::OptionCategory &model, llvm::cl::OptionCategory &gpu,
               llvm::cl::OptionCategory *train = nullptr)
      : targetHelp("The target: " + targetList()),
        entry("entry",
              llvm::cl::desc("The graph to compile (default: the one graph "
                             "no other graph calls)"),
              llvm::cl::cat(model)),
        target("target", llvm::cl::init("cpu"), llvm::cl::desc(targetHelp),
               llvm::cl::cat(model)),
        gpuCodeDir("emit-gpu-code",
                   llvm::cl::desc("cuda: write each kernel's PTX or cubin to "
                                  "this directory"),
                   llvm::cl::cat(gpu)),
        numThreads("num-threads", llvm::cl::init(0),
                   llvm::cl::desc("Threads for generated loops and BLAS "
                                  "together (0: each library's default, all "
                                  "cores)"),
                   llvm::cl::cat(model)),
        modelFlags(model), gpuFlags(gpu) {
    options.optimize.bindOptions(modelFlags);
    options.codegen.bindOptions(modelFlags);
    options.cpu.bindOptions(modelFlags);
    options.gpu.bindOptions(gpuFlags);
    if (train)
      options.optimizer.bindOptions(trainFlags.emplace(*train));
  }

  /// The options as the command line set them (what to compile, beyond
  /// the entry, is the tool's to add).
  CompileOptions compileOptions() const {
    CompileOptions compile = options;
    compile.entry = entry;
    compile.target = target;
    compile.gpuCodeDir = gpuCodeDir;
    return compile;
  }

  /// --num-threads.
  unsigned threads() const { return numThreads; }

  /// The compile flags given on the command line, "--no-pack" style
  /// (--num-threads, a setting of the run, is not one of them).
  std::vector<std::string> given() const {
    std::vector<std::string> flags;
    for (const llvm::cl::Option *option :
         std::initializer_list<const llvm::cl::Option *>{&entry, &target,
                                                         &gpuCodeDir})
      if (option->getNumOccurrences())
        flags.push_back("--" + option->ArgStr.str());
    for (const support::CommandLineBinder *binder :
         std::initializer_list<const support::CommandLineBinder *>{
             &modelFlags, &gpuFlags, trainFlags ? &*trainFlags : nullptr})
      if (binder)
        for (std::string &flag : binder->givenFlags())
          flags.push_back(std::move(flag));
    return flags;
  }

private:
  static std::string targetList() {
    std::string list;
    for (const std::string &name : registeredTargets())
      list += (list.empty() ? "" : ", ") + name;
    return list;
  }

  CompileOptions options;
  // llvm::cl keeps descriptions as StringRefs.
  std::string targetHelp;
  llvm::cl::opt<std::string> entry, target, gpuCodeDir;
  llvm::cl::opt<unsigned> numThreads;
  support::CommandLineBinder modelFlags, gpuFlags;
  std::optional<support::CommandLineBinder> trainFlags;
};

} // namespace nn::tools

#endif // NN_TOOLS_COMMON_COMPILEFLAGS_H
