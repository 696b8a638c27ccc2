//===- import_bench.cpp - nn-data import throughput and resampling --------===//
//
// BM_Import: the spoken-word task's training audio (eSpeak NG at 22,050 Hz,
// synthesized once into a temporary folder) imported as nn-data import
// does it (read, resample, log-mel features, labels; importSources into a
// work folder, as the tool runs it), at the audio's own rate and resampled
// to 16 kHz, on 1 and 2 worker threads. utterances_per_s and audio_s_per_s
// are the throughput.
//
// BM_Resample: 22,050 Hz noise to 16 kHz through nn's resampler (libsoxr,
// nn::resampleAudio; 1 s and 10 s) and, when libsamplerate is installed,
// 10 s through its best sinc converter, which nn used before (docs/audio.md
// records the figures and the commands).
//
//   build/bin/nn-import-bench [--benchmark_*]
//
//===----------------------------------------------------------------------===//

#include "tools/nn-data/KaldiImport.h"
#include "tools/nn-data/SpeechTask.h"

#include "llvm/Support/FileSystem.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <random>

#ifdef NN_BENCH_LIBSAMPLERATE
#include <samplerate.h>
#endif

namespace {

/// The synthesized task, removed at exit.
struct Task {
  std::string root;
  double audioSeconds = 0;
  int64_t utterances = 0;
  Task() {
    llvm::SmallString<128> path;
    if (llvm::sys::fs::createUniqueDirectory("nn-import-bench", path)) {
      std::fprintf(stderr, "cannot create a temporary folder\n");
      std::exit(1);
    }
    root = path.str().str();
    nn::data::SpeechTaskOptions options;
    options.trainUtterances = 200;
    options.devUtterances = options.testUtterances = 1;
    options.seed = 1;
    auto made = nn::data::synthesizeSpeechTask(root + "/task", options);
    if (!made.ok()) {
      std::fprintf(stderr, "%s\n", made.status().ToString().c_str());
      std::exit(1);
    }
    auto imported = nn::data::importKaldiDirectory(root + "/task/train", {});
    if (!imported.ok()) {
      std::fprintf(stderr, "%s\n", imported.status().ToString().c_str());
      std::exit(1);
    }
    for (const nn::data::ImportedUtterance &u : imported->utterances)
      audioSeconds += 0.01 * (double)u.arrays.at("features").shape()[0];
    utterances = (int64_t)imported->utterances.size();
  }
  ~Task() { llvm::sys::fs::remove_directories(root); }
};

const Task &task() {
  static const Task instance;
  return instance;
}

void BM_Import(benchmark::State &state) {
  const Task &t = task();
  nn::data::KaldiImportOptions options;
  options.sampleRate = (int)state.range(0);
  options.threads = (int)state.range(1);
  options.numMelBins = 80;
  options.workDir = t.root + "/work";
  for (auto _ : state) {
    // A fresh import each time: nothing reused from the last one.
    llvm::sys::fs::remove_directories(options.workDir);
    auto imported =
        nn::data::importKaldiDirectory(t.root + "/task/train", options);
    if (!imported.ok() || imported->imported != t.utterances) {
      state.SkipWithError("the import failed");
      return;
    }
  }
  llvm::sys::fs::remove_directories(options.workDir);
  state.counters["utterances_per_s"] = benchmark::Counter(
      (double)t.utterances * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["audio_s_per_s"] = benchmark::Counter(
      t.audioSeconds * state.iterations(), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_Import)
    ->ArgNames({"rate", "threads"})
    ->Args({22050, 1})
    ->Args({22050, 2})
    ->Args({16000, 1})
    ->Args({16000, 2})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

const std::vector<float> &tenSecondsOfNoise() {
  static const std::vector<float> samples = [] {
    std::mt19937 generator(1);
    std::normal_distribution<float> noise(0.0f, 0.1f);
    std::vector<float> s(220500);
    for (float &x : s)
      x = noise(generator);
    return s;
  }();
  return samples;
}

/// On the first `seconds` of the noise: a short utterance pays the
/// filter's flush once per second of audio, a long one once per ten.
void BM_Resample_Soxr(benchmark::State &state) {
  int64_t seconds = state.range(0);
  absl::Span<const float> in =
      absl::MakeConstSpan(tenSecondsOfNoise()).subspan(0, 22050 * seconds);
  for (auto _ : state) {
    auto out = nn::resampleAudio(in, 22050, 16000, "noise");
    benchmark::DoNotOptimize(out);
  }
  state.counters["audio_s_per_s"] = benchmark::Counter(
      (double)seconds * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Resample_Soxr)
    ->ArgName("seconds")
    ->Arg(1)
    ->Arg(10)
    ->Unit(benchmark::kMillisecond);

#ifdef NN_BENCH_LIBSAMPLERATE
void BM_Resample_LibsamplerateBest(benchmark::State &state) {
  const std::vector<float> &in = tenSecondsOfNoise();
  std::vector<float> out(in.size());
  for (auto _ : state) {
    SRC_DATA data = {};
    data.data_in = in.data();
    data.input_frames = (long)in.size();
    data.data_out = out.data();
    data.output_frames = (long)out.size();
    data.src_ratio = 16000.0 / 22050.0;
    data.end_of_input = 1;
    if (src_simple(&data, SRC_SINC_BEST_QUALITY, 1) != 0) {
      state.SkipWithError("libsamplerate failed");
      return;
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["audio_s_per_s"] = benchmark::Counter(
      10.0 * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Resample_LibsamplerateBest)->Unit(benchmark::kMillisecond);
#endif

} // namespace

BENCHMARK_MAIN();
