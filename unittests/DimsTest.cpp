//===- DimsTest.cpp - tests of the named-dim utilities --------------------===//

#include "dialects/nn/Dims.h"
#include "dialects/nn/NNOps.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::nn;

namespace {

class DimsTest : public ::testing::Test {
protected:
  DimsTest() {
    context.loadDialect<NNDialect>();
    // Diagnostics go to `errors` so tests can check them.
    handler = context.getDiagEngine().registerHandler([&](Diagnostic &diag) {
      errors.push_back(diag.str());
      return success();
    });
  }
  ~DimsTest() override { context.getDiagEngine().eraseHandler(handler); }

  /// A table of declarations written as a graph writes them ("B: batch"),
  /// not verified.
  DimTable table(ArrayRef<StringRef> decls) {
    std::string text = "[";
    for (StringRef decl : decls)
      text += (text.size() > 1 ? ", #nn.dim<" : "#nn.dim<") + decl.str() + ">";
    text += "]";
    auto attr = dyn_cast_or_null<ArrayAttr>(parseAttribute(text, &context));
    EXPECT_TRUE(attr) << text;
    return DimTable(attr);
  }

  NNTensorType type(StringRef text) {
    return cast<NNTensorType>(parseType(text, &context));
  }

  InFlightDiagnostic emit() {
    return mlir::emitError(UnknownLoc::get(&context));
  }

  MLIRContext context;
  DiagnosticEngine::HandlerID handler;
  std::vector<std::string> errors;
};

TEST_F(DimsTest, TypeAccessorsDistinguishNamedAndStaticAxes) {
  NNTensorType t = type("!nn.tensor<[B, T, 80], f32>");
  EXPECT_EQ(t.getRank(), 3);
  EXPECT_EQ(t.getNumPositionDims(), 2u);
  EXPECT_EQ(t.getDimName(1), "T");
  EXPECT_EQ(t.getStaticSize(1), -1);
  EXPECT_EQ(t.getStaticSize(2), 80);
  EXPECT_TRUE(t.getDimName(2).empty());
  EXPECT_FALSE(t.hasStaticShape());
  EXPECT_TRUE(type("!nn.tensor<[4, 5], f32>").hasStaticShape());
  EXPECT_TRUE(type("!nn.tensor<[], f32>").hasStaticShape());
}

TEST_F(DimsTest, TypesAreUniquedByDimsAndElementType) {
  NNTensorType built = NNTensorType::get(&context, {"B", "T", ""}, {0, 0, 80},
                                         Float32Type::get(&context));
  EXPECT_EQ(built, type("!nn.tensor<[B, T, 80], f32>"));
  EXPECT_NE(built, type("!nn.tensor<[B, U, 80], f32>"));
  EXPECT_NE(built, type("!nn.tensor<[B, T, 80], f16>"));
}

TEST_F(DimsTest, TablePrintsDeclarationsBackAsWritten) {
  DimTable dims = table({"B: batch", "T: seq(B)", "T2: seq(B) = ceildiv(T, 2)",
                         "N: packed(B, T2)"});
  std::vector<std::string> printed;
  for (DimDeclAttr decl : dims.getDecls()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    decl.printBody(os);
    printed.push_back(os.str());
  }
  EXPECT_EQ(printed, (std::vector<std::string>{"B: batch", "T: seq(B)",
                                               "T2: seq(B) = ceildiv(T, 2)",
                                               "N: packed(B, T2)"}));
}

TEST_F(DimsTest, TableLooksUpKindsAndDerivedAndPackedDims) {
  DimTable dims = table({"B: batch", "T: seq(B)", "T2: seq(B) = ceildiv(T, 2)",
                         "U: seq(B)", "N: packed(B, T2)"});
  EXPECT_TRUE(succeeded(dims.verify([&] { return emit(); })));
  EXPECT_TRUE(dims.isBatch("B"));
  EXPECT_TRUE(dims.isSequence("T2"));
  EXPECT_TRUE(dims.lookup("T2").isDerived());
  EXPECT_FALSE(dims.lookup("U").isDerived());
  EXPECT_TRUE(dims.isPacked("N"));
  EXPECT_FALSE(dims.lookup("X"));
  EXPECT_EQ(dims.findDerived("T", 2).getName().getValue(), "T2");
  EXPECT_FALSE(dims.findDerived("T", 3));
  EXPECT_EQ(dims.findPacked("B", "T2").getName().getValue(), "N");
  EXPECT_FALSE(dims.findPacked("B", "T"));
}

TEST_F(DimsTest, TableHasOffsetDimsAndGridPackedDims) {
  // A transducer: the prediction network's U + 1 axis, the joint's grid.
  DimTable dims =
      table({"B: batch", "T: seq(B)", "U: seq(B)", "U1: seq(B) = U + 1",
             "J: packed(B, T, U1)", "N: packed(B, T)"});
  EXPECT_TRUE(succeeded(dims.verify([&] { return emit(); })));
  EXPECT_TRUE(dims.lookup("U1").isDerived());
  EXPECT_EQ(dims.lookup("U1").deriveLength(3), 4);
  EXPECT_EQ(dims.lookup("U1").deriveLength(0), 1);
  EXPECT_EQ(dims.findDerived("U", 1, 1).getName().getValue(), "U1");
  EXPECT_FALSE(dims.findDerived("U", 2));
  EXPECT_TRUE(dims.lookup("J").isGridPacked());
  EXPECT_FALSE(dims.lookup("N").isGridPacked());
  // One-axis and grid packing are looked up apart.
  EXPECT_EQ(dims.findPacked("B", "T").getName().getValue(), "N");
  EXPECT_EQ(dims.findPacked("B", "T", "U1").getName().getValue(), "J");
  EXPECT_FALSE(dims.findPacked("B", "U1", "T"));
  auto type = NNTensorType::get(&context, {"J", ""}, {0, 8},
                                Float32Type::get(&context));
  FailureOr<Positions> positions =
      classifyPositions(type, dims, [&] { return emit(); });
  ASSERT_TRUE(succeeded(positions));
  EXPECT_EQ(positions->kind, PositionKind::Packed);
  EXPECT_EQ(positions->sequences, (SmallVector<StringRef, 2>{"T", "U1"}));
  std::string text;
  llvm::raw_string_ostream os(text);
  dims.lookup("J").printBody(os);
  dims.lookup("U1").printBody(os << "; ");
  EXPECT_EQ(os.str(), "J: packed(B, T, U1); U1: seq(B) = U + 1");
}

TEST_F(DimsTest, ComputedDimsAndWhatFollowsFromThem) {
  // A decoder's hypotheses Y, a derived Y1, a grid over (T, Y1).
  DimTable dims =
      table({"B: batch", "T: seq(B)", "Y: seq(B) computed",
             "Y1: seq(B) = Y + 1", "N: packed(B, T)", "J: packed(B, T, Y1)"});
  EXPECT_TRUE(succeeded(dims.verify([&] { return emit(); })));
  EXPECT_TRUE(dims.lookup("Y").getComputed());
  EXPECT_FALSE(dims.lookup("Y1").getComputed());
  EXPECT_EQ(dims.computedSources("Y"), (SmallVector<StringRef, 2>{"Y"}));
  EXPECT_EQ(dims.computedSources("Y1"), (SmallVector<StringRef, 2>{"Y"}));
  EXPECT_EQ(dims.computedSources("J"), (SmallVector<StringRef, 2>{"Y"}));
  EXPECT_FALSE(dims.dependsOnComputed("T"));
  EXPECT_FALSE(dims.dependsOnComputed("N"));
  EXPECT_FALSE(dims.dependsOnComputed("B"));
  ASSERT_EQ(dims.getComputedDims().size(), 1u);
  std::string text;
  llvm::raw_string_ostream os(text);
  dims.lookup("Y").printBody(os);
  EXPECT_EQ(os.str(), "Y: seq(B) computed");

  // Only a root sequence dim can be computed (the parser cannot spell the
  // others; a builder can).
  auto name = [&](StringRef n) { return StringAttr::get(&context, n); };
  auto derived = DimDeclAttr::get(&context, name("Y2"), DimKind::seq, name("B"),
                                  name("T"), 2, 0, StringAttr(),
                                  /*computed=*/true);
  DimTable bad(
      ArrayAttr::get(&context, {dims.lookup("B"), dims.lookup("T"), derived}));
  EXPECT_TRUE(failed(bad.verify([&] { return emit(); })));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "dim 'Y2': only a sequence dim that is not derived can "
                       "be computed");
}

TEST_F(DimsTest, TableRejectsForwardReferences) {
  DimTable dims = table({"T: seq(B)", "B: batch"});
  EXPECT_TRUE(failed(dims.verify([&] { return emit(); })));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "dim 'T': 'B' is not a batch dim declared before it");
}

TEST_F(DimsTest, ClassifiesPaddedPackedAndPerSequencePositions) {
  DimTable dims =
      table({"B: batch", "T: seq(B)", "U: seq(B)", "N: packed(B, T)"});
  auto classify = [&](StringRef text) {
    return classifyPositions(type(text), dims, [&] { return emit(); });
  };
  FailureOr<Positions> padded = classify("!nn.tensor<[B, T, U, 4], f32>");
  ASSERT_TRUE(succeeded(padded));
  EXPECT_EQ(padded->kind, PositionKind::Padded);
  EXPECT_EQ(padded->getNumAxes(), 3u);
  EXPECT_EQ(padded->sequences, (SmallVector<StringRef, 2>{"T", "U"}));

  FailureOr<Positions> packed = classify("!nn.tensor<[N, 4], f32>");
  ASSERT_TRUE(succeeded(packed));
  EXPECT_EQ(packed->kind, PositionKind::Packed);
  EXPECT_EQ(packed->batch, "B");
  EXPECT_EQ(packed->sequences.front(), "T");
  EXPECT_TRUE(packed->hasSequenceAxis());

  FailureOr<Positions> perSequence = classify("!nn.tensor<[B], f32>");
  ASSERT_TRUE(succeeded(perSequence));
  EXPECT_EQ(perSequence->kind, PositionKind::Batch);
  EXPECT_FALSE(perSequence->hasSequenceAxis());

  EXPECT_EQ(classify("!nn.tensor<[3, 4], f32>")->kind, PositionKind::None);
  EXPECT_TRUE(errors.empty());

  EXPECT_TRUE(failed(classify("!nn.tensor<[N, T], f32>")));
  EXPECT_TRUE(failed(classify("!nn.tensor<[T, B], f32>")));
  EXPECT_TRUE(failed(classify("!nn.tensor<[B, 4, T], f32>")));
  EXPECT_EQ(errors.size(), 3u);
}

TEST_F(DimsTest, BindingFollowsDerivedDimsToTheirSources) {
  DimTable callee =
      table({"B: batch", "T: seq(B)", "T2: seq(B) = ceildiv(T, 2)"});
  DimTable caller =
      table({"C: batch", "S: seq(C)", "S2: seq(C) = ceildiv(S, 2)"});
  DimBinding binding(callee, caller);
  // Only the result names the derived dim: its source and batch are bound
  // by following the declarations.
  ASSERT_TRUE(succeeded(binding.unify(type("!nn.tensor<[B, T2, 4], f32>"),
                                      type("!nn.tensor<[C, S2, 4], f32>"),
                                      "result 0", [&] { return emit(); })));
  EXPECT_TRUE(binding.lookup("T").empty());
  ASSERT_TRUE(succeeded(binding.verifyKinds([&] { return emit(); })));
  EXPECT_EQ(binding.lookup("B"), "C");
  EXPECT_EQ(binding.lookup("T2"), "S2");
  EXPECT_EQ(binding.lookup("T"), "S");
  EXPECT_TRUE(errors.empty());
}

TEST_F(DimsTest, BindingRejectsOneCalleeDimForTwoCallerDims) {
  DimTable callee = table({"B: batch", "T: seq(B)"});
  DimTable caller = table({"C: batch", "S: seq(C)", "R: seq(C)"});
  DimBinding binding(callee, caller);
  ASSERT_TRUE(succeeded(binding.unify(type("!nn.tensor<[B, T], f32>"),
                                      type("!nn.tensor<[C, S], f32>"),
                                      "operand 0", [&] { return emit(); })));
  EXPECT_TRUE(failed(binding.unify(type("!nn.tensor<[B, T], f32>"),
                                   type("!nn.tensor<[C, R], f32>"), "operand 1",
                                   [&] { return emit(); })));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "operand 1: callee dim 'T' is bound to both 'S' and 'R'");
}

} // namespace
