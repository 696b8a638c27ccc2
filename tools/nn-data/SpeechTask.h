//===- SpeechTask.h - a spoken-word recognition task, synthesized -*- C++
//-*-===//
//
// A small, real, audio-based recognition task made on the machine itself:
// eSpeak NG speaks random strings of words from a small vocabulary with
// many voices (an English accent and a voice variant), speaking rates and
// pitches, optionally with additive noise. The utterances go to WAV files
// and Kaldi-style data directories (wav.scp, text, utt2spk, spk2utt), one
// per split, where dev and test are spoken by voice variants the training
// set never heard. Everything follows from the seed: the same options
// write the same bytes. docs/speech-task.md describes the task.
//
//===----------------------------------------------------------------------===//

#ifndef NN_TOOLS_NN_DATA_SPEECHTASK_H
#define NN_TOOLS_NN_DATA_SPEECHTASK_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace nn::data {

/// What to synthesize.
struct SpeechTaskOptions {
  /// "digits" (zero .. nine) or "words" (a few hundred common words).
  std::string vocabulary = "digits";
  int64_t trainUtterances = 400;
  int64_t devUtterances = 50;
  int64_t testUtterances = 50;
  /// Voice variants reserved for dev and for test (never used in train).
  int32_t devVariants = 4;
  int32_t testVariants = 4;
  /// Words per utterance, uniform in [minWords, maxWords].
  int32_t minWords = 1;
  int32_t maxWords = 5;
  /// Speaking rate (words per minute) and pitch (0-99), uniform in range.
  int32_t minRate = 130, maxRate = 210;
  int32_t minPitch = 30, maxPitch = 70;
  /// Additive white noise at an SNR uniform in [minSnrDb, maxSnrDb]; off
  /// when `noise` is false.
  bool noise = false;
  double minSnrDb = 10, maxSnrDb = 30;
  uint64_t seed = 0;
};

/// The words of a vocabulary, or InvalidArgument naming the known ones.
absl::StatusOr<std::vector<std::string>>
speechTaskWords(const std::string &vocabulary);

/// The English accents (eSpeak NG language voices) utterances are spoken
/// in; every split uses all of them.
const std::vector<std::string> &speechTaskAccents();

/// The voice variants speakers are drawn from; the splits partition them.
const std::vector<std::string> &speechTaskVariants();

/// One synthesized utterance, as listed in its split's directory.
struct SpeechUtterance {
  std::string id;
  std::string split;
  /// The speaker: the voice variant (Kaldi's utt2spk).
  std::string speaker;
  std::string accent;
  std::vector<std::string> words;
  int32_t rate = 0, pitch = 0;
  /// NaN without noise.
  double snrDb = 0;
};

/// Synthesizes the task into `dir`: dir/wav/<id>.wav (16-bit PCM, mono,
/// eSpeak NG's 22050 Hz), dir/{train,dev,test}/{wav.scp,text,utt2spk,
/// spk2utt} with absolute WAV paths and lines sorted by id,
/// dir/task.json (the options, the variants of each split, the counts) and
/// dir/tokens.txt (the character vocabulary of all the task's words).
/// `progress`, if set, is called after each utterance with (done, total).
/// Errors name what failed: bad options, an unwritable directory, a voice
/// eSpeak NG does not have. Each utterance is spoken in a forked child
/// process (SpeechTask.cpp says why): call this from a process that runs
/// no other threads at the time, as nn-data does.
absl::StatusOr<std::vector<SpeechUtterance>> synthesizeSpeechTask(
    const std::string &dir, const SpeechTaskOptions &options,
    const std::function<void(int64_t, int64_t)> &progress = {});

} // namespace nn::data

#endif // NN_TOOLS_NN_DATA_SPEECHTASK_H
