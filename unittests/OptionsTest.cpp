//===- OptionsTest.cpp - every declared option reaches every front end ----===//
//
// The options of nn/Options.h are declared once and bound by three
// binders. For each options struct, every option is set to a value other
// than its default and carried through each front end: command-line flags
// (CommandLineBinder), pipeline/pass options printed and parsed back
// (PassOptionBinder), and stage-file JSON (JsonOptionReader). An option a
// binder does not take, or takes under another spelling, fails here.
//
//===----------------------------------------------------------------------===//

#include "nn/Options.h"
#include "lowering/Pipelines.h"
#include "support/CommandLineBinder.h"
#include "support/JsonOptionReader.h"
#include "support/PassOptionBinder.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <string>
#include <typeinfo>
#include <vector>

using namespace nn;

namespace {

std::string text(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return buffer;
}

/// Sets every option to a value other than its default: bools flipped,
/// numbers moved, strings extended, enumerations to their next value.
/// (Numbers take values that print exactly in 7 digits: MLIR prints pass
/// options' doubles with raw_ostream's %e.)
struct Perturb {
  void bind(bool &value, const OptionInfo &) { value = !value; }
  void bind(double &value, const OptionInfo &) {
    value = value == 0.125 ? 0.375 : 0.125;
  }
  void bind(std::string &value, const OptionInfo &) { value += "_x"; }
  template <typename E>
  std::enable_if_t<std::is_enum_v<E>> bind(E &value, const OptionInfo &) {
    const auto &all = EnumChoices<E>::all;
    for (size_t i = 0; i < std::size(all); ++i)
      if (all[i].value == value) {
        value = all[(i + 1) % std::size(all)].value;
        return;
      }
  }
};

/// Every option's value as text, in declaration order, and what the
/// front ends need to spell it.
struct Spell {
  struct Entry {
    std::string name, key, value;
    bool isBool = false, isNumber = false;
  };
  void add(const OptionInfo &info, std::string value, bool isBool = false,
           bool isNumber = false) {
    entries.push_back({info.name, support::jsonKey(info), std::move(value),
                       isBool, isNumber});
  }
  void bind(bool &value, const OptionInfo &info) {
    add(info, value ? "true" : "false", /*isBool=*/true);
  }
  void bind(double &value, const OptionInfo &info) {
    add(info, text(value), false, /*isNumber=*/true);
  }
  void bind(std::string &value, const OptionInfo &info) { add(info, value); }
  template <typename E>
  std::enable_if_t<std::is_enum_v<E>> bind(E &value, const OptionInfo &info) {
    add(info, enumName(value));
  }
  std::vector<Entry> entries;
};

template <typename S> std::vector<Spell::Entry> spell(S values) {
  Spell spelling;
  values.bindOptions(spelling);
  return spelling.entries;
}

template <typename S> std::vector<std::string> values(S options) {
  std::vector<std::string> out;
  for (const Spell::Entry &entry : spell(options))
    out.push_back(entry.name + "=" + entry.value);
  return out;
}

template <typename S> S perturbed() {
  S options;
  Perturb perturb;
  options.bindOptions(perturb);
  return options;
}

/// A pipeline's options holding one struct's declarations.
template <typename S>
class StructPipelineOptions
    : public mlir::PassPipelineOptions<StructPipelineOptions<S>> {
public:
  StructPipelineOptions() { bound.declare(S()); }
  support::PassOptionBinder<mlir::detail::PassOptions> bound{*this};
};

template <typename S> class OptionsTest : public ::testing::Test {};
using PhaseStructs =
    ::testing::Types<OptimizeOptions, OptimizerOptions, CodegenOptions,
                     CpuCodegenOptions, GpuCodegenOptions>;
TYPED_TEST_SUITE(OptionsTest, PhaseStructs);

TYPED_TEST(OptionsTest, EveryOptionHasANonDefaultValue) {
  // The perturbation changes every option, so the checks below see each.
  std::vector<std::string> defaults = values(TypeParam());
  std::vector<std::string> changed = values(perturbed<TypeParam>());
  ASSERT_EQ(defaults.size(), changed.size());
  ASSERT_FALSE(defaults.empty());
  for (size_t i = 0; i < defaults.size(); ++i)
    EXPECT_NE(defaults[i], changed[i]);
}

TYPED_TEST(OptionsTest, PassOptionsPrintAndParseEveryOption) {
  TypeParam want = perturbed<TypeParam>();
  StructPipelineOptions<TypeParam> written;
  written.bound.write(want);
  EXPECT_EQ(values(written.bound.template read<TypeParam>()), values(want));
  // Printed as a pipeline would be, and parsed by fresh options.
  std::string printed;
  llvm::raw_string_ostream stream(printed);
  written.print(stream);
  stream.flush();
  ASSERT_GE(printed.size(), 2u);
  StructPipelineOptions<TypeParam> parsed;
  ASSERT_TRUE(mlir::succeeded(parsed.parseFromString(
      llvm::StringRef(printed).drop_front().drop_back())))
      << printed;
  EXPECT_EQ(values(parsed.bound.template read<TypeParam>()), values(want))
      << printed;
  // Defaults stay defaults.
  StructPipelineOptions<TypeParam> untouched;
  EXPECT_EQ(values(untouched.bound.template read<TypeParam>()),
            values(TypeParam()));
}

TYPED_TEST(OptionsTest, StageFileKeysSetEveryOption) {
  TypeParam want = perturbed<TypeParam>();
  llvm::json::Object object;
  for (const Spell::Entry &entry : spell(want)) {
    if (entry.isBool)
      object[entry.key] = entry.value == "true";
    else if (entry.isNumber)
      object[entry.key] = std::stod(entry.value);
    else
      object[entry.key] = entry.value;
  }
  TypeParam got;
  absl::Status status = support::readJsonOptions(
      object, got, [](const std::string &key, const std::string &why) {
        return absl::InvalidArgumentError(key + ": " + why);
      });
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(values(got), values(want));
  std::vector<std::string> keys = support::jsonOptionKeys<TypeParam>();
  EXPECT_EQ(keys.size(), spell(want).size());
}

TYPED_TEST(OptionsTest, CommandLineFlagsSetEveryOption) {
  TypeParam want = perturbed<TypeParam>();
  // llvm::cl keeps categories and subcommands registered: they outlive
  // the test, one subcommand per struct.
  static const std::string name =
      std::string("options-") + typeid(TypeParam).name();
  static llvm::cl::OptionCategory category("options test");
  static llvm::cl::SubCommand subcommand(name);
  TypeParam got;
  support::CommandLineBinder flags(category, subcommand);
  got.bindOptions(flags);
  std::vector<std::string> arguments{"nn-options-test", name};
  TypeParam defaults;
  std::vector<Spell::Entry> defaultSpelling = spell(defaults);
  std::vector<Spell::Entry> wanted = spell(want);
  for (size_t i = 0; i < wanted.size(); ++i) {
    const Spell::Entry &entry = wanted[i];
    if (entry.isBool)
      arguments.push_back(defaultSpelling[i].value == "true"
                              ? "--no-" + entry.name
                              : "--" + entry.name);
    else
      arguments.push_back("--" + entry.name + "=" + entry.value);
  }
  std::vector<const char *> argv;
  for (const std::string &argument : arguments)
    argv.push_back(argument.c_str());
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  ASSERT_TRUE(llvm::cl::ParseCommandLineOptions((int)argv.size(), argv.data(),
                                                "", &errorStream))
      << errorStream.str();
  EXPECT_EQ(values(got), values(want));
  EXPECT_EQ(flags.givenFlags().size(), wanted.size());
  llvm::cl::ResetAllOptionOccurrences();
}

TEST(OptionsTest, AWrongSpellingIsOneErrorEverywhere) {
  std::string expected =
      "unknown optimizer 'lion' (expected sgd, adam or adamw)";
  EXPECT_EQ(unknownEnumMessage<OptimizerKind>("lion"), expected);

  llvm::json::Object object{{"kind", "lion"}};
  OptimizerOptions fromJson;
  absl::Status status = support::readJsonOptions(
      object, fromJson, [](const std::string &key, const std::string &why) {
        return absl::InvalidArgumentError(key + ": " + why);
      });
  EXPECT_EQ(std::string(status.message()), "kind: " + expected);

  StructPipelineOptions<OptimizerOptions> pipeline;
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  EXPECT_TRUE(
      mlir::failed(pipeline.parseFromString("optimizer=lion", errorStream)));
  // llvm::cl reports option errors on stderr; the parse fails either way.
  testing::internal::CaptureStderr();
  StructPipelineOptions<OptimizerOptions> again;
  EXPECT_TRUE(mlir::failed(again.parseFromString("optimizer=lion")));
  std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_NE(printed.find(expected), std::string::npos) << printed;
}

TEST(OptionsTest, CommandLineNumbersMustBeFinite) {
  static llvm::cl::OptionCategory category("finite test");
  static llvm::cl::SubCommand subcommand("finite-test");
  OptimizerOptions options;
  support::CommandLineBinder flags(category, subcommand);
  options.bindOptions(flags);
  for (const char *bad :
       {"--epsilon=inf", "--epsilon=nan", "--epsilon=", "--epsilon=1e-8x"}) {
    const char *argv[] = {"nn-options-test", "finite-test", bad};
    // Option errors go to stderr.
    std::string ignored;
    llvm::raw_string_ostream errorStream(ignored);
    testing::internal::CaptureStderr();
    EXPECT_FALSE(llvm::cl::ParseCommandLineOptions(3, argv, "", &errorStream))
        << bad;
    std::string printed = testing::internal::GetCapturedStderr();
    EXPECT_NE(printed.find("is not a finite number"), std::string::npos)
        << printed;
    llvm::cl::ResetAllOptionOccurrences();
  }
}

TEST(OptionsTest, PipelineSettingsCarryEveryPhase) {
  // NNPipelineOptions binds every phase struct: a value given as a
  // pipeline option arrives in its struct.
  mlir::nn::NNPipelineOptions options;
  ASSERT_TRUE(mlir::succeeded(options.parseFromString(
      "pack=false optimizer=sgd momentum=0.5 blas=false threads=false "
      "gemm-library=openblas gpu-chip=sm_80 gpu-binary=cubin "
      "loss-tail-backward=recompute grads=true train-step=true "
      "input-grads=x,y")));
  mlir::nn::PipelineSettings settings = options.settings();
  EXPECT_FALSE(settings.optimize.pack);
  EXPECT_EQ(settings.optimize.lossTailBackward, LossTailBackward::recompute);
  EXPECT_EQ(settings.optimizer.kind, OptimizerKind::sgd);
  EXPECT_EQ(settings.optimizer.momentum, 0.5);
  EXPECT_FALSE(settings.codegen.blas);
  EXPECT_FALSE(settings.cpu.threads);
  EXPECT_EQ(settings.cpu.gemmLibrary, GemmLibrary::openblas);
  EXPECT_EQ(settings.gpu.chip, "sm_80");
  EXPECT_EQ(settings.gpu.binary, GpuBinary::cubin);
  EXPECT_TRUE(settings.request.grads);
  EXPECT_TRUE(settings.request.trainStep);
  EXPECT_EQ(settings.request.inputGrads, (std::vector<std::string>{"x", "y"}));
}

} // namespace
