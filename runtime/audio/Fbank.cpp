//===- Fbank.cpp - Kaldi-compatible log-mel filterbank features -----------===//
//
// Follows Kaldi's compute-fbank-feats step by step, in float as Kaldi does,
// so that the values agree with Kaldi, torchaudio.compliance.kaldi.fbank and
// kaldi-native-fbank to rounding: frames (snip_edges or reflected edges),
// dither, DC removal, raw log energy, pre-emphasis, window, zero padding,
// a real FFT (FFTW3, single precision), power spectrum, triangular mel
// filters in the mel domain (mel = 1127 ln(1 + f / 700)) over the FFT bins
// below Nyquist, log floored at the float epsilon.
//
//===----------------------------------------------------------------------===//

#include "nn/Audio.h"
#include "runtime/SplitMix64.h"

#include <fftw3.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>

namespace nn {

namespace {

/// FFTW's planner is not thread-safe (executing a plan is): every plan is
/// made and destroyed under this lock.
std::mutex &fftwPlannerMutex() {
  static std::mutex mutex;
  return mutex;
}

float melScale(float frequency) {
  return 1127.0f * logf(1.0f + frequency / 700.0f);
}

/// One triangular filter: weights of the FFT bins from `first` on.
struct MelFilter {
  int first = 0;
  std::vector<float> weights;
};

constexpr double kPi = 3.14159265358979323846;

} // namespace

struct Fbank::Impl {
  int windowSize = 0;
  int windowShift = 0;
  int paddedSize = 0;
  std::vector<float> window;
  std::vector<MelFilter> filters;
  float *fftIn = nullptr;
  fftwf_complex *fftOut = nullptr;
  fftwf_plan plan = nullptr;
  std::vector<float> frame;
  std::vector<float> spectrum;

  ~Impl() {
    std::lock_guard<std::mutex> lock(fftwPlannerMutex());
    if (plan)
      fftwf_destroy_plan(plan);
    fftwf_free(fftIn);
    fftwf_free(fftOut);
  }
};

absl::StatusOr<std::unique_ptr<Fbank>>
Fbank::create(const FbankOptions &options) {
  auto invalid = [](const std::string &message) {
    return absl::InvalidArgumentError("fbank options: " + message);
  };
  if (!(options.sampleRate > 0))
    return invalid("sample rate must be positive");
  // Kaldi's sizes in samples, computed as Kaldi computes them.
  int windowSize =
      (int)(options.sampleRate * 0.001 * (double)options.frameLengthMs);
  int windowShift =
      (int)(options.sampleRate * 0.001 * (double)options.frameShiftMs);
  if (windowSize < 2 || windowShift < 1)
    return invalid("frame length " + std::to_string(options.frameLengthMs) +
                   " ms and shift " + std::to_string(options.frameShiftMs) +
                   " ms give " + std::to_string(windowSize) + " and " +
                   std::to_string(windowShift) +
                   " samples; need a window of at least 2 and a shift of 1");
  if (windowSize > (1 << 20))
    return invalid("window of " + std::to_string(windowSize) +
                   " samples is too long");
  if (options.numMelBins < 3)
    return invalid("need at least 3 mel bins, got " +
                   std::to_string(options.numMelBins));
  if (options.dither < 0)
    return invalid("dither must not be negative");
  if (options.preemphasis < 0 || options.preemphasis > 1)
    return invalid("pre-emphasis must be in [0, 1]");

  int paddedSize = windowSize;
  if (options.roundToPowerOfTwo) {
    paddedSize = 1;
    while (paddedSize < windowSize)
      paddedSize *= 2;
  }

  // The mel filters, as Kaldi's MelBanks builds them.
  float nyquist = 0.5f * options.sampleRate;
  float lowFrequency = options.lowFrequency;
  float highFrequency = options.highFrequency > 0
                            ? options.highFrequency
                            : nyquist + options.highFrequency;
  if (lowFrequency < 0 || lowFrequency >= nyquist || highFrequency <= 0 ||
      highFrequency > nyquist || highFrequency <= lowFrequency)
    return invalid("frequency range [" + std::to_string(lowFrequency) + ", " +
                   std::to_string(highFrequency) +
                   "] Hz does not fit in (0, Nyquist = " +
                   std::to_string(nyquist) + " Hz]");
  int numFftBins = paddedSize / 2;
  float fftBinWidth = options.sampleRate / paddedSize;
  float melLow = melScale(lowFrequency);
  float melHigh = melScale(highFrequency);
  float melDelta = (melHigh - melLow) / (options.numMelBins + 1);

  auto fbank = std::unique_ptr<Fbank>(new Fbank());
  fbank->options_ = options;
  fbank->impl_ = std::make_unique<Impl>();
  Impl &impl = *fbank->impl_;
  impl.windowSize = windowSize;
  impl.windowShift = windowShift;
  impl.paddedSize = paddedSize;
  for (int bin = 0; bin < options.numMelBins; ++bin) {
    float left = melLow + bin * melDelta;
    float center = melLow + (bin + 1) * melDelta;
    float right = melLow + (bin + 2) * melDelta;
    MelFilter filter;
    filter.first = -1;
    for (int i = 0; i < numFftBins; ++i) {
      float mel = melScale(fftBinWidth * i);
      if (!(mel > left && mel < right))
        continue;
      float weight = mel <= center ? (mel - left) / (center - left)
                                   : (right - mel) / (right - center);
      if (filter.first < 0)
        filter.first = i;
      // The bins under a triangle are contiguous: fill any gap with 0.
      filter.weights.resize(i - filter.first);
      filter.weights.push_back(weight);
    }
    if (filter.first < 0)
      return invalid("mel bin " + std::to_string(bin) + " of " +
                     std::to_string(options.numMelBins) +
                     " covers no FFT bin (too many mel bins for a " +
                     std::to_string(paddedSize) + "-point FFT at " +
                     std::to_string(options.sampleRate) + " Hz)");
    impl.filters.push_back(std::move(filter));
  }

  impl.window.resize(windowSize);
  double a = 2 * kPi / (windowSize - 1);
  for (int i = 0; i < windowSize; ++i) {
    double hanning = 0.5 - 0.5 * cos(a * i);
    switch (options.window) {
    case FbankWindow::Povey:
      impl.window[i] = (float)pow(hanning, 0.85);
      break;
    case FbankWindow::Hamming:
      impl.window[i] = (float)(0.54 - 0.46 * cos(a * i));
      break;
    case FbankWindow::Hanning:
      impl.window[i] = (float)hanning;
      break;
    case FbankWindow::Rectangular:
      impl.window[i] = 1.0f;
      break;
    }
  }

  impl.frame.resize(windowSize);
  impl.spectrum.resize(numFftBins + 1);
  impl.fftIn = fftwf_alloc_real(paddedSize);
  impl.fftOut = fftwf_alloc_complex(numFftBins + 1);
  if (!impl.fftIn || !impl.fftOut)
    return absl::ResourceExhaustedError("fbank: cannot allocate FFT buffers");
  {
    // FFTW_ESTIMATE: no timing runs, so the plan (and the rounding) is the
    // same on every run.
    std::lock_guard<std::mutex> lock(fftwPlannerMutex());
    impl.plan = fftwf_plan_dft_r2c_1d(paddedSize, impl.fftIn, impl.fftOut,
                                      FFTW_ESTIMATE);
  }
  if (!impl.plan)
    return absl::InternalError("fbank: FFTW made no plan for size " +
                               std::to_string(paddedSize));
  return fbank;
}

Fbank::~Fbank() = default;

int Fbank::featureDim() const {
  return options_.numMelBins + (options_.useEnergy ? 1 : 0);
}

int64_t Fbank::numFrames(int64_t numSamples) const {
  if (options_.snipEdges) {
    if (numSamples < impl_->windowSize)
      return 0;
    return 1 + (numSamples - impl_->windowSize) / impl_->windowShift;
  }
  return (numSamples + impl_->windowShift / 2) / impl_->windowShift;
}

void Fbank::compute(absl::Span<const float> samples, float *out) {
  Impl &impl = *impl_;
  const FbankOptions &opts = options_;
  const int64_t numSamples = (int64_t)samples.size();
  const int64_t frames = numFrames(numSamples);
  const int dim = featureDim();
  const float epsilon = std::numeric_limits<float>::epsilon();
  runtime::SplitMix64 random{opts.ditherSeed};
  float *frame = impl.frame.data();
  for (int64_t f = 0; f < frames; ++f) {
    int64_t start =
        opts.snipEdges
            ? f * impl.windowShift
            : f * impl.windowShift + impl.windowShift / 2 - impl.windowSize / 2;
    for (int i = 0; i < impl.windowSize; ++i) {
      int64_t s = start + i;
      // Kaldi's reflection at the edges (snip_edges false only).
      while (s < 0 || s >= numSamples)
        s = s < 0 ? -s - 1 : 2 * numSamples - 1 - s;
      frame[i] = samples[s] * opts.sampleScale;
    }
    if (opts.dither != 0) {
      // Box-Muller on SplitMix64: the same noise on every platform.
      for (int i = 0; i < impl.windowSize; ++i) {
        double u1 = random.uniform(), u2 = random.uniform();
        frame[i] +=
            opts.dither * (float)(sqrt(-2 * log(u1)) * cos(2 * kPi * u2));
      }
    }
    if (opts.removeDcOffset) {
      float sum = 0;
      for (int i = 0; i < impl.windowSize; ++i)
        sum += frame[i];
      float mean = sum / impl.windowSize;
      for (int i = 0; i < impl.windowSize; ++i)
        frame[i] -= mean;
    }
    float logEnergy = 0;
    if (opts.useEnergy) {
      float energy = 0;
      for (int i = 0; i < impl.windowSize; ++i)
        energy += frame[i] * frame[i];
      logEnergy = logf(std::max(energy, epsilon));
      if (opts.energyFloor > 0 && logEnergy < logf(opts.energyFloor))
        logEnergy = logf(opts.energyFloor);
    }
    if (opts.preemphasis != 0) {
      for (int i = impl.windowSize - 1; i > 0; --i)
        frame[i] -= opts.preemphasis * frame[i - 1];
      frame[0] -= opts.preemphasis * frame[0];
    }
    for (int i = 0; i < impl.windowSize; ++i)
      impl.fftIn[i] = frame[i] * impl.window[i];
    std::memset(impl.fftIn + impl.windowSize, 0,
                sizeof(float) * (impl.paddedSize - impl.windowSize));
    fftwf_execute(impl.plan);
    const int numBins = impl.paddedSize / 2 + 1;
    for (int k = 0; k < numBins; ++k) {
      float re = impl.fftOut[k][0], im = impl.fftOut[k][1];
      float power = re * re + im * im;
      impl.spectrum[k] = opts.usePower ? power : sqrtf(power);
    }
    float *row = out + f * dim;
    if (opts.useEnergy)
      *row++ = logEnergy;
    for (const MelFilter &filter : impl.filters) {
      float energy = 0;
      const float *spectrum = impl.spectrum.data() + filter.first;
      for (size_t i = 0; i < filter.weights.size(); ++i)
        energy += filter.weights[i] * spectrum[i];
      *row++ = opts.useLogFbank ? logf(std::max(energy, epsilon)) : energy;
    }
  }
}

Tensor Fbank::compute(absl::Span<const float> samples) {
  Tensor features(DType::f32,
                  {numFrames((int64_t)samples.size()), (int64_t)featureDim()});
  compute(samples, features.data<float>());
  return features;
}

} // namespace nn
