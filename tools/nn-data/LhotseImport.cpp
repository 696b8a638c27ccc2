//===- LhotseImport.cpp - Lhotse cut manifests to dataset arrays ----------===//
//
// The fields read, from Lhotse's MonoCut, Recording and SupervisionSegment
// (lhotse/cut/mono.py, lhotse/audio/recording.py, lhotse/supervision.py):
//
//   {"id": ..., "start": s, "duration": d, "channel": c,
//    "supervisions": [{"start": ..., "text": ...}, ...],
//    "recording": {"id": ..., "duration": ...,
//                  "sources": [{"type": "file", "channels": [c, ...],
//                               "source": PATH}, ...]}}
//
// Everything else (features, custom fields, speakers) is ignored. A cut
// becomes an UtteranceSource and importSources does the rest.
//
//===----------------------------------------------------------------------===//

#include "tools/nn-data/LhotseImport.h"

#include "nn/Dataset.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <zlib.h>

namespace nn::data {
namespace {

/// The whole file, decompressed when it ends in .gz.
absl::StatusOr<std::string> readManifest(const std::string &path) {
  if (!llvm::sys::fs::exists(path))
    return absl::NotFoundError("'" + path + "' does not exist");
  if (!llvm::StringRef(path).ends_with(".gz")) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (!in)
      return absl::InvalidArgumentError("cannot read '" + path + "'");
    return text.str();
  }
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file)
    return absl::InvalidArgumentError("cannot read '" + path +
                                      "': " + std::strerror(errno));
  std::string text;
  char buffer[1 << 16];
  int n;
  while ((n = gzread(file, buffer, sizeof(buffer))) > 0)
    text.append(buffer, n);
  int error = Z_OK;
  std::string message = n < 0 ? gzerror(file, &error) : "";
  gzclose(file);
  if (n < 0)
    return absl::InvalidArgumentError("cannot decompress '" + path +
                                      "': " + message);
  return text;
}

/// A problem with one cut: what is wrong and the reason it is counted
/// under.
struct Problem {
  std::string what, reason;
};

constexpr const char *kBadEntry = "bad manifest entry";

/// The source of `cut`'s audio, or the problem with it.
std::optional<Problem> findAudio(const llvm::json::Object &cut,
                                 const std::string &id, int64_t channel,
                                 UtteranceSource &u) {
  const llvm::json::Object *recording = cut.getObject("recording");
  if (!recording)
    return Problem{"cut '" + id + "' has no recording object", kBadEntry};
  std::string recordingId = recording->getString("id").value_or("").str();
  const llvm::json::Array *sources = recording->getArray("sources");
  if (!sources || sources->empty())
    return Problem{"recording '" + recordingId + "' of cut '" + id +
                       "' has no sources",
                   kBadEntry};
  for (const llvm::json::Value &value : *sources) {
    const llvm::json::Object *source = value.getAsObject();
    if (!source)
      return Problem{"recording '" + recordingId +
                         "' has a source that is not an object",
                     kBadEntry};
    const llvm::json::Array *channels = source->getArray("channels");
    if (!channels)
      return Problem{"a source of recording '" + recordingId +
                         "' lists no channels",
                     kBadEntry};
    int64_t index = -1;
    for (size_t k = 0; k < channels->size(); ++k)
      if ((*channels)[k].getAsInteger() == channel)
        index = (int64_t)k;
    if (index < 0)
      continue;
    std::string type = source->getString("type").value_or("").str();
    if (type != "file")
      return Problem{"the source of recording '" + recordingId +
                         "' is of type '" + type +
                         "'; nn-data reads audio files only (type 'file')",
                     "not an audio file"};
    std::optional<llvm::StringRef> path = source->getString("source");
    if (!path || path->empty())
      return Problem{"a file source of recording '" + recordingId +
                         "' has no path",
                     kBadEntry};
    llvm::SmallString<256> absolute(*path);
    // Lhotse keeps paths as given: relative ones are taken from the
    // working directory, as Kaldi's are.
    llvm::sys::fs::make_absolute(absolute);
    u.path = absolute.str().str();
    // A one-channel source is read as mono; in a multi-channel file the
    // cut's channel is at its position in the source's list.
    u.channel = channels->size() == 1 ? -1 : (int)index;
    return std::nullopt;
  }
  return Problem{"recording '" + recordingId + "' has no source for channel " +
                     std::to_string(channel) + " of cut '" + id + "'",
                 kBadEntry};
}

/// `cut` as an utterance, or the problem with it.
std::optional<Problem> readCut(const llvm::json::Object &cut,
                               UtteranceSource &u) {
  std::optional<llvm::StringRef> id = cut.getString("id");
  if (!id || id->empty())
    return Problem{"a cut without an \"id\"", kBadEntry};
  u.id = id->str();
  if (std::optional<llvm::StringRef> type = cut.getString("type");
      type && *type != "MonoCut")
    return Problem{"cut '" + u.id + "' is a " + type->str() +
                       "; nn-data imports MonoCuts (one channel each)",
                   kBadEntry};
  if (absl::StatusOr<std::vector<int32_t>> codes = utteranceIdCodePoints(u.id);
      !codes.ok())
    return Problem{std::string(codes.status().message()), "bad utterance id"};
  std::optional<double> start = cut.getNumber("start");
  std::optional<double> duration = cut.getNumber("duration");
  if (!start || !duration || !std::isfinite(*start) ||
      !std::isfinite(*duration) || *start < 0 || *duration <= 0)
    return Problem{"cut '" + u.id +
                       "' needs a \"start\" >= 0 and a \"duration\" > 0 "
                       "(seconds)",
                   kBadEntry};
  u.span = AudioSpan{*start, *start + *duration};
  int64_t channel = 0;
  if (const llvm::json::Value *value = cut.get("channel")) {
    std::optional<int64_t> number = value->getAsInteger();
    if (!number || *number < 0)
      return Problem{"cut '" + u.id +
                         "' has a \"channel\" that is not one channel "
                         "number (multi-channel cuts are not imported)",
                     kBadEntry};
    channel = *number;
  }
  if (const llvm::json::Object *recording = cut.getObject("recording"))
    if (std::optional<double> length = recording->getNumber("duration");
        length && u.span->end > *length + kSpanOvershootSeconds)
      return Problem{"cut '" + u.id + "' ends at " +
                         std::to_string(u.span->end) +
                         " s, past the end of its recording (" +
                         std::to_string(*length) + " s)",
                     "segment outside its recording"};

  // The transcript: the supervisions' texts in start order.
  std::vector<std::pair<double, std::string>> texts;
  if (const llvm::json::Array *supervisions = cut.getArray("supervisions"))
    for (const llvm::json::Value &value : *supervisions) {
      const llvm::json::Object *supervision = value.getAsObject();
      if (!supervision)
        return Problem{"cut '" + u.id +
                           "' has a supervision that is not an object",
                       kBadEntry};
      if (std::optional<llvm::StringRef> text = supervision->getString("text"))
        texts.emplace_back(supervision->getNumber("start").value_or(0),
                           text->str());
    }
  std::stable_sort(
      texts.begin(), texts.end(),
      [](const auto &a, const auto &b) { return a.first < b.first; });
  std::string joined;
  for (const auto &[at, text] : texts)
    joined += " " + text;
  u.transcript = normalizeSpaces(joined);
  if (u.transcript.empty())
    return Problem{"cut '" + u.id + "' has an empty transcript",
                   "empty transcript"};
  if (!codePoints(u.transcript))
    return Problem{"the transcript of cut '" + u.id + "' is not valid UTF-8",
                   "bad transcript"};
  return findAudio(cut, u.id, channel, u);
}

} // namespace

bool isLhotseManifest(const std::string &path) {
  llvm::StringRef name(path);
  return (name.ends_with(".jsonl") || name.ends_with(".jsonl.gz")) &&
         !llvm::sys::fs::is_directory(path);
}

absl::StatusOr<KaldiImport>
importLhotseCuts(const std::string &path, const KaldiImportOptions &options,
                 const std::function<void(int64_t, int64_t)> &progress) {
  if (absl::Status status = checkImportOptions(options); !status.ok())
    return status;
  absl::StatusOr<std::string> text = readManifest(path);
  if (!text.ok())
    return text.status();
  ImportSources sources;
  std::set<std::string> seen;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(*text).split(lines, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    llvm::StringRef line = lines[i].trim();
    if (line.empty())
      continue;
    std::string where = path + ":" + std::to_string(i + 1);
    llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(line);
    if (!parsed) {
      sources.skip(where + ": not JSON: " + llvm::toString(parsed.takeError()),
                   kBadEntry);
      continue;
    }
    const llvm::json::Object *cut = parsed->getAsObject();
    if (!cut) {
      sources.skip(where + ": a line that is not a JSON object", kBadEntry);
      continue;
    }
    UtteranceSource u;
    u.where = u.audioWhere = where;
    if (std::optional<Problem> problem = readCut(*cut, u)) {
      // A cut whose transcript is fine joins the vocabulary, as a Kaldi
      // utterance with bad audio does.
      bool transcriptRead = !u.transcript.empty() && codePoints(u.transcript);
      if (transcriptRead && seen.insert(u.id).second) {
        u.problem = where + ": " + problem->what;
        u.reason = problem->reason;
        sources.utterances.push_back(std::move(u));
      } else {
        sources.skip(where + ": " + problem->what, problem->reason);
      }
      continue;
    }
    if (!seen.insert(u.id).second) {
      sources.skip(where + ": cut '" + u.id + "' is listed more than once",
                   "duplicate utterance");
      continue;
    }
    sources.utterances.push_back(std::move(u));
  }
  return importSources(std::move(sources), options, progress);
}

} // namespace nn::data
