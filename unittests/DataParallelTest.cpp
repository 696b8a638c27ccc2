//===- DataParallelTest.cpp - the runtime side of data-parallel runs ------===//
//
// splitBatch against a brute-force restatement of its rule (contiguous
// parts covering the batch, each cut closest to its share of the frames),
// sliceBatch on a hand-made batch, the losses summed through a
// communicator that stands for several identical ranks, the local
// communicator, sums started and finished apart (ranks as threads), and
// the collective entry points with and without a communicator.
//
//===----------------------------------------------------------------------===//

#include "nn/DataParallel.h"
#include "ThreadCommunicator.h"
#include "runtime/comm/CommAbi.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <future>
#include <random>
#include <thread>

using namespace nn;
using namespace nn::testing;

namespace {

int64_t framesOf(const std::vector<int32_t> &lengths, int64_t begin,
                 int64_t end) {
  int64_t total = 0;
  for (int64_t i = begin; i < end; ++i)
    total += lengths[i];
  return total;
}

TEST(SplitBatchTest, PartsAreContiguousCoverEverySequenceAndBalanceFrames) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 500; ++trial) {
    int count = (int)(rng() % 12);
    int parts = 1 + (int)(rng() % 5);
    std::vector<int32_t> lengths(count);
    for (int32_t &length : lengths)
      length = 1 + (int32_t)(rng() % 50);
    auto split = splitBatch(lengths, parts);
    ASSERT_EQ((int)split.size(), parts);
    int filled = std::min(count, parts);
    int64_t at = 0, total = framesOf(lengths, 0, count), running = 0;
    for (int p = 0; p < parts; ++p) {
      EXPECT_EQ(split[p].first, at) << "trial " << trial;
      at = split[p].second;
      // The first min(count, parts) parts hold sequences, the rest none.
      if (p >= filled) {
        EXPECT_EQ(split[p].first, split[p].second) << "trial " << trial;
        continue;
      }
      EXPECT_LT(split[p].first, split[p].second) << "trial " << trial;
      running += framesOf(lengths, split[p].first, split[p].second);
      if (p + 1 == filled)
        continue;
      // The cut: no other that leaves this part and every later one a
      // sequence is strictly closer to this part's share.
      double target = (double)total * (p + 1) / filled;
      for (int64_t cut = split[p].first + 1; cut <= count - (filled - 1 - p);
           ++cut) {
        double other = (double)framesOf(lengths, 0, cut);
        EXPECT_LE(std::abs((double)running - target),
                  std::abs(other - target) + 1e-9)
            << "trial " << trial << " part " << p << " cut " << cut;
      }
    }
    EXPECT_EQ(at, count);
  }
}

TEST(SplitBatchTest, HandWorkedCases) {
  using Parts = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(splitBatch({10, 10, 10, 10}, 2), (Parts{{0, 2}, {2, 4}}));
  // 30 | 10 10 10: the first cut at 30 frames, the share.
  EXPECT_EQ(splitBatch({30, 10, 10, 10}, 2), (Parts{{0, 1}, {1, 4}}));
  EXPECT_EQ(splitBatch({5}, 3), (Parts{{0, 1}, {1, 1}, {1, 1}}));
  EXPECT_EQ(splitBatch({}, 2), (Parts{{0, 0}, {0, 0}}));
  EXPECT_EQ(splitBatch({3, 4}, 1), (Parts{{0, 2}}));
}

Manifest framesManifest() {
  Manifest manifest;
  manifest.graph = "model";
  DimInfo batch;
  batch.kind = DimInfo::Kind::batch;
  batch.name = "B";
  DimInfo time;
  time.kind = DimInfo::Kind::seq;
  time.name = "T";
  time.batch = "B";
  manifest.dims = {batch, time};
  TensorInfo features;
  features.name = "features";
  features.axes = {{"B"}, {"T"}, {"", 2}};
  TensorInfo rate;
  rate.name = "learning_rate";
  manifest.inputs = {features, rate};
  return manifest;
}

TEST(SliceBatchTest, SlicesInputsAndLengthsAndCutsThePadding) {
  Manifest manifest = framesManifest();
  RunInputs batch;
  Tensor features(DType::f32, {3, 5, 2});
  for (int64_t i = 0; i < features.numElements(); ++i)
    features.data<float>()[i] = (float)i;
  batch.inputs["features"] = features;
  batch.inputs["learning_rate"] = Tensor::of<float>(DType::f32, {}, {0.5f});
  batch.lengths["T"] = {5, 2, 3};
  absl::StatusOr<RunInputs> part = sliceBatch(manifest, batch, "B", 1, 3);
  ASSERT_TRUE(part.ok()) << part.status();
  EXPECT_EQ(part->lengths.at("T"), (std::vector<int32_t>{2, 3}));
  const Tensor &own = part->inputs.at("features");
  // Sequences 1 and 2, padded to their longest (3 frames).
  ASSERT_EQ(own.shape(), (std::vector<int64_t>{2, 3, 2}));
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 3; ++t)
      for (int64_t f = 0; f < 2; ++f)
        EXPECT_EQ(own.data<float>()[(b * 3 + t) * 2 + f],
                  (float)(((b + 1) * 5 + t) * 2 + f));
  EXPECT_EQ(part->inputs.at("learning_rate").at(0), 0.5);

  absl::StatusOr<RunInputs> empty = sliceBatch(manifest, batch, "B", 3, 3);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->inputs.at("features").shape(),
            (std::vector<int64_t>{0, 1, 2}));

  EXPECT_FALSE(sliceBatch(manifest, batch, "B", 2, 4).ok());
  EXPECT_FALSE(sliceBatch(manifest, batch, "B", 2, 1).ok());
}

TEST(InputBatchDimTest, OneBatchDimOfPaddedInputs) {
  Manifest manifest = framesManifest();
  absl::StatusOr<std::string> dim = inputBatchDim(manifest);
  ASSERT_TRUE(dim.ok()) << dim.status();
  EXPECT_EQ(*dim, "B");

  DimInfo packed;
  packed.kind = DimInfo::Kind::packed;
  packed.name = "N";
  packed.batch = "B";
  packed.sequence = "T";
  manifest.dims.push_back(packed);
  TensorInfo rows;
  rows.name = "rows";
  rows.axes = {{"N"}, {"", 2}};
  manifest.inputs.push_back(rows);
  absl::Status status = inputBatchDim(manifest).status();
  EXPECT_NE(std::string(status.message()).find("input 'rows' is packed"),
            std::string::npos)
      << status;

  Manifest none;
  none.graph = "g";
  EXPECT_FALSE(inputBatchDim(none).ok());
}

/// Stands for `ranks` ranks that all hold this rank's values: a sum is the
/// value times the ranks.
class MirrorCommunicator final : public Communicator {
public:
  explicit MirrorCommunicator(int ranks) : ranks(ranks) {}
  int rank() const override { return 0; }
  int size() const override { return ranks; }
  const char *backend() const override { return "mirror"; }
  absl::Status allReduceSum(const void *send, void *receive, int64_t count,
                            DType dtype) override {
    EXPECT_EQ(dtype, DType::f64);
    for (int64_t i = 0; i < count; ++i)
      static_cast<double *>(receive)[i] =
          static_cast<const double *>(send)[i] * ranks;
    return absl::OkStatus();
  }
  absl::Status broadcast(void *, int64_t, int) override {
    return absl::OkStatus();
  }
  absl::Status barrier() override { return absl::OkStatus(); }
  [[noreturn]] void abort(int) override { std::abort(); }

private:
  int ranks;
};

TEST(AllReduceLossesTest, SumsAndNormalizationsAddInTheManifestsOrder) {
  Manifest manifest;
  LossInfo ce, ctc;
  ce.name = "ce";
  ctc.name = "ctc";
  ctc.scale = 0.5;
  manifest.losses = {ce, ctc};
  LossValue own;
  own.name = "ctc";
  own.sum = 12;
  own.normalization = 4;
  own.normalized = 3;
  own.framesComputed = 7;
  std::vector<LossValue> losses{own};
  MirrorCommunicator three(3);
  ASSERT_TRUE(allReduceLosses(three, manifest, losses).ok());
  ASSERT_EQ(losses.size(), 2u);
  // A loss this rank did not report counts zero here.
  EXPECT_EQ(losses[0].name, "ce");
  EXPECT_EQ(losses[0].sum, 0);
  EXPECT_EQ(losses[0].normalized, 0);
  EXPECT_EQ(losses[1].name, "ctc");
  EXPECT_EQ(losses[1].sum, 36);
  EXPECT_EQ(losses[1].normalization, 12);
  EXPECT_EQ(losses[1].normalized, 3);
  EXPECT_EQ(losses[1].framesComputed, 21);
  EXPECT_EQ(losses[1].scale, 0.5);
}

/// Rank 0 of two: keeps what it broadcasts. Rank 1: receives what rank 0
/// kept, in order, and checks each size.
class RecordingCommunicator final : public Communicator {
public:
  RecordingCommunicator(int rank, std::vector<std::vector<char>> &wire)
      : rankNumber(rank), wire(wire) {}
  int rank() const override { return rankNumber; }
  int size() const override { return 2; }
  const char *backend() const override { return "recording"; }
  absl::Status allReduceSum(const void *, void *, int64_t, DType) override {
    return absl::UnimplementedError("not used");
  }
  absl::Status broadcast(void *data, int64_t bytes, int root) override {
    EXPECT_EQ(root, 0);
    auto *begin = static_cast<char *>(data);
    if (rankNumber == 0) {
      wire.emplace_back(begin, begin + bytes);
      return absl::OkStatus();
    }
    if (next >= wire.size() || (int64_t)wire[next].size() != bytes)
      return absl::InternalError("broadcast " + std::to_string(next) + " of " +
                                 std::to_string(bytes) +
                                 " bytes does not match rank 0's");
    std::copy(wire[next].begin(), wire[next].end(), begin);
    ++next;
    return absl::OkStatus();
  }
  absl::Status barrier() override { return absl::OkStatus(); }
  [[noreturn]] void abort(int) override { std::abort(); }

private:
  int rankNumber;
  std::vector<std::vector<char>> &wire;
  size_t next = 0;
};

TEST(BroadcastStateTest, EveryRankStartsFromRankZerosState) {
  Manifest manifest;
  TensorInfo w, m;
  w.name = "w";
  w.axes = {{"", 2}, {"", 3}};
  m.name = "optimizer/adam_m/w";
  m.axes = w.axes;
  manifest.parameters = {w, m};
  TrainState root;
  ASSERT_TRUE(initializeParameters(manifest, 1, root.parameters).ok());
  for (int64_t i = 0; i < 6; ++i) {
    root.parameters["w"].data<float>()[i] = 0.5f * (float)i;
    root.parameters["optimizer/adam_m/w"].data<float>()[i] = -1.0f - (float)i;
  }
  root.step = 7;
  root.batches = 9;
  root.epochRates = {{0.1, true, 2.5}, {0.05, false, 0}};
  std::vector<std::vector<char>> wire;
  RecordingCommunicator zero(0, wire), one(1, wire);
  TrainState sent = root;
  ASSERT_TRUE(broadcastState(zero, manifest, sent).ok());

  TrainState other;
  ASSERT_TRUE(initializeParameters(manifest, 2, other.parameters).ok());
  ASSERT_TRUE(broadcastState(one, manifest, other).ok());
  EXPECT_EQ(other.step, 7);
  EXPECT_EQ(other.batches, 9);
  ASSERT_EQ(other.epochRates.size(), 2u);
  EXPECT_EQ(other.epochRates[0].rate, 0.1);
  EXPECT_TRUE(other.epochRates[0].scored);
  EXPECT_EQ(other.epochRates[0].score, 2.5);
  EXPECT_EQ(other.epochRates[1].rate, 0.05);
  EXPECT_FALSE(other.epochRates[1].scored);
  for (const auto &[name, tensor] : root.parameters)
    for (int64_t i = 0; i < tensor.numElements(); ++i)
      EXPECT_EQ(other.parameters.at(name).data<float>()[i],
                tensor.data<float>()[i])
          << name << " " << i;
  // Rank 0 keeps its own.
  EXPECT_EQ(sent.step, 7);
  EXPECT_EQ(sent.parameters.at("w").data<float>()[5], 2.5f);

  // A rank whose model lacks a parameter says so (rather than send a
  // different number of bytes).
  TrainState lacking;
  RecordingCommunicator again(1, wire);
  absl::Status status = broadcastState(again, manifest, lacking);
  EXPECT_NE(std::string(status.message())
                .find("rank 1 of 2: the train "
                      "state has no parameter 'w'"),
            std::string::npos)
      << status;
}

TEST(AllGatherTest, EveryRankGetsEveryRanksBytesInRankOrder) {
  // Empty parts and bytes that are not text (a 0 among them) included.
  const std::vector<std::string> parts{"first", "", std::string("x\0y", 3),
                                       std::string(1000, 'z')};
  ThreadWorld world((int)parts.size());
  std::vector<absl::StatusOr<std::vector<std::string>>> gathered(
      parts.size(), absl::UnknownError("not run"));
  std::vector<std::thread> ranks;
  for (int r = 0; r < (int)parts.size(); ++r)
    ranks.emplace_back([&, r] {
      ThreadCommunicator communicator(world, r);
      gathered[r] = allGather(communicator, parts[r]);
    });
  for (std::thread &rank : ranks)
    rank.join();
  for (size_t r = 0; r < parts.size(); ++r) {
    ASSERT_TRUE(gathered[r].ok()) << gathered[r].status();
    EXPECT_EQ(*gathered[r], parts) << "rank " << r;
  }
  // One rank: its own bytes.
  std::unique_ptr<Communicator> local = makeLocalCommunicator();
  absl::StatusOr<std::vector<std::string>> alone = allGather(*local, "own");
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_EQ(*alone, std::vector<std::string>{"own"});
}

TEST(LocalCommunicatorTest, OneRankSumsAreTheValues) {
  std::unique_ptr<Communicator> local = makeLocalCommunicator();
  EXPECT_EQ(local->size(), 1);
  EXPECT_EQ(local->describe(), "rank 0 of 1");
  std::vector<float> values{1.5f, -2.0f}, sums(2);
  ASSERT_TRUE(
      local->allReduceSum(values.data(), sums.data(), 2, DType::f32).ok());
  EXPECT_EQ(sums, values);
  EXPECT_TRUE(local->broadcast(values.data(), 8, 0).ok());
  EXPECT_FALSE(local->broadcast(values.data(), 8, 1).ok());
  EXPECT_TRUE(local->barrier().ok());
}

TEST(CommAbiTest, WithoutACommunicatorTheSumIsACopy) {
  ASSERT_EQ(currentCommunicator(), nullptr);
  std::vector<double> values{1, 2, 3}, sums(3, 0);
  nn_comm_all_reduce_v1("test", (int64_t)(intptr_t)values.data(),
                        (int64_t)(intptr_t)sums.data(), 3, 64);
  EXPECT_EQ(sums, values);
  MirrorCommunicator two(2);
  {
    CurrentCommunicator scope(&two);
    // The mirror checks f64; an f32 call would fail its expectation.
    nn_comm_all_reduce_v1("test", (int64_t)(intptr_t)values.data(),
                          (int64_t)(intptr_t)values.data(), 3, 64);
  }
  EXPECT_EQ(values, (std::vector<double>{2, 4, 6}));
  EXPECT_EQ(two.stats().calls, 1);
  EXPECT_EQ(two.stats().bytes, 24);
  EXPECT_EQ(currentCommunicator(), nullptr);
}

TEST(CommAbiTest, StartAndFinishAreOneSumInTwoHalves) {
  ASSERT_EQ(currentCommunicator(), nullptr);
  std::vector<double> values{1, 2, 3}, sums(3, 0);
  int64_t ticket =
      nn_comm_all_reduce_start_v1("test", (int64_t)(intptr_t)values.data(),
                                  (int64_t)(intptr_t)sums.data(), 3, 64);
  EXPECT_EQ(sums, values);
  nn_comm_all_reduce_finish_v1("test", ticket);
  MirrorCommunicator two(2);
  {
    CurrentCommunicator scope(&two);
    ticket =
        nn_comm_all_reduce_start_v1("test", (int64_t)(intptr_t)values.data(),
                                    (int64_t)(intptr_t)values.data(), 3, 64);
    nn_comm_all_reduce_finish_v1("test", ticket);
  }
  EXPECT_EQ(values, (std::vector<double>{2, 4, 6}));
  EXPECT_EQ(two.stats().calls, 1);
  EXPECT_EQ(two.stats().bytes, 24);
}

// A rank's started sums run on its communicator's thread: rank 0's starts
// return before rank 1 has joined any sum (rank 1 joins only once they
// have; a start that waited for the sum would leave both waiting), they run
// in the order they were started whatever order they are finished in, and
// each is every rank's sum.
TEST(OverlapTest, StartedSumsRunBesideTheCallerInTheirOrder) {
  ThreadWorld world(2);
  std::promise<void> started;
  std::shared_future<void> rankZeroStarted = started.get_future().share();
  std::vector<std::vector<float>> a(2), b(2);
  std::vector<std::vector<double>> c(2);
  std::vector<std::string> failures(2);
  std::vector<CollectiveStats> stats(2);
  auto rank = [&](int r) {
    ThreadCommunicator communicator(world, r, /*overlaps=*/true);
    if (r == 1 && rankZeroStarted.wait_for(std::chrono::seconds(10)) !=
                      std::future_status::ready) {
      failures[r] = "rank 0's starts did not return before rank 1 joined";
      return;
    }
    // Three sums of different sizes and types: run out of order, a rank
    // would pair one sum's elements with another's.
    a[r] = {1.0f + r, 2.0f, 3.0f};
    b[r] = {10.0f * (r + 1), 0, 0, 0, 5};
    c[r] = {0.25 * (r + 1), -1};
    int64_t ta = communicator.startSum(a[r].data(), a[r].data(), 3, DType::f32);
    int64_t tb = communicator.startSum(b[r].data(), b[r].data(), 5, DType::f32);
    int64_t tc = communicator.startSum(c[r].data(), c[r].data(), 2, DType::f64);
    if (r == 0)
      started.set_value();
    // Each rank finishes them in another order than it started them.
    std::vector<int64_t> order = r == 0 ? std::vector<int64_t>{tc, ta, tb}
                                        : std::vector<int64_t>{tb, tc, ta};
    for (int64_t ticket : order)
      if (absl::Status status = communicator.finishSum(ticket); !status.ok())
        failures[r] += std::string(status.message()) + "; ";
    // A ticket is finished once.
    if (communicator.finishSum(ta).ok())
      failures[r] += "a ticket finished twice; ";
    stats[r] = communicator.stats();
  };
  std::thread other(rank, 1);
  rank(0);
  other.join();
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(failures[r], "");
    EXPECT_EQ(a[r], (std::vector<float>{3, 4, 6}));
    EXPECT_EQ(b[r], (std::vector<float>{30, 0, 0, 0, 10}));
    EXPECT_EQ(c[r], (std::vector<double>{0.75, -2}));
    EXPECT_EQ(stats[r].calls, 3);
    EXPECT_EQ(stats[r].bytes, 3 * 4 + 5 * 4 + 2 * 8);
  }
}

// A sum that fails says so at its finish, and the sums after it fail
// without running (each would wait out the timeout for ranks that are
// gone) until finishAllSums, which also drops the sums left unfinished (a
// step that failed between a start and its finish).
TEST(OverlapTest, AFailedSumFailsTheOnesAfterItUntilFinishAllSums) {
  for (bool overlaps : {true, false}) {
    SCOPED_TRACE(overlaps ? "overlapping" : "at the start");
    ThreadWorld world(1);
    ThreadCommunicator communicator(world, 0, overlaps);
    std::vector<int32_t> counts{1, 2};
    int64_t bad =
        communicator.startSum(counts.data(), counts.data(), 2, DType::i32);
    std::vector<float> x{1, 2}, sum(2, 0);
    int64_t after = communicator.startSum(x.data(), sum.data(), 2, DType::f32);
    absl::Status status = communicator.finishSum(after);
    EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << status;
    EXPECT_NE(status.message().find("not run: an earlier sum of this rank "
                                    "failed (threads sum f32 and f64)"),
              std::string::npos)
        << status;
    EXPECT_EQ(sum, (std::vector<float>{0, 0}));
    status = communicator.finishSum(bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << status;
    status = communicator.finishSum(bad + 100);
    EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
    EXPECT_NE(status.message().find("no sum was started as ticket"),
              std::string::npos)
        << status;

    // Left unfinished, then dropped with the failure.
    int64_t left = communicator.startSum(x.data(), sum.data(), 2, DType::f32);
    communicator.finishAllSums();
    EXPECT_FALSE(communicator.finishSum(left).ok());
    // The next sums run (a world of one: the sum is the value).
    std::vector<float> y{7}, ySum{0};
    int64_t next = communicator.startSum(y.data(), ySum.data(), 1, DType::f32);
    EXPECT_TRUE(communicator.finishSum(next).ok());
    EXPECT_EQ(ySum, std::vector<float>{7});
    // Counted: the finished ones, failed or not.
    EXPECT_EQ(communicator.stats().calls, 3);
  }
}

} // namespace
