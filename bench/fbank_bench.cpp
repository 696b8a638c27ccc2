//===- fbank_bench.cpp - real-time factor of log-mel feature extraction ---===//
//
// Kaldi-compatible log-mel features (nn/Audio.h) of 10 s of audio: the
// 16 kHz fixture unittests/data/audio/tones16k.wav repeated 40 times, with
// compute-fbank-feats' defaults (23 bins) and with 80 bins, on 1 and 2
// threads (each thread its own Fbank). audio_s_per_s is seconds of audio
// per second of wall time (the inverse of the real-time factor), summed
// over threads. bench/fbank-knf-timing.py times kaldi-native-fbank on the
// same samples; docs/audio.md records both and the commands.
//
//   build/bin/nn-fbank-bench [--benchmark_*]
//
//===----------------------------------------------------------------------===//

#include "nn/Audio.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

namespace {

const std::vector<float> &tenSeconds() {
  static const std::vector<float> samples = [] {
    std::string path =
        std::string(NN_SOURCE_DIR) + "/unittests/data/audio/tones16k.wav";
    absl::StatusOr<nn::Audio> audio = nn::readAudio(path);
    if (!audio.ok()) {
      std::fprintf(stderr, "%s\n", audio.status().ToString().c_str());
      std::exit(1);
    }
    std::vector<float> repeated;
    for (int i = 0; i < 40; ++i)
      repeated.insert(repeated.end(), audio->samples.begin(),
                      audio->samples.end());
    return repeated;
  }();
  return samples;
}

void BM_Fbank(benchmark::State &state) {
  const std::vector<float> &samples = tenSeconds();
  nn::FbankOptions options;
  options.numMelBins = (int)state.range(0);
  absl::StatusOr<std::unique_ptr<nn::Fbank>> fbank = nn::Fbank::create(options);
  if (!fbank.ok()) {
    state.SkipWithError(fbank.status().ToString().c_str());
    return;
  }
  std::vector<float> out((*fbank)->numFrames((int64_t)samples.size()) *
                         (*fbank)->featureDim());
  for (auto _ : state) {
    (*fbank)->compute(samples, out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  double audioSeconds = (double)samples.size() / options.sampleRate;
  state.counters["audio_s_per_s"] = benchmark::Counter(
      audioSeconds * state.iterations(), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_Fbank)
    ->ArgName("bins")
    ->Arg(23)
    ->Arg(80)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
