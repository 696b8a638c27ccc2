//===- KaldiImport.h - Kaldi data directories to dataset arrays -*- C++ -*-===//
//
// `nn-data import`: a Kaldi-style data directory (wav.scp, text, optional
// segments) becomes per-utterance arrays of nn's dataset format: log-mel
// features (nn/Audio.h, Kaldi's conventions) and the transcript's labels
// through a character vocabulary or a BPE model (Bpe.h). Every bad entry is
// reported with its file and line and the utterance is left out; the summary
// counts them by reason. Nothing of a bad utterance reaches the arrays.
//
//===----------------------------------------------------------------------===//

#ifndef NN_TOOLS_NN_DATA_KALDIIMPORT_H
#define NN_TOOLS_NN_DATA_KALDIIMPORT_H

#include "tools/nn-data/ImportWork.h"

#include "nn/Audio.h"
#include "nn/Dataset.h"

#include "absl/status/statusor.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nn::data {

/// The word separator of character vocabularies: SentencePiece's "▁", so
/// that nn::Vocabulary splits label sequences into words.
inline constexpr const char *kWordSeparator = "\xE2\x96\x81";
/// Class 0 of a character vocabulary, the CTC blank.
inline constexpr const char *kBlankToken = "<blank>";

/// The character vocabulary of `transcripts`: the blank, the word
/// separator, then every character (UTF-8 code point) seen, in byte order.
std::vector<std::string>
characterVocabulary(const std::vector<std::string> &transcripts);

/// The labels spelling `transcript` (words separated by single spaces)
/// with `tokens` (a character vocabulary): each word's characters, with
/// the separator between words. InvalidArgument naming the character when
/// one is not a token.
absl::StatusOr<std::vector<int32_t>>
characterLabels(const std::string &transcript,
                const std::vector<std::string> &tokens);

/// `text`'s words (split at spaces, tabs, line breaks) joined by single
/// spaces: a transcript as the vocabularies read it.
std::string normalizeSpaces(const std::string &text);

/// The UTF-8 code points of `text` as strings; nullopt when it is not
/// valid UTF-8.
std::optional<std::vector<std::string>> codePoints(const std::string &text);

/// Labels other than characters (a BPE model, Bpe.h): the vocabulary's
/// tokens and the labels of one transcript (InvalidArgument naming what
/// cannot be encoded).
struct TranscriptCoder {
  std::vector<std::string> tokens;
  std::function<absl::StatusOr<std::vector<int32_t>>(const std::string &)>
      encode;
};

/// A speed factor as ids and messages spell it ("0.9", "1.1").
std::string speedText(double speed);
/// The id of utterance `id` played `speed` times as fast: "sp0.9-<id>".
std::string speedPerturbedId(const std::string &id, double speed);
/// InvalidArgument unless `speeds` is a nonempty list of distinct factors
/// in [0.5, 2].
absl::Status checkSpeeds(const std::vector<double> &speeds);

struct KaldiImportOptions {
  /// Audio is resampled to this rate, and features computed at it.
  int sampleRate = 16000;
  int numMelBins = 80;
  /// The vocabulary's tokens (line i = class i); empty: built from the
  /// transcripts (characterVocabulary).
  std::vector<std::string> tokens;
  /// Worker threads reading audio and computing features (>= 1).
  int threads = 1;
  /// Speed perturbation: each utterance once per factor (in [0.5, 2],
  /// distinct), its audio played that much faster (nn::changeSpeed) after
  /// resampling and segmenting, with the same labels. Factor 1 keeps the
  /// id; another prefixes it with "sp<factor>-" (Kaldi's
  /// perturb_data_dir_speed.sh: "sp0.9-utt1"). Copies follow their
  /// utterance, in the order given.
  std::vector<double> speeds{1.0};
  /// When set, replaces `tokens` and the character labels: called once
  /// with the transcripts that are accepted (to train on, or ignored), in
  /// the text file's order; its error ends the import.
  std::function<absl::StatusOr<TranscriptCoder>(
      const std::vector<std::string> &transcripts)>
      coder;
  /// When set, the import's work folder (ImportWork.h): each finished
  /// chunk of utterances is written there instead of kept in memory, and
  /// the chunks a previous run of the same import finished are reused.
  std::string workDir;
  /// Jobs per chunk of the work folder (>= 1).
  size_t chunkJobs = kImportChunkJobs;
};

struct KaldiImport {
  /// In the corpus's order: without a work folder, the utterances;
  /// with one, the folder and the ids each of its chunks holds
  /// (ImportWork::read).
  std::vector<ImportedUtterance> utterances;
  std::optional<ImportWork> work;
  std::vector<std::vector<std::string>> chunkIds;
  /// Utterances imported (in `utterances` or the chunks).
  int64_t imported = 0;
  /// Jobs whose chunk a previous run had finished.
  int64_t reused = 0;
  std::vector<std::string> tokens;
  /// Left-out utterances by reason ("unreadable audio", ...).
  std::map<std::string, int64_t> skipped;
  /// One line per left-out utterance: "FILE:LINE: what is wrong".
  std::vector<std::string> problems;
};

/// How far a segment or cut may end past its recording's audio, in
/// seconds (the end is then cut to the audio's): Lhotse's default duration
/// mismatch tolerance (0.025 s, lhotse/audio/utils.py), which covers
/// rounded times and the sample resampling may take off. Kaldi's
/// extract-segments allows 0.5 s (--max-overshoot), which would hide a
/// wrong segments file.
inline constexpr double kSpanOvershootSeconds = 0.025;

/// A part of a recording, in seconds from its start; end -1: to its end.
struct AudioSpan {
  double start = 0, end = -1;
};

/// One utterance as a corpus format describes it, before its audio is
/// read: what every importer (Kaldi directories, Lhotse manifests) hands
/// to importSources.
struct UtteranceSource {
  std::string id;
  /// Words separated by single spaces, valid UTF-8, not empty.
  std::string transcript;
  /// "FILE:LINE" naming the utterance in messages.
  std::string where;
  /// The audio file, and "FILE:LINE" of the entry that names it.
  std::string path, audioWhere;
  std::optional<AudioSpan> span;
  /// The channel read; -1: the file must be mono.
  int channel = -1;
  /// Set: the utterance is skipped with this message ("FILE:LINE: ...")
  /// and counted under `reason`, after its transcript has joined the
  /// vocabulary.
  std::string problem, reason;
};

/// What a corpus format yields: the utterances whose transcripts are
/// accepted, in the corpus's order, and the entries already left out.
struct ImportSources {
  std::vector<UtteranceSource> utterances;
  std::vector<std::string> problems;
  std::map<std::string, int64_t> skipped;

  void skip(const std::string &problem, const std::string &reason) {
    problems.push_back(problem);
    ++skipped[reason];
  }
};

/// Threads and speed factors checked; what every import checks first.
absl::Status checkImportOptions(const KaldiImportOptions &options);

/// The common part of every import: the vocabulary (or `options.coder`)
/// from the transcripts, labels, speed-perturbed copies, audio read on
/// `options.threads` workers, features. `progress` as below.
absl::StatusOr<KaldiImport>
importSources(ImportSources sources, const KaldiImportOptions &options,
              const std::function<void(int64_t, int64_t)> &progress = {});

/// Imports the Kaldi data directory `dir`. Errors (not skips) are a
/// directory without wav.scp or text, unreadable list files and bad
/// options; `progress` is called with (done, total) as audio is read.
absl::StatusOr<KaldiImport> importKaldiDirectory(
    const std::string &dir, const KaldiImportOptions &options,
    const std::function<void(int64_t, int64_t)> &progress = {});

} // namespace nn::data

#endif // NN_TOOLS_NN_DATA_KALDIIMPORT_H
