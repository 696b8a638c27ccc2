//===- AudioTest.cpp - audio files, log-mel features, normalization -------===//
//
// The readers against samples numpy wrote (unittests/data/audio, from
// make_reference.py), every reader error, resampling against an analytic
// sine, and the filterbank against reference frames computed by
// kaldi-native-fbank 1.23.0 (docs/audio.md gives the tolerance).
//
//===----------------------------------------------------------------------===//

#include "nn/Audio.h"
#include "nn/Npy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sys/stat.h>
#include <unistd.h>

using namespace nn;

namespace {

#define EXPECT_CONTAINS(text, part)                                            \
  EXPECT_NE(std::string(text).find(part), std::string::npos)                   \
      << "expected '" << (part) << "' in: " << (text)

/// The largest |log-mel| difference allowed against kaldi-native-fbank
/// (docs/audio.md records the largest one measured).
constexpr float kTolerance = 2e-4f;

std::string fixture(const std::string &name) {
  return std::string(NN_SOURCE_DIR) + "/unittests/data/audio/" + name;
}

std::string scratch(const std::string &name) {
  std::string dir = ::testing::TempDir() + "/nn-audio-test-" + name + "-" +
                    std::to_string(getpid());
  mkdir(dir.c_str(), 0755);
  return dir;
}

Tensor load(const std::string &name) {
  Tensor tensor;
  absl::Status status = readNpy(fixture(name), tensor);
  EXPECT_TRUE(status.ok()) << status;
  return tensor;
}

Audio readOrDie(const std::string &name, AudioReadOptions options = {}) {
  absl::StatusOr<Audio> audio = readAudio(fixture(name), options);
  EXPECT_TRUE(audio.ok()) << audio.status();
  return audio.ok() ? *audio : Audio();
}

/// `n` samples of a sine of amplitude 0.5 and frequency `hz` at `rate`.
std::vector<float> sine(double hz, int rate, size_t n) {
  std::vector<float> samples(n);
  for (size_t i = 0; i < n; ++i)
    samples[i] = 0.5f * (float)std::sin(2 * M_PI * hz * i / rate);
  return samples;
}

/// The largest difference between `samples` (at `rate`) and that sine,
/// leaving out a tenth of a second at either end (filter edges).
double worstAgainstSine(const std::vector<float> &samples, double hz,
                        int rate) {
  double worst = 0;
  for (size_t i = rate / 10; i + rate / 10 < samples.size(); ++i)
    worst = std::max(
        worst, std::abs(samples[i] - 0.5 * std::sin(2 * M_PI * hz * i / rate)));
  return worst;
}

AudioReadOptions fileRate() {
  AudioReadOptions options;
  options.sampleRate = 0;
  return options;
}

//===----------------------------------------------------------------------===//
// Readers
//===----------------------------------------------------------------------===//

class ReadMono : public ::testing::TestWithParam<std::pair<const char *, int>> {
};

TEST_P(ReadMono, MatchesNumpySamples) {
  std::string name = GetParam().first;
  Audio audio = readOrDie(name, fileRate());
  EXPECT_EQ(audio.sampleRate, GetParam().second);
  Tensor expected = load(name.substr(0, name.find('.')) + "-samples.npy");
  ASSERT_EQ(expected.rank(), 1);
  ASSERT_EQ((int64_t)audio.samples.size(), expected.shape()[0]);
  for (int64_t i = 0; i < expected.shape()[0]; ++i)
    ASSERT_EQ(audio.samples[i], expected.data<int32_t>()[i] / 32768.0f)
        << name << " sample " << i;
}

INSTANTIATE_TEST_SUITE_P(
    Audio, ReadMono,
    ::testing::Values(std::make_pair("tones16k.wav", 16000),
                      std::make_pair("chirp8k.flac", 8000),
                      std::make_pair("clipped16k.flac", 16000),
                      std::make_pair("silence16k.wav", 16000),
                      std::make_pair("short16k.wav", 16000)),
    [](const auto &info) {
      std::string name = info.param.first;
      return name.substr(0, name.find('.')) + "_" +
             name.substr(name.find('.') + 1);
    });

TEST(Audio, ReadsChosenChannelOfStereo) {
  Tensor expected = load("stereo16k-samples.npy");
  ASSERT_EQ(expected.rank(), 2);
  for (int channel = 0; channel < 2; ++channel) {
    AudioReadOptions options;
    options.channel = channel;
    Audio audio = readOrDie("stereo16k.wav", options);
    ASSERT_EQ((int64_t)audio.samples.size(), expected.shape()[0]);
    for (int64_t i = 0; i < expected.shape()[0]; ++i)
      ASSERT_EQ(audio.samples[i],
                expected.data<int32_t>()[i * 2 + channel] / 32768.0f)
          << "channel " << channel << " sample " << i;
  }
}

TEST(Audio, MissingFileIsNotFound) {
  std::string path = fixture("no-such-file.wav");
  absl::StatusOr<Audio> audio = readAudio(path);
  ASSERT_FALSE(audio.ok());
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kNotFound);
  EXPECT_CONTAINS(audio.status().message(), path);
  EXPECT_CONTAINS(audio.status().message(), "No such file");
}

TEST(Audio, UnreadableFileNamesFileAndCause) {
  std::string dir = scratch("unreadable");
  std::string path = dir + "/not-audio.wav";
  std::ofstream(path) << "RIFF but not really a wave file\n";
  absl::StatusOr<Audio> audio = readAudio(path);
  ASSERT_FALSE(audio.ok());
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_CONTAINS(audio.status().message(), path + ": cannot read audio file");

  // A directory is not an audio file either.
  absl::StatusOr<Audio> directory = readAudio(dir);
  ASSERT_FALSE(directory.ok());
  EXPECT_CONTAINS(directory.status().message(), dir);

  // Neither is a WAV file cut inside its header.
  std::string truncated = dir + "/truncated.wav";
  {
    std::ifstream in(fixture("tones16k.wav"), std::ios::binary);
    std::string bytes(20, '\0');
    in.read(bytes.data(), 20);
    std::ofstream(truncated, std::ios::binary) << bytes;
  }
  absl::StatusOr<Audio> cut = readAudio(truncated);
  ASSERT_FALSE(cut.ok());
  EXPECT_CONTAINS(cut.status().message(), truncated);
}

TEST(Audio, MultiChannelWithoutChoiceIsAnError) {
  std::string path = fixture("stereo16k.wav");
  absl::StatusOr<Audio> audio = readAudio(path);
  ASSERT_FALSE(audio.ok());
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_CONTAINS(audio.status().message(), path + ": has 2 channels");

  AudioReadOptions options;
  options.channel = 2;
  absl::StatusOr<Audio> third = readAudio(path, options);
  ASSERT_FALSE(third.ok());
  EXPECT_CONTAINS(third.status().message(),
                  path + ": channel 2 asked for, the file has 2");
}

TEST(Audio, RateMismatchWithoutResamplingIsAnError) {
  std::string path = fixture("chirp8k.flac");
  AudioReadOptions options;
  options.resample = false;
  absl::StatusOr<Audio> audio = readAudio(path, options);
  ASSERT_FALSE(audio.ok());
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_CONTAINS(audio.status().message(),
                  path + ": sample rate 8000 Hz, expected 16000 Hz");
}

TEST(Audio, ResamplesFileToTargetRate) {
  Audio audio = readOrDie("chirp8k.flac");
  EXPECT_EQ(audio.sampleRate, 16000);
  // 2400 samples at 8 kHz are 0.3 s.
  EXPECT_NEAR((double)audio.samples.size(), 4800.0, 2.0);
}

TEST(Audio, ResamplingKeepsASine) {
  // A 440 Hz sine at 8 kHz brought to 16 kHz and to 22.05 kHz must be the
  // same sine sampled at the new rate, away from the ends.
  const int fromRate = 8000;
  std::vector<float> samples = sine(440, fromRate, 8000);
  for (int toRate : {16000, 22050}) {
    absl::StatusOr<std::vector<float>> out =
        resampleAudio(samples, fromRate, toRate, "sine");
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_NEAR((double)out->size(), (double)toRate, 2.0);
    EXPECT_LT(worstAgainstSine(*out, 440, toRate), 1e-3)
        << "to " << toRate << " Hz";
  }
  absl::StatusOr<std::vector<float>> bad =
      resampleAudio(samples, fromRate, 0, "sine");
  ASSERT_FALSE(bad.ok());
  EXPECT_CONTAINS(bad.status().message(), "sine: cannot resample");
}

// 22,050 Hz to 16 kHz (the spoken-word task's audio for the default
// model rate): a 7.5 kHz sine (94% of the new Nyquist frequency, where the
// top mel bins are) keeps its amplitude to 0.1 dB and its waveform; a
// 9 kHz sine, above the new Nyquist frequency, is removed instead of
// aliasing to 7 kHz.
TEST(Audio, ResamplingKeepsTheBandAndRemovesWhatWouldAlias) {
  const int fromRate = 22050, toRate = 16000;
  absl::StatusOr<std::vector<float>> kept =
      resampleAudio(sine(7500, fromRate, fromRate), fromRate, toRate, "7.5k");
  ASSERT_TRUE(kept.ok()) << kept.status();
  double power = 0;
  size_t from = toRate / 10, to = kept->size() - toRate / 10;
  for (size_t i = from; i < to; ++i)
    power += (double)(*kept)[i] * (*kept)[i];
  double rms = std::sqrt(power / (double)(to - from));
  EXPECT_NEAR(20 * std::log10(rms / (0.5 / std::sqrt(2.0))), 0.0, 0.1);
  EXPECT_LT(worstAgainstSine(*kept, 7500, toRate), 1e-2);

  absl::StatusOr<std::vector<float>> removed =
      resampleAudio(sine(9000, fromRate, fromRate), fromRate, toRate, "9k");
  ASSERT_TRUE(removed.ok()) << removed.status();
  double loudest = 0;
  for (size_t i = from; i < removed->size() - toRate / 10; ++i)
    loudest = std::max(loudest, (double)std::abs((*removed)[i]));
  EXPECT_LT(loudest, 1e-4);
}

// Speed perturbation: a 440 Hz sine played 0.9 and 1.1 times as fast is a
// sine of 396 and 484 Hz at the same rate, 1/0.9 and 1/1.1 times as long.
TEST(Audio, ChangingTheSpeedScalesDurationAndPitch) {
  const int rate = 16000;
  std::vector<float> samples = sine(440, rate, 16000);
  for (double factor : {0.9, 1.1}) {
    absl::StatusOr<std::vector<float>> out =
        changeSpeed(samples, factor, "sine");
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_NEAR((double)out->size(), samples.size() / factor, 2.0);
    EXPECT_LT(worstAgainstSine(*out, 440 * factor, rate), 1e-3)
        << "factor " << factor;
  }
  absl::StatusOr<std::vector<float>> same = changeSpeed(samples, 1.0, "sine");
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, samples);
  for (double bad : {0.4, 2.5, 0.0}) {
    absl::StatusOr<std::vector<float>> out = changeSpeed(samples, bad, "sine");
    ASSERT_FALSE(out.ok());
    EXPECT_CONTAINS(out.status().message(), "is outside [0.5, 2]");
  }
}

//===----------------------------------------------------------------------===//
// Filterbank against kaldi-native-fbank
//===----------------------------------------------------------------------===//

struct ReferenceCase {
  const char *name;
  const char *file;
  FbankOptions options;
};

/// The cases of make_reference.py's CASES, with the same options.
std::vector<ReferenceCase> referenceCases() {
  std::vector<ReferenceCase> cases;
  FbankOptions defaults;
  cases.push_back({"tones16k-default", "tones16k.wav", defaults});
  FbankOptions options = defaults;
  options.numMelBins = 80;
  options.window = FbankWindow::Hamming;
  cases.push_back({"tones16k-80bins-hamming", "tones16k.wav", options});
  options = defaults;
  options.numMelBins = 40;
  options.window = FbankWindow::Hanning;
  options.useEnergy = true;
  cases.push_back({"tones16k-40bins-hanning-energy", "tones16k.wav", options});
  options = defaults;
  options.window = FbankWindow::Rectangular;
  options.usePower = false;
  options.roundToPowerOfTwo = false;
  options.lowFrequency = 64;
  options.highFrequency = -400;
  cases.push_back({"tones16k-rectangular-magnitude", "tones16k.wav", options});
  options = defaults;
  options.sampleRate = 8000;
  cases.push_back({"chirp8k-default", "chirp8k.flac", options});
  options.snipEdges = false;
  cases.push_back({"chirp8k-no-snip-edges", "chirp8k.flac", options});
  cases.push_back({"clipped16k-default", "clipped16k.flac", defaults});
  cases.push_back({"silence16k-default", "silence16k.wav", defaults});
  cases.push_back({"short16k-default", "short16k.wav", defaults});
  // Two frames, each reflected past an end of the signal.
  options = defaults;
  options.snipEdges = false;
  cases.push_back({"short16k-no-snip-edges", "short16k.wav", options});
  return cases;
}

/// Names the case in gtest's messages instead of dumping its bytes.
void PrintTo(const ReferenceCase &test, std::ostream *out) {
  *out << test.name;
}

class FbankReference : public ::testing::TestWithParam<ReferenceCase> {};

TEST_P(FbankReference, MatchesKaldiNativeFbank) {
  const ReferenceCase &test = GetParam();
  Audio audio = readOrDie(test.file, fileRate());
  ASSERT_EQ((float)audio.sampleRate, test.options.sampleRate);
  absl::StatusOr<std::unique_ptr<Fbank>> fbank = Fbank::create(test.options);
  ASSERT_TRUE(fbank.ok()) << fbank.status();
  Tensor features = (*fbank)->compute(audio.samples);
  Tensor expected = load(std::string("fbank-") + test.name + ".npy");
  ASSERT_EQ(features.shape(), expected.shape());
  float worst = 0;
  for (int64_t i = 0; i < expected.numElements(); ++i)
    worst = std::max(
        worst, std::abs(features.data<float>()[i] - expected.data<float>()[i]));
  EXPECT_LE(worst, kTolerance) << test.name;
  // Printed so that docs/audio.md can quote the margin.
  std::printf("%s: max |difference| %.3g over %lld values\n", test.name, worst,
              (long long)expected.numElements());
}

INSTANTIATE_TEST_SUITE_P(Audio, FbankReference,
                         ::testing::ValuesIn(referenceCases()),
                         [](const auto &info) {
                           std::string name = info.param.name;
                           for (char &c : name)
                             if (c == '-')
                               c = '_';
                           return name;
                         });

TEST(Fbank, FrameCountsFollowSnipEdges) {
  absl::StatusOr<std::unique_ptr<Fbank>> fbank = Fbank::create({});
  ASSERT_TRUE(fbank.ok());
  EXPECT_EQ((*fbank)->numFrames(0), 0);
  EXPECT_EQ((*fbank)->numFrames(399), 0);
  EXPECT_EQ((*fbank)->numFrames(400), 1);
  EXPECT_EQ((*fbank)->numFrames(559), 1);
  EXPECT_EQ((*fbank)->numFrames(560), 2);
  EXPECT_EQ((*fbank)->numFrames(16000), 98);
  EXPECT_EQ((*fbank)->compute(std::vector<float>(399, 0.5f)).shape(),
            (std::vector<int64_t>{0, 23}));
}

TEST(Fbank, SilenceIsTheLogFloor) {
  absl::StatusOr<std::unique_ptr<Fbank>> fbank = Fbank::create({});
  ASSERT_TRUE(fbank.ok());
  Tensor features = (*fbank)->compute(std::vector<float>(1600, 0.0f));
  ASSERT_EQ(features.numElements(), 8 * 23);
  for (int64_t i = 0; i < features.numElements(); ++i)
    ASSERT_EQ(features.data<float>()[i],
              std::log(std::numeric_limits<float>::epsilon()));
}

TEST(Fbank, DitherIsSeeded) {
  Audio audio = readOrDie("tones16k.wav");
  FbankOptions options;
  options.dither = 1.0f;
  options.ditherSeed = 7;
  auto first = Fbank::create(options);
  auto second = Fbank::create(options);
  options.ditherSeed = 8;
  auto other = Fbank::create(options);
  ASSERT_TRUE(first.ok() && second.ok() && other.ok());
  Tensor a = (*first)->compute(audio.samples);
  Tensor b = (*second)->compute(audio.samples);
  Tensor c = (*other)->compute(audio.samples);
  Tensor clean = load("fbank-tones16k-default.npy");
  ASSERT_EQ(a.shape(), clean.shape());
  float sameSeed = 0, otherSeed = 0, fromClean = 0;
  for (int64_t i = 0; i < a.numElements(); ++i) {
    sameSeed =
        std::max(sameSeed, std::abs(a.data<float>()[i] - b.data<float>()[i]));
    otherSeed =
        std::max(otherSeed, std::abs(a.data<float>()[i] - c.data<float>()[i]));
    fromClean = std::max(fromClean,
                         std::abs(a.data<float>()[i] - clean.data<float>()[i]));
  }
  EXPECT_EQ(sameSeed, 0.0f);
  EXPECT_GT(otherSeed, 0.0f);
  // Noise of 1 (in 16-bit units) on a signal of thousands moves the log
  // energies a little, not a lot.
  EXPECT_GT(fromClean, 0.0f);
  EXPECT_LT(fromClean, 0.5f);
}

TEST(Fbank, RejectsBadOptions) {
  auto expectError = [](const FbankOptions &options, const std::string &part) {
    absl::StatusOr<std::unique_ptr<Fbank>> fbank = Fbank::create(options);
    ASSERT_FALSE(fbank.ok()) << part;
    EXPECT_EQ(fbank.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_CONTAINS(fbank.status().message(), part);
  };
  FbankOptions options;
  options.numMelBins = 200;
  expectError(options, "covers no FFT bin");
  options = {};
  options.numMelBins = 2;
  expectError(options, "at least 3 mel bins");
  options = {};
  options.highFrequency = 9000;
  expectError(options, "frequency range");
  options = {};
  options.lowFrequency = 5000;
  options.highFrequency = 4000;
  expectError(options, "frequency range");
  options = {};
  options.frameLengthMs = 0.05f;
  expectError(options, "need a window of at least 2");
  options = {};
  options.sampleRate = 0;
  expectError(options, "sample rate must be positive");
}

//===----------------------------------------------------------------------===//
// Global mean/variance normalization
//===----------------------------------------------------------------------===//

Tensor features(std::vector<float> values, int64_t dim) {
  int64_t frames = (int64_t)values.size() / dim;
  return Tensor::of<float>(DType::f32, {frames, dim}, values);
}

TEST(FeatureStats, MeanAndStddevOverUtterances) {
  FeatureStats stats(2);
  ASSERT_TRUE(stats.accumulate(features({1, 10, 3, 10}, 2)).ok());
  ASSERT_TRUE(stats.accumulate(features({5, 10}, 2)).ok());
  EXPECT_EQ(stats.frames(), 3);
  // Column 0: 1, 3, 5 (mean 3, population variance 8/3); column 1 is
  // constant, so it is only shifted.
  EXPECT_DOUBLE_EQ(stats.mean()[0], 3.0);
  EXPECT_DOUBLE_EQ(stats.mean()[1], 10.0);
  EXPECT_NEAR(stats.stddev()[0], std::sqrt(8.0 / 3.0), 1e-12);
  EXPECT_EQ(stats.stddev()[1], 1.0);

  Tensor batch = features({1, 10, 5, 12}, 2);
  ASSERT_TRUE(stats.apply(batch).ok());
  EXPECT_FLOAT_EQ(batch.data<float>()[0], (float)(-2 / std::sqrt(8.0 / 3)));
  EXPECT_FLOAT_EQ(batch.data<float>()[1], 0.0f);
  EXPECT_FLOAT_EQ(batch.data<float>()[2], (float)(2 / std::sqrt(8.0 / 3)));
  EXPECT_FLOAT_EQ(batch.data<float>()[3], 2.0f);
}

TEST(FeatureStats, MergeEqualsAccumulatingEverything) {
  Tensor a = load("fbank-tones16k-default.npy");
  Tensor b = load("fbank-clipped16k-default.npy");
  FeatureStats all(23), first(23), second(23);
  ASSERT_TRUE(all.accumulate(a).ok() && all.accumulate(b).ok());
  ASSERT_TRUE(first.accumulate(a).ok() && second.accumulate(b).ok());
  ASSERT_TRUE(first.merge(second).ok());
  EXPECT_EQ(first.frames(), a.shape()[0] + b.shape()[0]);
  EXPECT_EQ(first.mean(), all.mean());
  EXPECT_EQ(first.stddev(), all.stddev());

  // Normalized with its own statistics, every column has mean 0, stddev 1.
  Tensor normalized = a;
  FeatureStats own(23);
  ASSERT_TRUE(own.accumulate(a).ok() && own.apply(normalized).ok());
  FeatureStats after(23);
  ASSERT_TRUE(after.accumulate(normalized).ok());
  for (int d = 0; d < 23; ++d) {
    EXPECT_NEAR(after.mean()[d], 0.0, 1e-5) << d;
    EXPECT_NEAR(after.stddev()[d], 1.0, 1e-5) << d;
  }
}

TEST(FeatureStats, RoundTripsThroughNpz) {
  FeatureStats stats(23);
  ASSERT_TRUE(stats.accumulate(load("fbank-tones16k-default.npy")).ok());
  std::string path = scratch("stats") + "/cmvn.npz";
  ASSERT_TRUE(stats.write(path).ok());
  absl::StatusOr<FeatureStats> read = FeatureStats::read(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->frames(), stats.frames());
  EXPECT_EQ(read->mean(), stats.mean());
  EXPECT_EQ(read->stddev(), stats.stddev());

  // Archives of other shapes are refused, naming the file and member.
  std::string bad = scratch("stats") + "/bad.npz";
  ASSERT_TRUE(
      writeNpz(bad, {{"frames", Tensor::of<int64_t>(DType::i64, {1}, {3})}})
          .ok());
  absl::StatusOr<FeatureStats> missing = FeatureStats::read(bad);
  ASSERT_FALSE(missing.ok());
  EXPECT_CONTAINS(missing.status().message(), bad + ": no member 'sum'");
  ASSERT_TRUE(
      writeNpz(bad, {{"frames", Tensor::of<int64_t>(DType::i64, {1}, {3})},
                     {"sum", Tensor(DType::f64, {4})},
                     {"sum_squares", Tensor(DType::f32, {4})}})
          .ok());
  absl::StatusOr<FeatureStats> wrong = FeatureStats::read(bad);
  ASSERT_FALSE(wrong.ok());
  EXPECT_CONTAINS(wrong.status().message(),
                  bad + ": member 'sum_squares' is f32 [4], expected f64 [4]");
}

TEST(FeatureStats, RejectsMismatchedFeatures) {
  FeatureStats stats(23);
  absl::Status status = stats.accumulate(features({1, 2, 3, 4}, 2));
  ASSERT_FALSE(status.ok());
  EXPECT_CONTAINS(status.message(), "expected f32 [frames, 23] features, got "
                                    "f32 [2, 2]");
  Tensor batch = features({1, 2}, 23 - 21);
  EXPECT_FALSE(FeatureStats(2).apply(batch).ok()); // no frames yet
  EXPECT_FALSE(stats.merge(FeatureStats(2)).ok());
}

} // namespace
