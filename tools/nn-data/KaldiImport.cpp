//===- KaldiImport.cpp - Kaldi data directories to dataset arrays ---------===//

#include "tools/nn-data/KaldiImport.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

namespace nn::data {
namespace {

/// A line of a Kaldi table: its key, the rest, and where it is.
struct TableLine {
  std::string key, rest;
  int64_t line = 0;
};

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/// The lines of `path` split at the first run of spaces or tabs; blank
/// lines are skipped. NotFound when the file is missing and `required`.
absl::StatusOr<std::optional<std::vector<TableLine>>>
readTable(const std::string &path, bool required) {
  if (!llvm::sys::fs::exists(path)) {
    if (required)
      return absl::NotFoundError("'" + path + "' does not exist");
    return std::optional<std::vector<TableLine>>();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::InvalidArgumentError("cannot read '" + path + "'");
  std::vector<TableLine> lines;
  std::string text;
  for (int64_t number = 1; std::getline(in, text); ++number) {
    size_t begin = 0, end = text.size();
    while (begin < end && isSpace(text[begin]))
      ++begin;
    while (end > begin && isSpace(text[end - 1]))
      --end;
    if (begin == end)
      continue;
    size_t split = begin;
    while (split < end && !isSpace(text[split]))
      ++split;
    size_t rest = split;
    while (rest < end && isSpace(text[rest]))
      ++rest;
    lines.push_back({text.substr(begin, split - begin),
                     text.substr(rest, end - rest), number});
  }
  if (in.bad())
    return absl::InvalidArgumentError("cannot read '" + path + "'");
  return std::optional<std::vector<TableLine>>(std::move(lines));
}

struct Audio {
  std::string path;
  int64_t line = 0;
};

struct Segment {
  std::string recording;
  double start = 0, end = -1;
  int64_t line = 0;
};

/// What one utterance needs to be imported.
struct Job {
  std::string id;
  std::string path;
  std::string where; // "FILE:LINE" of its audio entry
  std::optional<Segment> segment;
  /// The channel read from the file; -1: the file must be mono.
  int channel = -1;
  std::vector<int32_t> labels;
  double speed = 1.0;
};

/// Names the code that turns audio into features (resampler, filterbank):
/// chunks written by other code are not reused. Change it whenever their
/// output changes.
constexpr const char *kFeatureVersion = "features 2 (libsoxr hq 0.97)";

/// A chunk of jobs being imported (ImportWork.h).
struct ChunkState {
  size_t begin = 0, end = 0; // its jobs
  uint64_t fingerprint = 0;
  /// Per job, its arrays once imported, until the chunk is complete.
  std::vector<std::optional<UtteranceArrays>> arrays;
  std::atomic<size_t> remaining{0};
  /// One per job; the imported utterances (kept without a work folder).
  std::vector<JobOutcome> outcomes;
  std::vector<ImportedUtterance> utterances;
};

/// What decides the arrays and outcomes of jobs [begin, end): the feature
/// code's version and options, each job (where it is listed, so that
/// reused messages name the right line), and the size and modification
/// time of its audio file (a file replaced in place is imported again).
uint64_t chunkFingerprint(const std::vector<Job> &jobs, size_t begin,
                          size_t end, const KaldiImportOptions &options) {
  std::string key = std::string(kFeatureVersion) + " rate " +
                    std::to_string(options.sampleRate) + " bins " +
                    std::to_string(options.numMelBins) + "\n";
  auto number = [](double value) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.17g", value);
    return std::string(text);
  };
  for (size_t i = begin; i < end; ++i) {
    const Job &job = jobs[i];
    key += job.id + "\t" + job.where + "\t" + job.path + "\t" +
           std::to_string(job.channel) + "\t" + number(job.speed);
    if (job.segment)
      key += "\t" + number(job.segment->start) + " " + number(job.segment->end);
    key += "\tlabels";
    for (int32_t label : job.labels)
      key += " " + std::to_string(label);
    llvm::sys::fs::file_status status;
    if (!llvm::sys::fs::status(job.path, status))
      key += "\tfile " + std::to_string(status.getSize()) + " " +
             std::to_string(
                 status.getLastModificationTime().time_since_epoch().count());
    key += "\n";
  }
  return llvm::xxh3_64bits(key);
}

/// Reads the audio of `job` and computes its features with `fbank`:
/// `arrays` is set, or the outcome says why the job is skipped.
JobOutcome importJob(const Job &job, Fbank &fbank,
                     const KaldiImportOptions &options,
                     std::optional<UtteranceArrays> &arrays) {
  JobOutcome outcome{job.id, "", ""};
  auto skip = [&](std::string problem, const char *reason) {
    outcome.problem = std::move(problem);
    outcome.reason = reason;
    return outcome;
  };
  AudioReadOptions read;
  read.sampleRate = options.sampleRate;
  read.channel = job.channel;
  absl::StatusOr<nn::Audio> audio = readAudio(job.path, read);
  if (!audio.ok())
    return skip(job.where + ": " + std::string(audio.status().message()),
                "unreadable audio");
  absl::Span<const float> samples(audio->samples);
  if (job.segment) {
    const Segment &s = *job.segment;
    double seconds = (double)samples.size() / options.sampleRate;
    double end = s.end == -1 ? seconds : s.end;
    // Times are rounded, and resampling may shorten a recording by a
    // sample: an end up to kSpanOvershootSeconds past the audio is cut to
    // it (Lhotse's tolerance), further is an error.
    if (end > seconds + kSpanOvershootSeconds)
      return skip(job.where + ": segment '" + job.id + "' ends at " +
                      std::to_string(end) +
                      " s, past the end of its recording (" +
                      std::to_string(seconds) + " s)",
                  "segment outside its recording");
    // A start past the audio (end -1) leaves nothing: "shorter than one
    // frame" below.
    size_t first = std::min(samples.size(),
                            (size_t)std::llround(s.start * options.sampleRate));
    size_t last = std::min(samples.size(),
                           (size_t)std::llround(end * options.sampleRate));
    samples = samples.subspan(first, last > first ? last - first : 0);
  }
  std::vector<float> perturbed;
  if (job.speed != 1.0) {
    absl::StatusOr<std::vector<float>> changed =
        changeSpeed(samples, job.speed, job.where);
    if (!changed.ok())
      return skip(std::string(changed.status().message()),
                  "speed perturbation failed");
    perturbed = std::move(*changed);
    samples = perturbed;
  }
  Tensor features = fbank.compute(samples);
  if (features.shape()[0] == 0)
    return skip(job.where + ": utterance '" + job.id +
                    "' is shorter than one frame (" +
                    std::to_string(samples.size()) + " samples)",
                "shorter than one frame");
  UtteranceArrays a;
  a["features"] = std::move(features);
  a["labels"] =
      Tensor::of<int32_t>(DType::i32, {(int64_t)job.labels.size()}, job.labels);
  arrays = std::move(a);
  return outcome;
}

} // namespace

std::string normalizeSpaces(const std::string &text) {
  std::istringstream in(text);
  std::string word, out;
  while (in >> word)
    out += (out.empty() ? "" : " ") + word;
  return out;
}

std::optional<std::vector<std::string>> codePoints(const std::string &text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    unsigned char c = text[i];
    size_t n = c < 0x80         ? 1
               : (c >> 5) == 6  ? 2
               : (c >> 4) == 14 ? 3
               : (c >> 3) == 30 ? 4
                                : 0;
    if (n == 0 || i + n > text.size())
      return std::nullopt;
    for (size_t k = 1; k < n; ++k)
      if (((unsigned char)text[i + k] >> 6) != 2)
        return std::nullopt;
    out.push_back(text.substr(i, n));
    i += n;
  }
  return out;
}

std::string speedText(double speed) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", speed);
  return text;
}

std::string speedPerturbedId(const std::string &id, double speed) {
  return "sp" + speedText(speed) + "-" + id;
}

absl::Status checkSpeeds(const std::vector<double> &speeds) {
  if (speeds.empty())
    return absl::InvalidArgumentError("no speed factors (1 is no change)");
  for (size_t i = 0; i < speeds.size(); ++i) {
    double speed = speeds[i];
    if (!(speed >= 0.5 && speed <= 2.0))
      return absl::InvalidArgumentError("speed factor " + speedText(speed) +
                                        " is outside [0.5, 2]");
    for (size_t k = 0; k < i; ++k)
      if (speeds[k] == speed)
        return absl::InvalidArgumentError("speed factor " + speedText(speed) +
                                          " is given twice");
  }
  return absl::OkStatus();
}

std::vector<std::string>
characterVocabulary(const std::vector<std::string> &transcripts) {
  std::set<std::string> seen;
  for (const std::string &t : transcripts)
    if (auto chars = codePoints(t))
      for (const std::string &c : *chars)
        if (c != " ")
          seen.insert(c);
  std::vector<std::string> tokens = {kBlankToken, kWordSeparator};
  for (const std::string &c : seen)
    if (c != kWordSeparator)
      tokens.push_back(c);
  return tokens;
}

absl::StatusOr<std::vector<int32_t>>
characterLabels(const std::string &transcript,
                const std::vector<std::string> &tokens) {
  std::map<std::string, int32_t> index;
  for (size_t i = 0; i < tokens.size(); ++i)
    index.emplace(tokens[i], (int32_t)i);
  auto separator = index.find(kWordSeparator);
  std::optional<std::vector<std::string>> chars = codePoints(transcript);
  if (!chars)
    return absl::InvalidArgumentError("the transcript is not valid UTF-8");
  std::vector<int32_t> labels;
  for (const std::string &c : *chars) {
    if (c == " ") {
      if (separator == index.end())
        return absl::InvalidArgumentError(
            "the vocabulary has no word separator '\xE2\x96\x81'");
      labels.push_back(separator->second);
      continue;
    }
    auto found = index.find(c);
    if (found == index.end() || found->second == 0)
      return absl::InvalidArgumentError("the character '" + c +
                                        "' is not in the vocabulary");
    labels.push_back(found->second);
  }
  return labels;
}

absl::Status checkImportOptions(const KaldiImportOptions &options) {
  if (options.threads < 1)
    return absl::InvalidArgumentError("threads must be >= 1");
  if (options.chunkJobs < 1)
    return absl::InvalidArgumentError("chunkJobs must be >= 1");
  return checkSpeeds(options.speeds);
}

absl::StatusOr<KaldiImport>
importKaldiDirectory(const std::string &dir, const KaldiImportOptions &options,
                     const std::function<void(int64_t, int64_t)> &progress) {
  if (absl::Status status = checkImportOptions(options); !status.ok())
    return status;

  auto file = [&](const char *name) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    return path.str().str();
  };
  std::string scpPath = file("wav.scp"), textPath = file("text"),
              segmentsPath = file("segments");
  auto scp = readTable(scpPath, true);
  if (!scp.ok())
    return scp.status();
  auto text = readTable(textPath, true);
  if (!text.ok())
    return text.status();
  auto segments = readTable(segmentsPath, false);
  if (!segments.ok())
    return segments.status();

  ImportSources sources;
  auto skip = [&](const std::string &where, const std::string &what,
                  const std::string &reason) {
    sources.skip(where + ": " + what, reason);
  };
  auto at = [](const std::string &path, int64_t line) {
    return path + ":" + std::to_string(line);
  };

  // Recordings. A bad entry only matters to the utterances that use it:
  // they are skipped (and counted) when text names them.
  std::map<std::string, Audio> recordings;
  std::map<std::string, std::string> badRecordings; // id -> problem
  for (const TableLine &l : **scp) {
    std::string where = at(scpPath, l.line);
    if (recordings.count(l.key) || badRecordings.count(l.key)) {
      badRecordings[l.key] =
          where + ": recording '" + l.key + "' is listed more than once";
      recordings.erase(l.key);
    } else if (l.rest.empty()) {
      badRecordings[l.key] =
          where + ": expected '<recording-id> <path>', got no path";
    } else if (l.rest.back() == '|') {
      badRecordings[l.key] = where + ": '" + l.rest +
                             "' is a command; nn-data reads audio files "
                             "only (convert the audio first)";
    } else {
      llvm::SmallString<256> path(l.rest);
      if (!llvm::sys::path::is_absolute(path)) {
        // Kaldi resolves relative paths against the working directory.
        llvm::sys::fs::make_absolute(path);
      }
      recordings[l.key] = {path.str().str(), l.line};
    }
  }
  std::map<std::string, Segment> segmentOf;
  std::map<std::string, std::string> badSegments;
  if (*segments)
    for (const TableLine &l : **segments) {
      std::string where = at(segmentsPath, l.line);
      std::istringstream in(l.rest);
      Segment s;
      std::string extra;
      s.line = l.line;
      if (!(in >> s.recording >> s.start >> s.end) || (in >> extra)) {
        badSegments[l.key] = where + ": expected '<utterance-id> "
                                     "<recording-id> <start> <end>'";
      } else if (!std::isfinite(s.start) || !std::isfinite(s.end) ||
                 s.start < 0 || (s.end != -1 && s.end <= s.start)) {
        badSegments[l.key] = where + ": segment '" + l.key + "' has start " +
                             std::to_string(s.start) + " and end " +
                             std::to_string(s.end) +
                             " (seconds; end -1 means the recording's end)";
      } else if (segmentOf.count(l.key) || badSegments.count(l.key)) {
        badSegments[l.key] =
            where + ": segment '" + l.key + "' is listed more than once";
        segmentOf.erase(l.key);
      } else {
        segmentOf[l.key] = s;
      }
    }

  // Where each utterance's audio is; a problem found here skips it after
  // the vocabulary is made (from every accepted transcript).
  auto deferSkip = [](UtteranceSource &u, const std::string &where,
                      const std::string &what, const std::string &reason) {
    u.problem = where + ": " + what;
    u.reason = reason;
  };
  auto resolve = [&](const TableLine &l,
                     const std::string &transcript) -> UtteranceSource {
    std::string where = at(textPath, l.line);
    UtteranceSource u;
    u.id = l.key;
    u.transcript = transcript;
    u.where = where;
    std::string recording = l.key;
    if (*segments) {
      if (auto bad = badSegments.find(l.key); bad != badSegments.end()) {
        deferSkip(u, where, "utterance '" + l.key + "': " + bad->second,
                  "bad segment");
        return u;
      }
      auto found = segmentOf.find(l.key);
      if (found == segmentOf.end()) {
        deferSkip(u, where,
                  "utterance '" + l.key + "' has no entry in segments",
                  "no audio");
        return u;
      }
      u.span = AudioSpan{found->second.start, found->second.end};
      recording = found->second.recording;
    }
    if (auto bad = badRecordings.find(recording); bad != badRecordings.end()) {
      deferSkip(u, where, "utterance '" + l.key + "': " + bad->second,
                "bad wav.scp");
      return u;
    }
    auto audio = recordings.find(recording);
    if (audio == recordings.end()) {
      deferSkip(u, where,
                "utterance '" + l.key + "' has no recording '" + recording +
                    "' in wav.scp",
                "no audio");
      return u;
    }
    u.path = audio->second.path;
    u.audioWhere = at(scpPath, audio->second.line);
    return u;
  };

  // Transcripts in text's order.
  std::set<std::string> seenIds;
  for (const TableLine &l : **text) {
    std::string where = at(textPath, l.line);
    if (!seenIds.insert(l.key).second) {
      skip(where, "utterance '" + l.key + "' is listed more than once",
           "duplicate utterance");
      continue;
    }
    if (absl::StatusOr<std::vector<int32_t>> id = utteranceIdCodePoints(l.key);
        !id.ok()) {
      skip(where, std::string(id.status().message()), "bad utterance id");
      continue;
    }
    std::string transcript = normalizeSpaces(l.rest);
    if (transcript.empty()) {
      skip(where, "utterance '" + l.key + "' has an empty transcript",
           "empty transcript");
      continue;
    }
    if (!codePoints(transcript)) {
      skip(where, "the transcript of '" + l.key + "' is not valid UTF-8",
           "bad transcript");
      continue;
    }
    sources.utterances.push_back(resolve(l, transcript));
  }
  return importSources(std::move(sources), options, progress);
}

absl::StatusOr<KaldiImport>
importSources(ImportSources sources, const KaldiImportOptions &options,
              const std::function<void(int64_t, int64_t)> &progress) {
  if (absl::Status status = checkImportOptions(options); !status.ok())
    return status;
  FbankOptions fbankOptions;
  fbankOptions.sampleRate = options.sampleRate;
  fbankOptions.numMelBins = options.numMelBins;
  KaldiImport result;
  result.problems = std::move(sources.problems);
  result.skipped = std::move(sources.skipped);
  auto skip = [&](const std::string &where, const std::string &what,
                  const std::string &reason) {
    result.problems.push_back(where + ": " + what);
    ++result.skipped[reason];
  };

  // The vocabulary, then labels.
  std::optional<TranscriptCoder> coder;
  if (options.coder) {
    std::vector<std::string> transcripts;
    for (const UtteranceSource &u : sources.utterances)
      transcripts.push_back(u.transcript);
    absl::StatusOr<TranscriptCoder> made = options.coder(transcripts);
    if (!made.ok())
      return made.status();
    coder = std::move(*made);
    result.tokens = coder->tokens;
  } else if (options.tokens.empty()) {
    std::vector<std::string> transcripts;
    for (const UtteranceSource &u : sources.utterances)
      transcripts.push_back(u.transcript);
    result.tokens = characterVocabulary(transcripts);
  } else {
    result.tokens = options.tokens;
  }

  std::vector<Job> jobs;
  for (const UtteranceSource &u : sources.utterances) {
    if (!u.problem.empty()) {
      result.problems.push_back(u.problem);
      ++result.skipped[u.reason];
      continue;
    }
    const std::string &where = u.where;
    const std::string &transcript = u.transcript;
    Job job;
    job.id = u.id;
    job.path = u.path;
    job.where = u.audioWhere;
    job.channel = u.channel;
    if (u.span)
      job.segment = Segment{"", u.span->start, u.span->end, 0};
    absl::StatusOr<std::vector<int32_t>> labels =
        coder ? coder->encode(transcript)
              : characterLabels(transcript, result.tokens);
    if (!labels.ok()) {
      skip(where,
           "utterance '" + u.id +
               "': " + std::string(labels.status().message()),
           "character not in the vocabulary");
      continue;
    }
    job.labels = std::move(*labels);
    for (double speed : options.speeds) {
      Job copy = job;
      copy.speed = speed;
      if (speed != 1.0)
        copy.id = speedPerturbedId(job.id, speed);
      jobs.push_back(std::move(copy));
    }
  }

  // Audio and features, chunk by chunk on worker threads; results stay in
  // the corpus's order.
  std::optional<ImportWork> workFolder;
  if (!options.workDir.empty()) {
    absl::StatusOr<ImportWork> opened = ImportWork::open(options.workDir);
    if (!opened.ok())
      return opened.status();
    workFolder = std::move(*opened);
  }
  size_t per = options.chunkJobs;
  size_t chunkCount = (jobs.size() + per - 1) / per;
  std::vector<ChunkState> chunks(chunkCount);
  std::vector<size_t> pending; // jobs of the chunks to import, in order
  int64_t reused = 0;
  for (size_t c = 0; c < chunkCount; ++c) {
    ChunkState &chunk = chunks[c];
    chunk.begin = c * per;
    chunk.end = std::min(jobs.size(), chunk.begin + per);
    chunk.fingerprint = chunkFingerprint(jobs, chunk.begin, chunk.end, options);
    if (workFolder)
      if (std::optional<std::vector<JobOutcome>> outcomes =
              workFolder->reuse(c, chunk.fingerprint);
          outcomes && outcomes->size() == chunk.end - chunk.begin) {
        chunk.outcomes = std::move(*outcomes);
        reused += (int64_t)(chunk.end - chunk.begin);
        continue;
      }
    chunk.outcomes.resize(chunk.end - chunk.begin);
    chunk.arrays.resize(chunk.end - chunk.begin);
    chunk.remaining = chunk.end - chunk.begin;
    for (size_t i = chunk.begin; i < chunk.end; ++i)
      pending.push_back(i);
  }

  std::atomic<size_t> next{0};
  int64_t done = reused; // under `mutex`
  std::atomic<bool> failed{false};
  std::mutex mutex; // progress calls and `error`
  absl::Status error;
  if (progress && reused)
    progress(reused, (int64_t)jobs.size());
  // One filterbank per thread (an Fbank is not shared between threads).
  std::vector<std::unique_ptr<Fbank>> fbanks;
  for (int t = 0; t < options.threads; ++t) {
    absl::StatusOr<std::unique_ptr<Fbank>> fbank = Fbank::create(fbankOptions);
    if (!fbank.ok())
      return fbank.status();
    fbanks.push_back(std::move(*fbank));
  }
  auto work = [&](Fbank &fbank) {
    for (size_t p; !failed && (p = next++) < pending.size();) {
      size_t i = pending[p];
      ChunkState &chunk = chunks[i / per];
      size_t k = i - chunk.begin;
      chunk.outcomes[k] = importJob(jobs[i], fbank, options, chunk.arrays[k]);
      if (--chunk.remaining == 0) {
        // The last job of its chunk: the chunk is complete.
        for (size_t j = 0; j < chunk.arrays.size(); ++j)
          if (chunk.arrays[j])
            chunk.utterances.push_back(
                {jobs[chunk.begin + j].id, std::move(*chunk.arrays[j])});
        chunk.arrays.clear();
        if (workFolder) {
          absl::Status status =
              workFolder->write(i / per, chunk.fingerprint, chunk.outcomes,
                                std::move(chunk.utterances));
          chunk.utterances.clear();
          if (!status.ok()) {
            std::lock_guard<std::mutex> lock(mutex);
            if (error.ok())
              error = status;
            failed = true;
          }
        }
      }
      // Counted under the lock, so that progress sees counts in order.
      std::lock_guard<std::mutex> lock(mutex);
      ++done;
      if (progress)
        progress(done, (int64_t)jobs.size());
    }
  };
  std::vector<std::thread> workers;
  for (int t = 1; t < options.threads; ++t)
    workers.emplace_back(work, std::ref(*fbanks[t]));
  work(*fbanks[0]);
  for (std::thread &worker : workers)
    worker.join();
  if (!error.ok())
    return error;

  for (ChunkState &chunk : chunks) {
    std::vector<std::string> &ids = result.chunkIds.emplace_back();
    for (const JobOutcome &outcome : chunk.outcomes) {
      if (outcome.problem.empty()) {
        ++result.imported;
        ids.push_back(outcome.id);
        continue;
      }
      result.problems.push_back(outcome.problem);
      ++result.skipped[outcome.reason];
    }
    for (ImportedUtterance &u : chunk.utterances)
      result.utterances.push_back(std::move(u));
  }
  if (!workFolder)
    result.chunkIds.clear();
  result.reused = reused;
  result.work = std::move(workFolder);
  return result;
}

} // namespace nn::data
