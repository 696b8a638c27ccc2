//===- TargetTest.cpp - a third target: one registry entry each side -----===//
//
// Adding a target is a compiler Target registered by name
// (compiler/Target.h) and, to run its artifacts, a device backend
// registered for the same name (runtime/device/Device.h). This test adds
// one, "fake", without touching either registry's files: its code
// generator is the cpu target's and its device the host, so its artifacts
// must compute exactly what the cpu target's compute. Before the backend
// is registered, its artifacts compile but do not load.
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"

#include "compiler/Target.h"
#include "runtime/device/Device.h"
#include "runtime/device/HostDevice.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>

using namespace nn;
using namespace nn::testing;

namespace {

const char *kModel = R"(
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    -> !nn.tensor<[B, T, 5], f32> dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[5, 4], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return %l : !nn.tensor<[B, T, 5], f32>
})";

std::atomic<int> fakeCompiles{0};
std::atomic<int> fakeDevices{0};

/// The compiler half: the cpu target's code under another name.
class FakeTarget : public compiler::Target {
public:
  std::string name() const override { return "fake"; }
  std::string description() const override {
    return "the host, by another name";
  }
  void buildCodegenPipeline(mlir::OpPassManager &pm,
                            const CompileOptions &options) const override {
    ++fakeCompiles;
    cpu().buildCodegenPipeline(pm, options);
  }

private:
  static const compiler::Target &cpu() {
    static std::shared_ptr<const compiler::Target> target =
        *compiler::lookupTarget("cpu");
    return *target;
  }
};

/// The runtime half: options of its own, devices from the host backend.
struct FakeOptions : BackendOptions {
  std::string target() const override { return "fake"; }
};

class FakeBackend : public runtime::BackendWith<FakeOptions> {
protected:
  FakeOptions withDefaults(FakeOptions options) const override {
    return options;
  }
  std::string keyOf(const FakeOptions &) const override { return ""; }
  std::shared_ptr<runtime::Device> create(const FakeOptions &) const override {
    ++fakeDevices;
    std::shared_ptr<const runtime::Backend> host = runtime::createHostBackend();
    return host->createDevice(**host->fillDefaults(nullptr));
  }
};

TEST(TargetTest, AThirdTargetIsOneEntryInEachRegistry) {
  compiler::registerTarget(std::make_shared<FakeTarget>());
  std::vector<std::string> targets = registeredTargets();
  EXPECT_EQ(targets, (std::vector<std::string>{"cpu", "cuda", "fake"}));

  CompileOptions options;
  options.target = "fake";
  absl::StatusOr<Artifact> artifact =
      compileSource(kModel, "model.mlir", options);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  EXPECT_EQ(fakeCompiles.load(), 1);
  EXPECT_EQ(artifact->manifest().target, "fake");

  // No backend runs it yet.
  Executable unrunnable;
  absl::Status status = Executable::load(artifact->path(), unrunnable);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("no device runs target 'fake'"),
            std::string::npos)
      << status.message();

  runtime::registerBackend(std::make_shared<FakeBackend>());
  Executable fake;
  ASSERT_TRUE(Executable::load(artifact->path(), fake).ok());
  EXPECT_EQ(fakeDevices.load(), 1);
  EXPECT_TRUE(fake.runsOnHost());

  // The same code as the cpu target's: the same bits.
  Executable cpu = compileOrDie(kModel, true);
  RunInputs inputs = makeInputs(cpu.manifest(), 7, LengthPattern::Mixed, 3, 6);
  RunResult onFake, onCpu;
  ASSERT_TRUE(fake.run(inputs, onFake).ok());
  ASSERT_TRUE(cpu.run(inputs, onCpu).ok());
  ASSERT_EQ(onFake.outputs.size(), onCpu.outputs.size());
  for (size_t i = 0; i < onCpu.outputs.size(); ++i) {
    const Tensor &a = onFake.outputs[i].second, &b = onCpu.outputs[i].second;
    ASSERT_EQ(a.shape(), b.shape());
    EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.sizeInBytes()), 0);
  }
  ASSERT_EQ(onFake.losses.size(), 1u);
  EXPECT_EQ(onFake.losses[0].sum, onCpu.losses[0].sum);
  EXPECT_TRUE(std::isfinite(onCpu.losses[0].sum));
}

TEST(TargetTest, AnUnknownTargetNamesTheRegisteredOnes) {
  CompileOptions options;
  options.target = "tpu";
  absl::Status status = compileSource(kModel, "model.mlir", options).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(
      status.message().find("unknown target 'tpu' (registered: cpu, cuda"),
      std::string::npos)
      << status.message();
}

} // namespace
