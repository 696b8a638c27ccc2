//===- FeatureStats.cpp - global mean/variance normalization --------------===//
//
// Sums in double over every frame of a set of utterances; the mean and the
// population variance come from them when applied. Stored as sums, not as
// mean and variance, so that statistics of shards computed apart merge
// exactly.
//
//===----------------------------------------------------------------------===//

#include "nn/Audio.h"
#include "nn/Npy.h"

#include <cmath>
#include <map>

namespace nn {

namespace {

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

absl::Status checkFeatures(const Tensor &features, int dim) {
  if (features.dtype() != DType::f32 || features.rank() != 2 ||
      features.shape()[1] != dim)
    return absl::InvalidArgumentError("feature stats: expected f32 [frames, " +
                                      std::to_string(dim) + "] features, got " +
                                      std::string(toString(features.dtype())) +
                                      " " + shapeString(features.shape()));
  return absl::OkStatus();
}

} // namespace

FeatureStats::FeatureStats(int dim) : sum_(dim, 0.0), sumSquares_(dim, 0.0) {}

absl::Status FeatureStats::accumulate(const Tensor &features) {
  if (absl::Status status = checkFeatures(features, dim()); !status.ok())
    return status;
  const float *values = features.data<float>();
  int64_t frames = features.shape()[0];
  for (int64_t f = 0; f < frames; ++f)
    for (int d = 0; d < dim(); ++d) {
      double x = values[f * dim() + d];
      sum_[d] += x;
      sumSquares_[d] += x * x;
    }
  frames_ += frames;
  return absl::OkStatus();
}

absl::Status FeatureStats::merge(const FeatureStats &other) {
  if (other.dim() != dim())
    return absl::InvalidArgumentError("feature stats: cannot merge dim " +
                                      std::to_string(other.dim()) +
                                      " into dim " + std::to_string(dim()));
  for (int d = 0; d < dim(); ++d) {
    sum_[d] += other.sum_[d];
    sumSquares_[d] += other.sumSquares_[d];
  }
  frames_ += other.frames_;
  return absl::OkStatus();
}

std::vector<double> FeatureStats::mean() const {
  std::vector<double> mean(dim(), 0.0);
  if (frames_ > 0)
    for (int d = 0; d < dim(); ++d)
      mean[d] = sum_[d] / frames_;
  return mean;
}

std::vector<double> FeatureStats::stddev() const {
  std::vector<double> mean = this->mean();
  std::vector<double> stddev(dim(), 1.0);
  if (frames_ > 0)
    for (int d = 0; d < dim(); ++d) {
      double variance = sumSquares_[d] / frames_ - mean[d] * mean[d];
      if (variance >= 1e-20)
        stddev[d] = std::sqrt(variance);
    }
  return stddev;
}

absl::Status FeatureStats::apply(Tensor &features) const {
  if (absl::Status status = checkFeatures(features, dim()); !status.ok())
    return status;
  if (frames_ == 0)
    return absl::FailedPreconditionError(
        "feature stats: no frames accumulated, nothing to normalize with");
  std::vector<double> mean = this->mean(), stddev = this->stddev();
  float *values = features.data<float>();
  int64_t frames = features.shape()[0];
  for (int64_t f = 0; f < frames; ++f)
    for (int d = 0; d < dim(); ++d) {
      float &x = values[f * dim() + d];
      x = (float)((x - mean[d]) / stddev[d]);
    }
  return absl::OkStatus();
}

absl::Status FeatureStats::write(const std::string &path) const {
  std::map<std::string, Tensor> arrays;
  arrays["frames"] = Tensor::of<int64_t>(DType::i64, {1}, {frames_});
  arrays["sum"] = Tensor::of<double>(DType::f64, {(int64_t)dim()}, sum_);
  arrays["sum_squares"] =
      Tensor::of<double>(DType::f64, {(int64_t)dim()}, sumSquares_);
  return writeNpz(path, arrays);
}

absl::StatusOr<FeatureStats> FeatureStats::read(const std::string &path) {
  std::map<std::string, Tensor> arrays;
  if (absl::Status status = readNpz(path, arrays); !status.ok())
    return status;
  auto member = [&](const std::string &name, DType dtype,
                    int64_t size) -> absl::StatusOr<const Tensor *> {
    auto it = arrays.find(name);
    if (it == arrays.end())
      return absl::InvalidArgumentError(path + ": no member '" + name + "'");
    const Tensor &tensor = it->second;
    if (tensor.dtype() != dtype || tensor.rank() != 1 ||
        (size >= 0 && tensor.shape()[0] != size))
      return absl::InvalidArgumentError(
          path + ": member '" + name + "' is " +
          std::string(toString(tensor.dtype())) + " " +
          shapeString(tensor.shape()) + ", expected " +
          std::string(toString(dtype)) + " [" +
          (size >= 0 ? std::to_string(size) : std::string("dim")) + "]");
    return &tensor;
  };
  absl::StatusOr<const Tensor *> frames = member("frames", DType::i64, 1);
  if (!frames.ok())
    return frames.status();
  absl::StatusOr<const Tensor *> sum = member("sum", DType::f64, -1);
  if (!sum.ok())
    return sum.status();
  int64_t dim = (*sum)->shape()[0];
  absl::StatusOr<const Tensor *> sumSquares =
      member("sum_squares", DType::f64, dim);
  if (!sumSquares.ok())
    return sumSquares.status();
  int64_t frameCount = (*frames)->data<int64_t>()[0];
  if (frameCount < 0)
    return absl::InvalidArgumentError(path + ": negative frame count " +
                                      std::to_string(frameCount));
  FeatureStats stats((int)dim);
  stats.frames_ = frameCount;
  for (int64_t d = 0; d < dim; ++d) {
    stats.sum_[d] = (*sum)->data<double>()[d];
    stats.sumSquares_[d] = (*sumSquares)->data<double>()[d];
  }
  return stats;
}

} // namespace nn
