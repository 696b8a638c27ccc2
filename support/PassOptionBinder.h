//===- support/PassOptionBinder.h - options as MLIR pass options -*- C++
//-*-===//
//
// Declares the options of nn/Options.h structs as the options of an MLIR
// pass or pass pipeline (`nn-opt --nn-train-step="optimizer=sgd"`,
// `nn-cpu{gemm-library=openblas}`), with the struct's defaults, and reads
// them back into a struct. The options are the storage: a pass reads its
// struct when it runs (a cloned pass has its own copies), a pipeline when
// it is built, and a pass built from C++ gets its struct written into its
// options, so that printing the pipeline shows what runs.
//
//   struct MyPass : impl::MyPassBase<MyPass> {
//     MyPass() { bound.declare(nn::OptimizerOptions()); }
//     void runOnOperation() override {
//       auto optimizer = bound.read<nn::OptimizerOptions>(); ...
//     }
//     nn::support::PassOptionBinder<mlir::Pass> bound{*this};
//   };
//
//===----------------------------------------------------------------------===//

#ifndef NN_SUPPORT_PASSOPTIONBINDER_H
#define NN_SUPPORT_PASSOPTIONBINDER_H

#include "support/OptionParsers.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/ADT/StringMap.h"

#include <memory>
#include <vector>

namespace nn::support {

/// `Owner` is mlir::Pass (a pass's options) or mlir::detail::PassOptions (a
/// PassPipelineOptions).
template <typename Owner> class PassOptionBinder {
  template <typename T>
  using OptionOf = std::conditional_t<std::is_same_v<Owner, mlir::Pass>,
                                      mlir::Pass::Option<T>,
                                      mlir::detail::PassOptions::Option<T>>;

public:
  explicit PassOptionBinder(Owner &owner) : owner(owner) {}
  PassOptionBinder(const PassOptionBinder &) = delete;
  PassOptionBinder &operator=(const PassOptionBinder &) = delete;

  /// Declares every option of `defaults` (bindOptions), its value the
  /// default. Each struct type is declared once per owner.
  template <typename S> void declare(S defaults) {
    Declarer declarer{*this};
    defaults.bindOptions(declarer);
  }

  /// The options' values, as a struct of type S (declared before).
  template <typename S> S read() const {
    S values;
    Reader reader{*this};
    values.bindOptions(reader);
    return values;
  }

  /// Sets the options of S's declaration to `values`.
  template <typename S> void write(S values) {
    Writer writer{*this};
    values.bindOptions(writer);
  }

private:
  template <typename T> OptionOf<T> &option(const OptionInfo &info) const {
    llvm::cl::Option *found = byName.lookup(info.name);
    assert(found && "read or written before it was declared");
    return *static_cast<OptionOf<T> *>(found);
  }

  struct Declarer {
    PassOptionBinder &binder;
    template <typename T> void bind(T &value, const OptionInfo &info) {
      auto option = std::make_unique<OptionOf<T>>(binder.owner, info.name,
                                                  llvm::cl::desc(info.help),
                                                  llvm::cl::init(value));
      binder.byName[info.name] = option.get();
      binder.options.push_back(std::move(option));
    }
  };
  struct Reader {
    const PassOptionBinder &binder;
    template <typename T> void bind(T &value, const OptionInfo &info) {
      value = binder.option<T>(info).getValue();
    }
  };
  struct Writer {
    PassOptionBinder &binder;
    template <typename T> void bind(T &value, const OptionInfo &info) {
      binder.option<T>(info) = value;
    }
  };

  Owner &owner;
  llvm::StringMap<llvm::cl::Option *> byName;
  std::vector<std::unique_ptr<llvm::cl::Option>> options;
};

} // namespace nn::support

#endif // NN_SUPPORT_PASSOPTIONBINDER_H
