//===- AudioFile.cpp - WAV/FLAC files through libsndfile, resampling ------===//
//
// libsndfile reads every container and encoding a speech corpus ships in
// (WAV PCM/float, FLAC, ...) and scales integer samples to [-1, 1];
// libsoxr brings a file to the model's rate and changes speeds. Every
// error names the file.
//
//===----------------------------------------------------------------------===//

#include "nn/Audio.h"

#include <sndfile.h>
#include <soxr.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <sys/stat.h>

namespace nn {

namespace {

/// Closes a libsndfile handle when the reader returns.
struct SndFileCloser {
  void operator()(SNDFILE *file) const { sf_close(file); }
};

} // namespace

namespace {

/// `samples` converted at `ratio` (output rate / input rate) by libsoxr:
/// 20-bit precision (its "high quality": aliases below -120 dB, past what
/// 16-bit audio holds), linear phase, the band kept flat to 97% of the
/// lower Nyquist frequency (soxr's default, 91.3%, would dim the top mel
/// bins; flatter costs filter length, and time on short utterances,
/// docs/audio.md). `conversion` says what it does in errors ("resample
/// from 22050 Hz to 16000 Hz").
absl::StatusOr<std::vector<float>> convert(absl::Span<const float> samples,
                                           double ratio,
                                           const std::string &what,
                                           const std::string &conversion) {
  if (!(ratio > 0) || !std::isfinite(ratio))
    return absl::InvalidArgumentError(what + ": cannot " + conversion);
  soxr_quality_spec_t quality = soxr_quality_spec(SOXR_HQ, 0);
  quality.passband_end = 0.97;
  soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
  // One thread: import runs one conversion per worker thread already.
  soxr_runtime_spec_t runtime = soxr_runtime_spec(1);
  // One call converts the whole signal, so the filter's delay is flushed
  // and the output has the expected length.
  std::vector<float> out((size_t)std::ceil((double)samples.size() * ratio) +
                         16);
  size_t used = 0, made = 0;
  if (soxr_error_t error =
          soxr_oneshot(1.0, ratio, 1, samples.data(), samples.size(), &used,
                       out.data(), out.size(), &made, &io, &quality, &runtime))
    return absl::InternalError(what + ": failed to " + conversion + ": " +
                               error);
  if (used != samples.size())
    return absl::InternalError(what + ": failed to " + conversion +
                               ": libsoxr took " + std::to_string(used) +
                               " of " + std::to_string(samples.size()) +
                               " samples");
  out.resize(made);
  return out;
}

} // namespace

absl::StatusOr<std::vector<float>>
resampleAudio(absl::Span<const float> samples, int fromRate, int toRate,
              const std::string &what) {
  if (fromRate <= 0 || toRate <= 0)
    return absl::InvalidArgumentError(
        what + ": cannot resample from " + std::to_string(fromRate) +
        " Hz to " + std::to_string(toRate) + " Hz (rates must be positive)");
  if (fromRate == toRate)
    return std::vector<float>(samples.begin(), samples.end());
  return convert(samples, (double)toRate / fromRate, what,
                 "resample from " + std::to_string(fromRate) + " Hz to " +
                     std::to_string(toRate) + " Hz");
}

absl::StatusOr<std::vector<float>> changeSpeed(absl::Span<const float> samples,
                                               double factor,
                                               const std::string &what) {
  if (!(factor >= 0.5 && factor <= 2.0))
    return absl::InvalidArgumentError(what + ": speed factor " +
                                      std::to_string(factor) +
                                      " is outside [0.5, 2]");
  if (factor == 1.0)
    return std::vector<float>(samples.begin(), samples.end());
  return convert(samples, 1.0 / factor, what,
                 "change the speed by " + std::to_string(factor));
}

absl::StatusOr<Audio> readAudio(const std::string &path,
                                const AudioReadOptions &options) {
  // libsndfile says "System error" for a missing file; stat names the cause.
  struct stat info;
  if (stat(path.c_str(), &info) != 0)
    return (errno == ENOENT ? absl::NotFoundError : absl::InvalidArgumentError)(
        path + ": cannot open audio file: " + std::strerror(errno));
  SF_INFO format = {};
  std::unique_ptr<SNDFILE, SndFileCloser> file(
      sf_open(path.c_str(), SFM_READ, &format));
  if (!file)
    return absl::InvalidArgumentError(
        path + ": cannot read audio file: " + sf_strerror(nullptr));
  if (format.channels <= 0 || format.samplerate <= 0 || format.frames < 0)
    return absl::InvalidArgumentError(path + ": malformed audio header");
  int channel = options.channel;
  if (channel < 0 && format.channels != 1)
    return absl::InvalidArgumentError(
        path + ": has " + std::to_string(format.channels) +
        " channels; only mono audio is read unless a channel is chosen");
  if (channel >= format.channels)
    return absl::InvalidArgumentError(
        path + ": channel " + std::to_string(channel) +
        " asked for, the file has " + std::to_string(format.channels));
  if (channel < 0)
    channel = 0;
  if (options.sampleRate > 0 && format.samplerate != options.sampleRate &&
      !options.resample)
    return absl::InvalidArgumentError(
        path + ": sample rate " + std::to_string(format.samplerate) +
        " Hz, expected " + std::to_string(options.sampleRate) +
        " Hz (resampling is off)");
  // Sizes are 32-bit further on; a header claiming more is refused before
  // anything is allocated (the reserve below is capped as well, since a
  // header can lie about a compressed file's length).
  const sf_count_t maxFrames =
      std::numeric_limits<int32_t>::max() / format.channels;
  if (format.frames > maxFrames)
    return absl::InvalidArgumentError(path + ": " +
                                      std::to_string(format.frames) +
                                      " frames, more than this reader takes (" +
                                      std::to_string(maxFrames) + ")");

  std::vector<float> interleaved;
  interleaved.reserve((size_t)std::min<sf_count_t>(format.frames, 1 << 22) *
                      format.channels);
  std::vector<float> block(4096 * (size_t)format.channels);
  while (true) {
    sf_count_t got = sf_readf_float(file.get(), block.data(), 4096);
    if (got <= 0)
      break;
    interleaved.insert(interleaved.end(), block.begin(),
                       block.begin() + got * format.channels);
    if ((sf_count_t)interleaved.size() > maxFrames * format.channels)
      return absl::InvalidArgumentError(path + ": more than " +
                                        std::to_string(maxFrames) +
                                        " frames, more than this reader takes");
  }
  if (sf_error(file.get()) != SF_ERR_NO_ERROR)
    return absl::InvalidArgumentError(
        path + ": error reading samples: " + sf_strerror(file.get()));

  Audio audio;
  audio.sampleRate = format.samplerate;
  size_t frames = interleaved.size() / format.channels;
  if (format.channels == 1) {
    audio.samples = std::move(interleaved);
  } else {
    audio.samples.resize(frames);
    for (size_t i = 0; i < frames; ++i)
      audio.samples[i] = interleaved[i * format.channels + channel];
  }
  if (options.sampleRate > 0 && audio.sampleRate != options.sampleRate) {
    absl::StatusOr<std::vector<float>> resampled = resampleAudio(
        audio.samples, audio.sampleRate, options.sampleRate, path);
    if (!resampled.ok())
      return resampled.status();
    audio.samples = std::move(*resampled);
    audio.sampleRate = options.sampleRate;
  }
  return audio;
}

} // namespace nn
