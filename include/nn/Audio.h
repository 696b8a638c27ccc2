//===- nn/Audio.h - audio files and Kaldi-compatible log-mel features -----===//
//
// What a speech user brings: WAV and FLAC files (read with libsndfile,
// resampled with libsoxr when the file's rate differs from the
// model's), turned into log-mel filterbank features the way Kaldi's
// `compute-fbank-feats` computes them, and optionally normalized with global
// mean/variance statistics gathered over a set of utterances. Errors are
// absl::Status values naming the file and the cause. docs/audio.md gives the
// conventions and the tolerance reached against the reference frames.
//
//===----------------------------------------------------------------------===//

#ifndef NN_AUDIO_H
#define NN_AUDIO_H

#include "nn/Runtime.h"

#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nn {

/// How readAudio turns a file into the samples a model expects.
struct AudioReadOptions {
  /// The rate the samples are returned at, in Hz; 0 keeps the file's rate.
  int sampleRate = 16000;
  /// A file at another rate is resampled (resampleAudio) when true, and is an
  /// error naming both rates when false.
  bool resample = true;
  /// The channel returned from a multi-channel file, counted from 0; -1
  /// means the file must be mono, and a multi-channel file is an error.
  int channel = -1;
};

/// Samples of one channel, as floats in [-1, 1] (libsndfile's scaling: a
/// 16-bit sample s reads as s / 32768).
struct Audio {
  int sampleRate = 0;
  std::vector<float> samples;
};

/// Reads a WAV or FLAC file (any format libsndfile reads). Errors name the
/// file: NotFound for a missing file, InvalidArgument for one libsndfile
/// cannot read (with its reason), a multi-channel file without a chosen
/// channel, a channel out of range or a rate mismatch with resampling off.
absl::StatusOr<Audio> readAudio(const std::string &path,
                                const AudioReadOptions &options = {});

/// Resamples `samples` from `fromRate` to `toRate` Hz with libsoxr (20-bit
/// precision, linear phase, flat to 97% of the lower Nyquist frequency);
/// `what` names the source in errors.
absl::StatusOr<std::vector<float>>
resampleAudio(absl::Span<const float> samples, int fromRate, int toRate,
              const std::string &what);

/// Speed perturbation (Kaldi's `sox speed`, Ko et al., 2015): `samples`
/// played `factor` times as fast at the same rate, so about
/// `samples.size() / factor` samples, tempo and pitch both scaled;
/// resampleAudio's converter at ratio 1 / factor. `factor` in
/// [0.5, 2]; 1 returns the samples unchanged. `what` names the source in
/// errors.
absl::StatusOr<std::vector<float>> changeSpeed(absl::Span<const float> samples,
                                               double factor,
                                               const std::string &what);

/// The analysis window applied to each frame (Kaldi's names).
enum class FbankWindow { Povey, Hamming, Hanning, Rectangular };

/// Options of the log-mel filterbank; the defaults are those of Kaldi's
/// `compute-fbank-feats` except dither, which is off unless asked for.
struct FbankOptions {
  /// The rate the samples are at, in Hz.
  float sampleRate = 16000.0f;
  float frameLengthMs = 25.0f;
  float frameShiftMs = 10.0f;
  /// Only whole frames: a signal shorter than one window has no frames.
  /// When false, Kaldi's reflected edges and centred frames are used.
  bool snipEdges = true;
  /// Standard deviation of Gaussian noise added to every sample (in the
  /// scaled units, see sampleScale); 0 turns it off.
  float dither = 0.0f;
  /// Seeds the dither noise; the same seed gives the same features.
  uint64_t ditherSeed = 0;
  bool removeDcOffset = true;
  float preemphasis = 0.97f;
  FbankWindow window = FbankWindow::Povey;
  /// Zero-pads each frame to a power of two for the FFT (400 -> 512).
  bool roundToPowerOfTwo = true;
  int numMelBins = 23;
  /// Lowest and highest filter edges in Hz; a highFrequency <= 0 is an
  /// offset from the Nyquist frequency (0 means Nyquist).
  float lowFrequency = 20.0f;
  float highFrequency = 0.0f;
  /// Power spectrum (true) or magnitude spectrum (false).
  bool usePower = true;
  /// Natural log of the mel energies, floored at the float epsilon.
  bool useLogFbank = true;
  /// Prepends the log energy of each frame (after DC removal, before
  /// pre-emphasis and window, as Kaldi's raw_energy), floored at
  /// energyFloor when that is above 0.
  bool useEnergy = false;
  float energyFloor = 0.0f;
  /// Multiplies each sample before anything else. Kaldi reads 16-bit
  /// integers, so samples in [-1, 1] from readAudio need 32768 to give
  /// Kaldi's values; use 1 for samples already in integer units.
  float sampleScale = 32768.0f;
};

/// Computes log-mel filterbank frames with fixed options. The FFT plan,
/// window and mel banks are built once; one object must not be used from
/// two threads at once (each thread makes its own).
class Fbank {
public:
  /// Checks the options (rates, frame sizes, the frequency range, bins
  /// with no FFT bin under them) and builds the tables.
  static absl::StatusOr<std::unique_ptr<Fbank>>
  create(const FbankOptions &options);
  ~Fbank();
  Fbank(const Fbank &) = delete;
  Fbank &operator=(const Fbank &) = delete;

  const FbankOptions &options() const { return options_; }
  /// Columns of each frame: numMelBins, plus one with useEnergy.
  int featureDim() const;
  /// Frames computed from `numSamples` samples.
  int64_t numFrames(int64_t numSamples) const;
  /// Computes numFrames(samples.size()) frames into `out`, row-major
  /// [frames, featureDim()].
  void compute(absl::Span<const float> samples, float *out);
  /// The frames as an f32 tensor [frames, featureDim()].
  Tensor compute(absl::Span<const float> samples);

private:
  Fbank() = default;
  struct Impl;
  FbankOptions options_;
  std::unique_ptr<Impl> impl_;
};

/// Global mean and variance of features, accumulated over utterances and
/// stored as sums (f8) so that statistics from several sets can be merged.
class FeatureStats {
public:
  explicit FeatureStats(int dim = 0);
  int dim() const { return (int)sum_.size(); }
  int64_t frames() const { return frames_; }
  /// Adds the rows of an f32 [frames, dim] tensor; an error names the
  /// shapes when they do not fit.
  absl::Status accumulate(const Tensor &features);
  /// Adds another set's sums (same dim).
  absl::Status merge(const FeatureStats &other);
  /// The mean of each column.
  std::vector<double> mean() const;
  /// The population standard deviation of each column; a column whose
  /// variance is below 1e-20 (constant) reports 1, so normalizing it only
  /// subtracts the mean.
  std::vector<double> stddev() const;
  /// Normalizes an f32 [frames, dim] tensor in place: (x - mean) / stddev.
  absl::Status apply(Tensor &features) const;

  /// Writes the sums as an .npz archive: "frames" (i8 [1]), "sum" and
  /// "sum_squares" (f8 [dim]).
  absl::Status write(const std::string &path) const;
  /// Reads an archive written by write; errors name the file and member.
  static absl::StatusOr<FeatureStats> read(const std::string &path);

private:
  int64_t frames_ = 0;
  std::vector<double> sum_;
  std::vector<double> sumSquares_;
};

} // namespace nn

#endif // NN_AUDIO_H
