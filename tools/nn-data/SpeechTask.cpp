//===- SpeechTask.cpp - a spoken-word recognition task, synthesized -------===//

#include "tools/nn-data/SpeechTask.h"
#include "tools/nn-data/KaldiImport.h"

#include "nn/File.h"
#include "runtime/SplitMix64.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <espeak-ng/espeak_ng.h>
#include <espeak-ng/speak_lib.h>
#include <sndfile.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <sys/wait.h>
#include <unistd.h>

using nn::runtime::SplitMix64;

namespace nn::data {
namespace {

const char *const kSplits[] = {"train", "dev", "test"};

// No two words of a vocabulary sound alike (no "to"/"two", "for"/"four",
// "right"/"write", "there"/"their"), so that a word-level error is a
// recognition error, not a spelling convention.
const std::vector<std::string> kDigits = {"zero",  "one",  "two", "three",
                                          "four",  "five", "six", "seven",
                                          "eight", "nine"};

const std::vector<std::string> kWords = {
    "about",    "above",   "across",    "after",    "again",     "air",
    "all",      "almost",  "along",     "always",   "animal",    "answer",
    "apple",    "around",  "ask",       "away",     "baby",      "back",
    "bad",      "ball",    "bank",      "basket",   "beautiful", "because",
    "bed",      "before",  "begin",     "behind",   "best",      "better",
    "big",      "bird",    "black",     "blue",     "boat",      "body",
    "book",     "both",    "box",       "boy",      "bread",     "bring",
    "brother",  "brown",   "build",     "busy",     "call",      "came",
    "car",      "carry",   "cat",       "chair",    "change",    "child",
    "city",     "clean",   "clock",     "close",    "cold",      "color",
    "come",     "count",   "country",   "cover",    "cup",       "dance",
    "dark",     "day",     "different", "dinner",   "dog",       "door",
    "down",     "draw",    "dream",     "drink",    "drive",     "dry",
    "early",    "earth",   "easy",      "eat",      "egg",       "end",
    "enough",   "every",   "face",      "fall",     "family",    "far",
    "farm",     "fast",    "father",    "find",     "fire",      "first",
    "fish",     "floor",   "flower",    "fly",      "follow",    "food",
    "foot",     "forest",  "friend",    "from",     "full",      "funny",
    "game",     "garden",  "get",       "girl",     "give",      "glass",
    "go",       "good",    "grass",     "great",    "green",     "ground",
    "grow",     "happy",   "hard",      "have",     "head",      "help",
    "high",     "hill",    "hold",      "home",     "horse",     "hot",
    "house",    "hundred", "jump",      "keep",     "kind",      "king",
    "kitchen",  "lake",    "large",     "last",     "late",      "laugh",
    "learn",    "leave",   "left",      "letter",   "light",     "like",
    "line",     "list",    "listen",    "little",   "live",      "long",
    "look",     "love",    "low",       "machine",  "make",      "many",
    "market",   "money",   "moon",      "morning",  "mother",    "mountain",
    "move",     "much",    "music",     "name",     "near",      "never",
    "new",      "next",    "nice",      "night",    "north",     "number",
    "ocean",    "off",     "office",    "often",    "old",       "open",
    "orange",   "other",   "over",      "paper",    "party",     "people",
    "picture",  "place",   "plant",     "play",     "please",    "pocket",
    "pretty",   "pull",    "push",      "question", "quick",     "quiet",
    "rain",     "river",   "road",      "round",    "run",       "school",
    "second",   "shoe",    "short",     "show",     "sister",    "sleep",
    "slow",     "small",   "snow",      "song",     "soon",      "south",
    "speak",    "spring",  "stand",     "star",     "start",     "stone",
    "stop",     "story",   "street",    "strong",   "summer",    "table",
    "talk",     "teacher", "think",     "thousand", "today",     "together",
    "tomorrow", "tree",    "under",     "up",       "very",      "village",
    "walk",     "warm",    "watch",     "water",    "white",     "window",
    "winter",   "with",    "woman",     "world",    "yellow",    "young"};

// eSpeak NG's English language voices (Debian's espeak-ng-data), by the
// names its voice lookup takes ("en" is British English).
const std::vector<std::string> kAccents = {
    "en-us",          "en-us-nyc",      "en",         "en-gb-scotland",
    "en-gb-x-gbclan", "en-gb-x-gbcwmd", "en-gb-x-rp", "en-029"};

// Its voice variants that sound like a person (no robots, whispers or
// croaks): each is one speaker of the task, in every accent.
const std::vector<std::string> kVariants = {
    "m1",     "m2",      "m3",      "m4",      "m5",      "m6",
    "m7",     "m8",      "f1",      "f2",      "f3",      "f4",
    "f5",     "adam",    "Alex",    "Alicia",  "Andrea",  "Andy",
    "Annie",  "anika",   "antonio", "aunty",   "belinda", "benjamin",
    "boris",  "caleb",   "david",   "Denis",   "Diogo",   "ed",
    "edward", "Gene",    "grandma", "grandpa", "gustave", "Henrique",
    "Hugo",   "iven",    "Jacky",   "john",    "Lee",     "linda",
    "Marco",  "Mario",   "max",     "michel",  "Michael", "Mike",
    "miguel", "norbert", "pablo",   "paul",    "pedro",   "quincy",
    "rob",    "robert",  "sandro",  "shelby",  "steph",   "travis",
    "victor", "zac"};

/// The samples of the synthesis running in this process.
std::vector<short> *gSamples = nullptr;

int collectSamples(short *samples, int count, espeak_EVENT *) {
  if (samples && count > 0)
    gSamples->insert(gSamples->end(), samples, samples + count);
  return 0; // continue
}

std::string espeakMessage(espeak_ng_STATUS status) {
  char buffer[512];
  espeak_ng_GetStatusCodeMessage(status, buffer, sizeof(buffer));
  return buffer;
}

/// What a synthesis child reports through its pipe: a header, then the
/// samples or the message.
struct ChildReport {
  int32_t ok;
  int32_t sampleRate;
  int64_t size; // samples, or bytes of the message
};

bool writeAll(int fd, const void *data, size_t size) {
  const char *p = static_cast<const char *>(data);
  while (size) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    size -= n;
  }
  return true;
}

bool readAll(int fd, void *data, size_t size) {
  char *p = static_cast<char *>(data);
  while (size) {
    ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    size -= n;
  }
  return true;
}

/// Runs in the child: speaks and reports through `fd`.
[[noreturn]] void speakAndReport(int fd, const std::string &text,
                                 const std::string &voice, int rate,
                                 int pitch) {
  auto report = [&](bool ok, int sampleRate, const void *data, int64_t size,
                    int64_t bytes) {
    ChildReport header{ok, sampleRate, size};
    bool sent =
        writeAll(fd, &header, sizeof(header)) && writeAll(fd, data, bytes);
    ::_exit(sent ? 0 : 1);
  };
  auto error = [&](const std::string &message) {
    report(false, 0, message.data(), message.size(), message.size());
  };
  espeak_ng_InitializePath(nullptr);
  espeak_ng_ERROR_CONTEXT context = nullptr;
  espeak_ng_STATUS status = espeak_ng_Initialize(&context);
  espeak_ng_ClearErrorContext(&context);
  if (status != ENS_OK)
    error("cannot initialize eSpeak NG (Debian: espeak-ng-data): " +
          espeakMessage(status));
  status = espeak_ng_InitializeOutput(ENOUTPUT_MODE_SYNCHRONOUS, 0, nullptr);
  if (status != ENS_OK)
    error("cannot set up eSpeak NG's synchronous output: " +
          espeakMessage(status));
  std::vector<short> samples;
  gSamples = &samples;
  espeak_SetSynthCallback(collectSamples);
  status = espeak_ng_SetVoiceByName(voice.c_str());
  if (status != ENS_OK)
    error("eSpeak NG has no voice '" + voice + "': " + espeakMessage(status));
  espeak_ng_SetParameter(espeakRATE, rate, 0);
  espeak_ng_SetParameter(espeakPITCH, pitch, 0);
  status = espeak_ng_Synthesize(text.c_str(), text.size() + 1, 0, POS_CHARACTER,
                                0, espeakCHARS_UTF8, nullptr, nullptr);
  if (status == ENS_OK)
    status = espeak_ng_Synchronize();
  if (status != ENS_OK)
    error("eSpeak NG failed to speak '" + text + "' with voice '" + voice +
          "': " + espeakMessage(status));
  report(true, espeak_ng_GetSampleRate(), samples.data(), samples.size(),
         samples.size() * sizeof(short));
  ::_exit(1); // not reached: report exits
}

/// Speaks `text` with `voice` ("language+variant") at `rate` words per
/// minute and `pitch`: 16-bit samples and their rate. Each utterance is
/// synthesized in a child process of its own: eSpeak NG carries state from
/// one utterance to the next (the same text comes out a few samples
/// longer or shorter), and it cannot be re-initialized in a process.
absl::StatusOr<std::pair<std::vector<short>, int>>
speak(const std::string &text, const std::string &voice, int rate, int pitch) {
  int fds[2];
  if (::pipe(fds) != 0)
    return absl::InternalError(std::string("cannot create a pipe: ") +
                               std::strerror(errno));
  pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return absl::InternalError(std::string("cannot fork: ") +
                               std::strerror(errno));
  }
  if (child == 0) {
    ::close(fds[0]);
    speakAndReport(fds[1], text, voice, rate, pitch);
  }
  ::close(fds[1]);
  ChildReport header{};
  bool received = readAll(fds[0], &header, sizeof(header)) &&
                  header.size >= 0 && header.size < (int64_t(1) << 31);
  std::vector<short> samples;
  std::string message;
  if (received && header.ok) {
    samples.resize(header.size);
    received = readAll(fds[0], samples.data(), header.size * sizeof(short));
  } else if (received) {
    message.resize(header.size);
    received = readAll(fds[0], message.data(), header.size);
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!received || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return absl::InternalError("eSpeak NG's process ended without a result "
                               "for '" +
                               text + "' with voice '" + voice + "'");
  if (!header.ok)
    return absl::FailedPreconditionError(message);
  if (samples.empty())
    return absl::InternalError("eSpeak NG produced no audio for '" + text +
                               "' with voice '" + voice + "'");
  return std::make_pair(std::move(samples), (int)header.sampleRate);
}

/// Adds white Gaussian noise at `snrDb` relative to the samples' power.
void addNoise(std::vector<short> &samples, double snrDb, SplitMix64 &rng) {
  double power = 0;
  for (short s : samples)
    power += (double)s * s;
  power /= samples.size();
  double sigma = std::sqrt(power / std::pow(10.0, snrDb / 10));
  for (short &s : samples) {
    // Box-Muller; uniform() is never 0.
    double u1 = rng.uniform(), u2 = rng.uniform();
    double g = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
    double v = std::nearbyint(s + sigma * g);
    s = (short)std::clamp(v, -32768.0, 32767.0);
  }
}

absl::Status writeWav(const std::string &path, const std::vector<short> &pcm,
                      int rate) {
  SF_INFO info{};
  info.samplerate = rate;
  info.channels = 1;
  info.format = SF_FORMAT_WAV | SF_FORMAT_PCM_16;
  std::string partial = path + ".partial";
  SNDFILE *file = sf_open(partial.c_str(), SFM_WRITE, &info);
  if (!file)
    return absl::InternalError("cannot write '" + path +
                               "': " + sf_strerror(nullptr));
  sf_count_t written = sf_write_short(file, pcm.data(), pcm.size());
  int closed = sf_close(file);
  if (written != (sf_count_t)pcm.size() || closed != 0) {
    llvm::sys::fs::remove(partial);
    return absl::InternalError("cannot write '" + path +
                               "': short write (disk full?)");
  }
  if (std::error_code ec = llvm::sys::fs::rename(partial, path))
    return absl::InternalError("cannot write '" + path + "': " + ec.message());
  return absl::OkStatus();
}

/// A uniform integer in [low, high].
int64_t uniformIn(SplitMix64 &rng, int64_t low, int64_t high) {
  return low + (int64_t)(rng.next() % (uint64_t)(high - low + 1));
}

absl::Status validate(const SpeechTaskOptions &o) {
  auto bad = [](const std::string &what) {
    return absl::InvalidArgumentError(what);
  };
  if (o.trainUtterances < 0 || o.devUtterances < 0 || o.testUtterances < 0)
    return bad("utterance counts must be >= 0");
  if (o.devVariants < 1 || o.testVariants < 1)
    return bad("dev and test need at least one voice variant each");
  if ((size_t)(o.devVariants + o.testVariants) >= kVariants.size())
    return bad("dev and test reserve " +
               std::to_string(o.devVariants + o.testVariants) +
               " voice variants; at most " +
               std::to_string(kVariants.size() - 1) +
               " leave one for training");
  if (o.minWords < 1 || o.maxWords < o.minWords)
    return bad("words per utterance must satisfy 1 <= min <= max, got " +
               std::to_string(o.minWords) + " .. " +
               std::to_string(o.maxWords));
  if (o.minRate < 80 || o.maxRate > 450 || o.maxRate < o.minRate)
    return bad("the speaking rate must lie in 80 .. 450 words per minute, "
               "min <= max");
  if (o.minPitch < 0 || o.maxPitch > 99 || o.maxPitch < o.minPitch)
    return bad("the pitch must lie in 0 .. 99, min <= max");
  if (o.noise && !(std::isfinite(o.minSnrDb) && std::isfinite(o.maxSnrDb) &&
                   o.minSnrDb <= o.maxSnrDb))
    return bad("the SNR range must be finite, min <= max");
  return absl::OkStatus();
}

std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string jsonList(const std::vector<std::string> &items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i)
    out += (i ? ", " : "") + jsonString(items[i]);
  return out + "]";
}

} // namespace

absl::StatusOr<std::vector<std::string>>
speechTaskWords(const std::string &vocabulary) {
  if (vocabulary == "digits")
    return kDigits;
  if (vocabulary == "words")
    return kWords;
  return absl::InvalidArgumentError("unknown vocabulary '" + vocabulary +
                                    "' (known: digits, words)");
}

const std::vector<std::string> &speechTaskAccents() { return kAccents; }
const std::vector<std::string> &speechTaskVariants() { return kVariants; }

absl::StatusOr<std::vector<SpeechUtterance>>
synthesizeSpeechTask(const std::string &dir, const SpeechTaskOptions &options,
                     const std::function<void(int64_t, int64_t)> &progress) {
  absl::StatusOr<std::vector<std::string>> words =
      speechTaskWords(options.vocabulary);
  if (!words.ok())
    return words.status();
  if (absl::Status status = validate(options); !status.ok())
    return status;
  int sampleRate = 0;

  llvm::SmallString<256> root(dir);
  if (std::error_code ec = llvm::sys::fs::make_absolute(root))
    return absl::InvalidArgumentError("bad output directory '" + dir +
                                      "': " + ec.message());
  llvm::sys::path::remove_dots(root, /*remove_dot_dot=*/true);
  llvm::SmallString<256> wavDir(root);
  llvm::sys::path::append(wavDir, "wav");
  if (std::error_code ec = llvm::sys::fs::create_directories(wavDir))
    return absl::InvalidArgumentError("cannot create '" + wavDir.str().str() +
                                      "': " + ec.message());

  // The variants of each split: a seeded shuffle, dev and test first.
  std::vector<std::string> variants = kVariants;
  SplitMix64 splitRng{options.seed * 0x9e3779b97f4a7c15ull + 1};
  splitRng.shuffle(variants);
  std::map<std::string, std::vector<std::string>> splitVariants;
  auto take = [&](size_t begin, size_t end) {
    std::vector<std::string> v(variants.begin() + begin,
                               variants.begin() + end);
    std::sort(v.begin(), v.end());
    return v;
  };
  size_t dev = options.devVariants, test = options.testVariants;
  splitVariants["dev"] = take(0, dev);
  splitVariants["test"] = take(dev, dev + test);
  splitVariants["train"] = take(dev + test, variants.size());
  std::map<std::string, int64_t> counts = {{"train", options.trainUtterances},
                                           {"dev", options.devUtterances},
                                           {"test", options.testUtterances}};

  int64_t total =
      options.trainUtterances + options.devUtterances + options.testUtterances;
  int64_t done = 0;
  std::vector<SpeechUtterance> utterances;
  for (const char *split : kSplits) {
    int64_t count = counts[split];
    const std::vector<std::string> &pool = splitVariants[split];
    std::vector<SpeechUtterance> listed;
    for (int64_t index = 0; index < count; ++index) {
      // Each utterance has its own generator: its content does not depend
      // on how many utterances the other splits have.
      uint64_t splitIndex = split == std::string("train") ? 0
                            : split == std::string("dev") ? 1
                                                          : 2;
      SplitMix64 rng{options.seed * 0x9e3779b97f4a7c15ull + (splitIndex << 40) +
                     (uint64_t)index + 2};
      rng.next();
      SpeechUtterance u;
      u.split = split;
      u.speaker = pool[rng.next() % pool.size()];
      u.accent = kAccents[rng.next() % kAccents.size()];
      int64_t n = uniformIn(rng, options.minWords, options.maxWords);
      for (int64_t w = 0; w < n; ++w)
        u.words.push_back((*words)[rng.next() % words->size()]);
      u.rate = uniformIn(rng, options.minRate, options.maxRate);
      u.pitch = uniformIn(rng, options.minPitch, options.maxPitch);
      u.snrDb = std::numeric_limits<double>::quiet_NaN();
      if (options.noise)
        u.snrDb = options.minSnrDb +
                  (options.maxSnrDb - options.minSnrDb) * rng.uniform();
      char number[24];
      std::snprintf(number, sizeof(number), "%06lld", (long long)index);
      // Kaldi wants the speaker as the id's prefix (sorted utt2spk).
      u.id = u.speaker + "-" + split + "-" + number;

      std::string text;
      for (const std::string &word : u.words)
        text += (text.empty() ? "" : " ") + word;
      auto spoken = speak(text, u.accent + "+" + u.speaker, u.rate, u.pitch);
      if (!spoken.ok())
        return spoken.status();
      auto &[pcm, rate] = *spoken;
      sampleRate = rate;
      if (options.noise)
        addNoise(pcm, u.snrDb, rng);
      llvm::SmallString<256> path(wavDir);
      llvm::sys::path::append(path, u.id + ".wav");
      if (absl::Status status = writeWav(path.str().str(), pcm, rate);
          !status.ok())
        return status;
      listed.push_back(u);
      utterances.push_back(u);
      if (progress)
        progress(++done, total);
    }

    // The split's Kaldi directory, lines sorted by id (byte order).
    std::sort(listed.begin(), listed.end(),
              [](const SpeechUtterance &a, const SpeechUtterance &b) {
                return a.id < b.id;
              });
    std::string wavScp, textFile, utt2spk;
    std::map<std::string, std::vector<std::string>> spk2utt;
    for (const SpeechUtterance &u : listed) {
      llvm::SmallString<256> path(wavDir);
      llvm::sys::path::append(path, u.id + ".wav");
      wavScp += u.id + " " + path.str().str() + "\n";
      textFile += u.id;
      for (const std::string &word : u.words)
        textFile += " " + word;
      textFile += "\n";
      utt2spk += u.id + " " + u.speaker + "\n";
      spk2utt[u.speaker].push_back(u.id);
    }
    std::string spk2uttFile;
    for (const auto &[speaker, ids] : spk2utt) {
      spk2uttFile += speaker;
      for (const std::string &id : ids)
        spk2uttFile += " " + id;
      spk2uttFile += "\n";
    }
    llvm::SmallString<256> splitDir(root);
    llvm::sys::path::append(splitDir, split);
    if (std::error_code ec = llvm::sys::fs::create_directories(splitDir))
      return absl::InvalidArgumentError(
          "cannot create '" + splitDir.str().str() + "': " + ec.message());
    for (auto [name, content] :
         {std::pair<const char *, const std::string *>{"wav.scp", &wavScp},
          {"text", &textFile},
          {"utt2spk", &utt2spk},
          {"spk2utt", &spk2uttFile}}) {
      llvm::SmallString<256> path(splitDir);
      llvm::sys::path::append(path, name);
      if (absl::Status status = writeFileAtomically(path.str().str(), *content);
          !status.ok())
        return status;
    }
  }

  std::string json = "{\n  \"vocabulary\": " + jsonString(options.vocabulary) +
                     ",\n  \"words\": " + jsonList(*words) +
                     ",\n  \"seed\": " + std::to_string(options.seed) +
                     ",\n  \"sample_rate\": " + std::to_string(sampleRate) +
                     ",\n  \"accents\": " + jsonList(kAccents) +
                     ",\n  \"noise\": " + (options.noise ? "true" : "false");
  if (options.noise) {
    char snr[96];
    std::snprintf(snr, sizeof(snr), ",\n  \"snr_db\": [%.17g, %.17g]",
                  options.minSnrDb, options.maxSnrDb);
    json += snr;
  }
  json += ",\n  \"splits\": {";
  for (const char *split : kSplits)
    json += std::string(split == std::string("train") ? "" : ",") + "\n    " +
            jsonString(split) +
            ": {\"utterances\": " + std::to_string(counts[split]) +
            ", \"variants\": " + jsonList(splitVariants[split]) + "}";
  json += "\n  }\n}\n";
  llvm::SmallString<256> taskPath(root);
  llvm::sys::path::append(taskPath, "task.json");
  if (absl::Status status = writeFileAtomically(taskPath.str().str(), json);
      !status.ok())
    return status;
  // The character vocabulary of every word the task can speak, so that
  // each split imports with the same classes (nn-data import --vocab).
  std::string tokens;
  for (const std::string &token : characterVocabulary(*words))
    tokens += token + "\n";
  llvm::SmallString<256> tokensPath(root);
  llvm::sys::path::append(tokensPath, "tokens.txt");
  if (absl::Status status = writeFileAtomically(tokensPath.str().str(), tokens);
      !status.ok())
    return status;
  return utterances;
}

} // namespace nn::data
