//===- GrowTest.cpp - copy_param_mode "subset" element by element ---------===//
//
// nn::growInto copies a trained parameter into the leading slice of the
// larger model's freshly initialized one. Here, over random shapes of rank
// 0 to 4 and two dtypes, every element of the result is checked by its
// coordinates: inside the trained shape it is the trained value, outside
// it the fresh one. Shapes that do not grow are errors naming the
// parameter.
//
//===----------------------------------------------------------------------===//

#include "nn/Train.h"

#include <gtest/gtest.h>

#include <random>

using namespace nn;

namespace {

/// The coordinates of flat index `i` in `shape` (row-major).
std::vector<int64_t> coordinates(int64_t i, const std::vector<int64_t> &shape) {
  std::vector<int64_t> at(shape.size());
  for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
    at[d] = i % shape[d];
    i /= shape[d];
  }
  return at;
}

/// The flat index of `at` in `shape`.
int64_t flat(const std::vector<int64_t> &at,
             const std::vector<int64_t> &shape) {
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    i = i * shape[d] + at[d];
  return i;
}

template <typename T> void checkGrowth(DType dtype, std::mt19937 &rng) {
  std::uniform_int_distribution<int> rankOf(0, 4), sizeOf(0, 4), more(0, 3);
  for (int round = 0; round < 200; ++round) {
    std::vector<int64_t> from, to;
    for (int d = rankOf(rng); d > 0; --d) {
      from.push_back(sizeOf(rng));
      to.push_back(from.back() + more(rng));
    }
    Tensor trained(dtype, from), fresh(dtype, to);
    for (int64_t i = 0; i < trained.numElements(); ++i)
      trained.data<T>()[i] = static_cast<T>(1000 + i);
    for (int64_t i = 0; i < fresh.numElements(); ++i)
      fresh.data<T>()[i] = static_cast<T>(-1 - i);
    Tensor grown = fresh;
    ASSERT_TRUE(growInto("p", trained, grown).ok());
    ASSERT_EQ(grown.shape(), to);
    for (int64_t i = 0; i < grown.numElements(); ++i) {
      std::vector<int64_t> at = coordinates(i, to);
      bool inside = true;
      for (size_t d = 0; d < at.size(); ++d)
        inside &= at[d] < from[d];
      T expected =
          inside ? trained.data<T>()[flat(at, from)] : fresh.data<T>()[i];
      ASSERT_EQ(grown.data<T>()[i], expected)
          << "element " << i << " of a " << to.size() << "-d grown tensor";
    }
  }
}

TEST(GrowTest, TrainedValuesFillTheLeadingSlice) {
  std::mt19937 rng(7);
  checkGrowth<float>(DType::f32, rng);
  checkGrowth<int32_t>(DType::i32, rng);
}

TEST(GrowTest, OnlyGrowthIsAccepted) {
  auto error = [](const Tensor &trained, Tensor fresh) {
    absl::Status status = growInto("lstm.w_ih", trained, fresh);
    return status.ok() ? std::string() : std::string(status.message());
  };
  Tensor trained(DType::f32, {4, 3});
  EXPECT_EQ(error(trained, Tensor(DType::f32, {4, 2})),
            "parameter 'lstm.w_ih' is f32 [4, 3] trained but f32 [4, 2] in "
            "this model: copy_param_mode \"subset\" only grows sizes (the "
            "same dtype and rank, no size smaller)");
  EXPECT_NE(error(trained, Tensor(DType::f32, {4, 3, 1})), "");
  EXPECT_NE(error(trained, Tensor(DType::f64, {4, 3})), "");
  EXPECT_EQ(error(trained, Tensor(DType::f32, {4, 3})), "");
}

} // namespace
