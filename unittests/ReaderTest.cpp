//===- ReaderTest.cpp - the runtime's readers of untrusted input ----------===//
//
// .npy/.npz files and artifact manifests come from users: each malformed
// input here must give an error naming the file, member and field, never a
// crash or a large allocation. Links the runtime alone, so that it also runs
// in the sanitizer build (scripts/fuzz.sh). Fixtures: unittests/data/npz,
// written by numpy 1.26.4 and 2.4.6 (make_fixtures.py).
//
//===----------------------------------------------------------------------===//

#include "nn/Npy.h"
#include "nn/Runtime.h"
#include "nn/Train.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace nn;

namespace {

std::string fixture(const std::string &name) {
  return std::string(NN_SOURCE_DIR) + "/unittests/data/npz/" + name;
}

std::string readBytes(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

/// A .npy file with `dict` as its header and `data` after it.
std::string npy(const std::string &dict, const std::string &data = "") {
  std::string header = dict;
  header += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += (char)(header.size() & 0xff);
  out += (char)(header.size() >> 8);
  return out + header + data;
}

std::string npyError(const std::string &dict, const std::string &data = "") {
  Tensor tensor;
  absl::Status status = parseNpy(npy(dict, data), "'h.npy'", tensor);
  EXPECT_FALSE(status.ok()) << dict;
  return std::string(status.message());
}

#define EXPECT_CONTAINS(text, part)                                            \
  EXPECT_NE(std::string(text).find(part), std::string::npos)                   \
      << "expected '" << (part) << "' in: " << (text)

/// The arrays make_fixtures.py saves.
void expectFixtureArrays(const std::map<std::string, Tensor> &arrays) {
  ASSERT_EQ(arrays.size(), 5u);
  const Tensor &x = arrays.at("x");
  EXPECT_EQ(x.dtype(), DType::f32);
  EXPECT_EQ(x.shape(), (std::vector<int64_t>{2, 3}));
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(x.at(i), i * 0.5 - 1) << i;
  const Tensor &d = arrays.at("d");
  EXPECT_EQ(d.dtype(), DType::f64);
  EXPECT_EQ(d.at(0), 0.25);
  EXPECT_EQ(d.at(1), -3.5);
  const Tensor &labels = arrays.at("labels");
  EXPECT_EQ(labels.dtype(), DType::i32);
  EXPECT_EQ(labels.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(labels.at(3), -1);
  const Tensor &lengths = arrays.at("lengths.T");
  EXPECT_EQ(lengths.dtype(), DType::i64);
  EXPECT_EQ(lengths.at(0), 3);
  EXPECT_EQ(lengths.at(1), 1);
  const Tensor &scalar = arrays.at("scalar");
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.at(0), 7);
}

class NumpyFixtureTest : public ::testing::TestWithParam<std::string> {};

TEST_P(NumpyFixtureTest, Loads) {
  std::map<std::string, Tensor> arrays;
  absl::Status status = readNpz(fixture(GetParam()), arrays);
  ASSERT_TRUE(status.ok()) << status.message();
  expectFixtureArrays(arrays);
}

INSTANTIATE_TEST_SUITE_P(Archives, NumpyFixtureTest,
                         ::testing::Values("numpy1-savez.npz",
                                           "numpy1-savez_compressed.npz",
                                           "numpy1-savez_streamed.npz",
                                           "numpy2-savez.npz",
                                           "numpy2-savez_compressed.npz",
                                           "numpy2-savez_streamed.npz"),
                         [](const auto &info) {
                           std::string name = info.param;
                           name = name.substr(0, name.size() - 4);
                           for (char &c : name)
                             if (!std::isalnum((unsigned char)c))
                               c = '_';
                           return name;
                         });

TEST(NpyTest, LoadsNpyFromBothNumpyVersions) {
  for (const char *name : {"numpy1-x.npy", "numpy2-x.npy"}) {
    Tensor x;
    absl::Status status = readNpy(fixture(name), x);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(x.shape(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(x.at(5), 1.5);
  }
}

TEST(NpyTest, RoundTripsEveryDtypeAndRank) {
  std::string dir = ::testing::TempDir();
  std::map<std::string, Tensor> arrays;
  arrays["a"] = Tensor::of<float>(DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6});
  arrays["b"] = Tensor::of<double>(DType::f64, {4}, {0.5, -1, 2, 3});
  arrays["c"] = Tensor::of<int32_t>(DType::i32, {1, 1, 2}, {7, -8});
  arrays["d"] = Tensor::of<int64_t>(DType::i64, {}, {42});
  arrays["e"] = Tensor(DType::f32, {0, 3});
  std::string npz = dir + "/arrays.npz";
  ASSERT_TRUE(writeNpz(npz, arrays).ok());
  std::map<std::string, Tensor> read;
  absl::Status status = readNpz(npz, read);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(read.size(), arrays.size());
  for (const auto &[key, tensor] : arrays) {
    EXPECT_EQ(read[key].dtype(), tensor.dtype()) << key;
    EXPECT_EQ(read[key].shape(), tensor.shape()) << key;
    for (int64_t i = 0; i < tensor.numElements(); ++i)
      EXPECT_EQ(read[key].at(i), tensor.at(i)) << key;
  }
  std::string path = dir + "/a.npy";
  ASSERT_TRUE(writeNpy(path, arrays["a"]).ok());
  Tensor single;
  ASSERT_TRUE(readNpy(path, single).ok());
  EXPECT_EQ(single.shape(), (std::vector<int64_t>{2, 3}));
}

TEST(NpyTest, ParsesTheHeaderStrictly) {
  const std::string f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': ";
  Tensor tensor;
  // What numpy writes parses (a 1-tuple has its comma; 0-d is ()).
  ASSERT_TRUE(
      parseNpy(npy(f4 + "(2,), }", std::string(8, '\0')), "'h.npy'", tensor)
          .ok());
  ASSERT_TRUE(
      parseNpy(npy(f4 + "(), }", std::string(4, '\0')), "'h.npy'", tensor)
          .ok());
  EXPECT_CONTAINS(npyError(f4 + "(-3,), }", std::string(12, '\0')),
                  "'h.npy': .npy header field 'shape' entry 0 is not a "
                  "non-negative integer");
  EXPECT_CONTAINS(npyError(f4 + "(3, 1e2), }"),
                  "field 'shape' entry 1 is followed by neither ',' nor ')'");
  EXPECT_CONTAINS(npyError(f4 + "(99999999999999999999,), }"),
                  "field 'shape' entry 0 does not fit in 64 bits");
  EXPECT_CONTAINS(npyError(f4 + "(3), }"), "(n) is not a tuple");
  EXPECT_CONTAINS(npyError(f4 + "3, }"), "field 'shape' is not a tuple");
  EXPECT_CONTAINS(
      npyError("{'descr': '<f4', 'shape': (1,), }", std::string(4, '\0')),
      "lacks key 'fortran_order'");
  EXPECT_CONTAINS(npyError("{'descr': '<f4', 'fortran_order': False, "
                           "'shape': (1,), 'extra': 1, }"),
                  "unknown key 'extra'");
  EXPECT_CONTAINS(npyError("{'descr': '<f4', 'descr': '<f4', }"),
                  "repeats key 'descr'");
  EXPECT_CONTAINS(npyError(f4 + "(1,), } trailing"),
                  "has text after the header dict");
  EXPECT_CONTAINS(npyError("{'descr': '<f2', 'fortran_order': False, "
                           "'shape': (1,), }",
                           "ab"),
                  "has dtype '<f2'");
  EXPECT_CONTAINS(npyError("{'descr': '<f4', 'fortran_order': True, "
                           "'shape': (1,), }",
                           std::string(4, '\0')),
                  "Fortran order");
  EXPECT_CONTAINS(npyError(f4), "field 'shape' is not a tuple");
  EXPECT_CONTAINS(npyError("['descr']"), "does not start with '{'");
}

TEST(NpyTest, ChecksSizesBeforeAllocating) {
  const std::string f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': ";
  // 2^62 * 4 * 4 bytes wraps to 0 in 64 bits: the product is checked.
  EXPECT_CONTAINS(npyError(f4 + "(4611686018427387904, 4), }"),
                  "declares shape [4611686018427387904, 4], whose byte size "
                  "overflows 64 bits");
  // A huge but representable shape is compared with the bytes present
  // before anything is allocated (this would be 16 TB).
  EXPECT_CONTAINS(npyError(f4 + "(4000000000000,), }", "abcd"),
                  "'h.npy' holds 4 data bytes, its header (shape "
                  "[4000000000000], f32) promises 16000000000000");
  Tensor tensor;
  std::string truncated = npy(f4 + "(1,), }").substr(0, 20);
  EXPECT_CONTAINS(parseNpy(truncated, "'t.npy'", tensor).message(),
                  "'t.npy' is truncated: its header promises");
}

/// A stored zip archive of one member, as numpy 1.x wrote them.
std::string storedArchive(const std::string &name, const std::string &data,
                          uint32_t crc) {
  auto put16 = [](std::string &out, uint32_t v) {
    out += (char)(v & 0xff);
    out += (char)(v >> 8 & 0xff);
  };
  auto put32 = [&](std::string &out, uint32_t v) {
    put16(out, v & 0xffff);
    put16(out, v >> 16);
  };
  std::string out, central;
  for (bool isCentral : {false, true}) {
    std::string &to = isCentral ? central : out;
    put32(to, isCentral ? 0x02014b50 : 0x04034b50);
    if (isCentral)
      put16(to, 20);
    put16(to, 20);
    put16(to, 0);
    put16(to, 0);
    put32(to, 0);
    put32(to, crc);
    put32(to, data.size());
    put32(to, data.size());
    put16(to, name.size());
    put16(to, 0);
    if (isCentral) {
      put16(to, 0);
      put16(to, 0);
      put16(to, 0);
      put32(to, 0);
      put32(to, 0);
    }
    to += name;
    if (!isCentral)
      to += data;
  }
  uint32_t directory = out.size();
  out += central;
  put32(out, 0x06054b50);
  put32(out, 0);
  put16(out, 1);
  put16(out, 1);
  put32(out, central.size());
  put32(out, directory);
  put16(out, 0);
  return out;
}

std::string npzError(const std::string &bytes) {
  std::map<std::string, Tensor> arrays;
  absl::Status status = parseNpz(bytes, "'a.npz'", arrays);
  EXPECT_FALSE(status.ok());
  return std::string(status.message());
}

TEST(NpzTest, RejectsDamagedArchives) {
  std::string good = readBytes(fixture("numpy2-savez.npz"));
  ASSERT_FALSE(good.empty());
  EXPECT_CONTAINS(npzError("PK"), "too short for a zip file");
  EXPECT_CONTAINS(npzError(good.substr(0, good.size() / 2)),
                  "no zip end-of-directory record");
  // A flipped data byte of member x.npy: its CRC-32 no longer matches.
  std::string flipped = good;
  size_t data = flipped.find("\x93NUMPY");
  ASSERT_NE(data, std::string::npos);
  flipped[data + 100] ^= 0x55;
  EXPECT_CONTAINS(npzError(flipped),
                  "'a.npz' member 'x.npy' fails its CRC-32 check");
  // The central directory's offset pointing past the end.
  std::string moved = good;
  size_t end = moved.rfind("PK\x05\x06");
  ASSERT_NE(end, std::string::npos);
  moved[end + 16 + 3] = 0x7f;
  EXPECT_CONTAINS(npzError(moved), "lies outside the");
}

TEST(NpzTest, RefusesImpossibleDeflateSizes) {
  // numpy.savez_compressed's first member claims 2^31 uncompressed bytes
  // from a few hundred: refused before the output is allocated.
  std::string bytes = readBytes(fixture("numpy2-savez_compressed.npz"));
  size_t directory = bytes.find("PK\x01\x02");
  ASSERT_NE(directory, std::string::npos);
  // The directory record's uncompressed size, at +24.
  std::string claim("\x00\x00\x00\x80", 4);
  bytes.replace(directory + 24, 4, claim);
  EXPECT_CONTAINS(npzError(bytes), "claims 2147483648 bytes from");
}

TEST(NpzTest, NamesAreBoundedAndEscaped) {
  std::string name(3000, '\x01');
  name.replace(0, 5, "bad\xff\n");
  std::string bytes = storedArchive(name, "not numpy", 0);
  std::string message = npzError(bytes);
  EXPECT_LT(message.size(), 400u) << message;
  EXPECT_CONTAINS(message, "'a.npz' member 'bad\\xff\\x0a\\x01");
  EXPECT_CONTAINS(message, "(3000 bytes)");
}

TEST(NpzTest, MembersMustBeNpyArrays) {
  // "hello" with its CRC-32: the archive is sound, the member is no array.
  EXPECT_CONTAINS(npzError(storedArchive("x.npy", "hello", 0x3610a686)),
                  "member 'x.npy' is not a .npy array (bad magic)");
}

TEST(NpyTest, ReadErrorsNameTheFile) {
  Tensor tensor;
  absl::Status missing = readNpy("/nonexistent/x.npy", tensor);
  EXPECT_CONTAINS(missing.message(), "cannot open '/nonexistent/x.npy'");
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(parseNpy("junk", "'j.npy'", tensor).code(),
            absl::StatusCode::kInvalidArgument);
  std::map<std::string, Tensor> arrays;
  EXPECT_CONTAINS(readNpz(fixture("numpy1-x.npy"), arrays).message(),
                  "numpy1-x.npy' is not an .npz archive");
}

/// Every reader refuses what is not a regular file, at once: a FIFO no one
/// writes (a plain open waits for a writer), /dev/zero (never ends), a
/// directory. In a child, so that a reader that blocks fails the test
/// instead of hanging it.
TEST(ReaderTest, RefusesWhatIsNotARegularFile) {
  std::string dir =
      ::testing::TempDir() + "/nn-reader-fifo-" + std::to_string(getpid());
  mkdir(dir.c_str(), 0755);
  std::string fifo = dir + "/x.npz";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(10);
    Tensor tensor;
    std::map<std::string, Tensor> arrays;
    Executable exe;
    auto says = [](const absl::Status &status, const std::string &what) {
      return status.code() == absl::StatusCode::kInvalidArgument &&
             std::string(status.message()).find(what) != std::string::npos;
    };
    bool ok = says(readNpy(fifo, tensor), "'" + fifo + "' is a FIFO") &&
              says(readNpz(fifo, arrays), "'" + fifo + "' is a FIFO") &&
              says(Executable::load(fifo, exe), "'" + fifo + "' is a FIFO") &&
              says(readNpz("/dev/zero", arrays),
                   "'/dev/zero' is a character device") &&
              says(readNpy("/dev/zero", tensor),
                   "'/dev/zero' is a character device") &&
              says(Executable::load("/dev/zero", exe),
                   "'/dev/zero' is a character device") &&
              says(readNpz(dir, arrays), "'" + dir + "' is a directory");
    _exit(ok ? 0 : 1);
  }
  int result = 0;
  ASSERT_EQ(waitpid(child, &result, 0), child);
  EXPECT_TRUE(WIFEXITED(result) && WEXITSTATUS(result) == 0)
      << (WIFSIGNALED(result) ? "a reader blocked on the FIFO"
                              : "a reader gave the wrong error");
  unlink(fifo.c_str());
  rmdir(dir.c_str());
}

//===----------------------------------------------------------------------===//
// Writers
//===----------------------------------------------------------------------===//

/// The arrays nn-writer-golden.npz holds: written by the writer that built
/// the whole archive in memory, before it streamed members to the file.
std::map<std::string, Tensor> goldenArrays() {
  std::map<std::string, Tensor> arrays;
  arrays["a"] = Tensor::of<float>(DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6});
  arrays["b"] = Tensor::of<double>(DType::f64, {4}, {0.5, -1, 2, 3});
  arrays["c"] = Tensor::of<int32_t>(DType::i32, {1, 1, 2}, {7, -8});
  arrays["d"] = Tensor::of<int64_t>(DType::i64, {}, {42});
  arrays["e"] = Tensor(DType::f32, {0, 3});
  arrays["grad:out.w"] =
      Tensor::of<float>(DType::f32, {100}, std::vector<float>(100, 0.25f));
  return arrays;
}

std::string writerScratch(const std::string &name) {
  std::string dir = ::testing::TempDir() + "/nn-writer-" + name + "-" +
                    std::to_string(getpid());
  mkdir(dir.c_str(), 0755);
  return dir;
}

bool pathExists(const std::string &path) {
  struct stat info;
  return lstat(path.c_str(), &info) == 0;
}

TEST(NpzWriterTest, StreamedArchivesAreByteIdenticalToTheOldWriter) {
  std::string dir = writerScratch("golden");
  std::map<std::string, Tensor> arrays = goldenArrays();
  ASSERT_TRUE(writeNpz(dir + "/x.npz", arrays).ok());
  EXPECT_EQ(readBytes(dir + "/x.npz"),
            readBytes(fixture("nn-writer-golden.npz")));
  EXPECT_FALSE(pathExists(dir + "/x.npz.partial"));
  ASSERT_TRUE(writeNpy(dir + "/a.npy", arrays["a"]).ok());
  EXPECT_EQ(readBytes(dir + "/a.npy"),
            readBytes(fixture("nn-writer-golden.npy")));
  std::map<std::string, Tensor> read;
  ASSERT_TRUE(readNpz(dir + "/x.npz", read).ok());
  ASSERT_EQ(read.size(), arrays.size());
  for (const auto &[key, tensor] : arrays) {
    EXPECT_EQ(read[key].shape(), tensor.shape()) << key;
    ASSERT_EQ(read[key].sizeInBytes(), tensor.sizeInBytes()) << key;
    EXPECT_EQ(std::memcmp(read[key].raw(), tensor.raw(), tensor.sizeInBytes()),
              0)
        << key;
  }
}

/// A tensor of `bytes` zero bytes that costs no memory: pages of an
/// anonymous mapping that is never touched (the size checks refuse it
/// before any byte is read).
Tensor untouchedTensor(uint64_t bytes) {
  void *memory = mmap(nullptr, bytes, PROT_READ,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  EXPECT_NE(memory, MAP_FAILED);
  std::shared_ptr<void> owner(memory, [bytes](void *at) { munmap(at, bytes); });
  return Tensor::adopt(DType::f32, {(int64_t)(bytes / 4)}, memory, owner);
}

TEST(NpzWriterTest, RefusesWhatZipWithoutZip64CannotHold) {
  std::string dir = writerScratch("limits");
  std::string path = dir + "/x.npz";
  auto refused = [&](const std::map<std::string, Tensor> &arrays) {
    absl::Status status = writeNpz(path, arrays);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_FALSE(pathExists(path));
    EXPECT_FALSE(pathExists(path + ".partial"));
    return std::string(status.message());
  };
  std::map<std::string, Tensor> many;
  for (int i = 0; i < 65535; ++i)
    many["a" + std::to_string(i)] = Tensor(DType::f32, {0});
  EXPECT_CONTAINS(refused(many),
                  "cannot write '" + path +
                      "': 65535 arrays are more than a zip archive holds "
                      "(65534) (this writer makes no zip64 records)");
  many.erase(many.begin());
  ASSERT_TRUE(writeNpz(path, many).ok());
  std::map<std::string, Tensor> read;
  ASSERT_TRUE(readNpz(path, read).ok());
  EXPECT_EQ(read.size(), 65534u);
  unlink(path.c_str());

  std::map<std::string, Tensor> longName;
  longName[std::string(65532, 'n')] = Tensor(DType::f32, {1});
  EXPECT_CONTAINS(refused(longName),
                  "is 65532 bytes, more than a zip member name holds");
  std::map<std::string, Tensor> large;
  large["w"] = untouchedTensor(uint64_t{4} << 30);
  EXPECT_CONTAINS(refused(large), "array 'w' takes 4294967424 bytes, 4 GiB or "
                                  "more");
  std::map<std::string, Tensor> total;
  total["u"] = untouchedTensor(uint64_t{2} << 30);
  total["v"] = untouchedTensor(uint64_t{2} << 30);
  EXPECT_CONTAINS(refused(total), "the archive would take");
}

/// A full disk (the partial file is a link to /dev/full) and a write
/// refused part way (RLIMIT_FSIZE, in a child): the error says why, and
/// neither the file nor its partial file is left; a checkpoint likewise.
TEST(NpzWriterTest, FailedWritesSayWhyAndLeaveNothing) {
  std::string dir = writerScratch("full");
  std::map<std::string, Tensor> arrays = goldenArrays();
  std::string npz = dir + "/x.npz", npy = dir + "/x.npy",
              checkpoint = dir + "/step-00000001.npz";
  TrainState state;
  state.parameters = arrays;
  state.parameters.erase("e");
  for (const std::string &path : {npz, npy, checkpoint}) {
    ASSERT_EQ(symlink("/dev/full", (path + ".partial").c_str()), 0);
    absl::Status status = path == npz   ? writeNpz(path, arrays)
                          : path == npy ? writeNpy(path, arrays["a"])
                                        : saveCheckpoint(path, state);
    EXPECT_EQ(status.message(),
              "cannot write '" + path + ".partial': No space left on device");
    EXPECT_FALSE(pathExists(path + ".partial")) << path;
    EXPECT_FALSE(pathExists(path)) << path;
  }
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit{1000, 1000};
    setrlimit(RLIMIT_FSIZE, &limit);
    absl::Status status = saveCheckpoint(checkpoint, state);
    _exit(status.message() == "cannot write '" + checkpoint +
                                  ".partial': File too large" &&
                  !pathExists(checkpoint) &&
                  !pathExists(checkpoint + ".partial")
              ? 0
              : 1);
  }
  int result = 0;
  ASSERT_EQ(waitpid(child, &result, 0), child);
  EXPECT_TRUE(WIFEXITED(result) && WEXITSTATUS(result) == 0);
  ASSERT_TRUE(saveCheckpoint(checkpoint, state).ok());
  TrainState loaded;
  ASSERT_TRUE(loadCheckpoint(checkpoint, loaded).ok());
  EXPECT_EQ(loaded.parameters.size(), state.parameters.size());
}

//===----------------------------------------------------------------------===//
// Manifests
//===----------------------------------------------------------------------===//

const char *kManifest = "nn-artifact 5\n"
                        "graph g\n"
                        "target cpu\n"
                        "dim B batch\n"
                        "dim T seq B\n"
                        "dim T2 seq B T 2\n"
                        "dim N packed B T2\n"
                        "root B\n"
                        "root T\n"
                        "input x f32 0 -1 3 B T 4\n"
                        "input y i32 5 0 2 B T2\n"
                        "param w f32 2 5 4\n"
                        "output result0 f32 2 N 5\n"
                        "saved nn.tanh%20at%20m.mlir:3:5 f32 2 N 5\n"
                        "saved nn.lstm_with_tape%20#1 f32 3 2 T B\n"
                        "loss ce per_frame 1 1 0 packed B 1 T2\n"
                        "end\n";

std::string manifestError(const std::string &from, const std::string &to) {
  std::string text = kManifest;
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  Manifest manifest;
  absl::Status status = Manifest::parse(text, manifest);
  EXPECT_FALSE(status.ok()) << "no error for " << to;
  return std::string(status.message());
}

TEST(ManifestTest, ParsesAndRoundTrips) {
  Manifest manifest;
  absl::Status status = Manifest::parse(kManifest, manifest);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(manifest.serialize(), kManifest);
  EXPECT_EQ(manifest.inputs[1].classes, 5);
  EXPECT_EQ(manifest.inputs[1].reservedClass, 0);
  // Saved values: names decoded, named dims in any position.
  ASSERT_EQ(manifest.saved.size(), 2u);
  EXPECT_EQ(manifest.saved[0].name, "nn.tanh at m.mlir:3:5");
  EXPECT_EQ(manifest.saved[1].axes[1].dim, "T");
  // results, B, T + lengths, x, y, w.
  EXPECT_EQ(manifest.entryArity(), 7);
  EXPECT_NE(Manifest::hash(kManifest),
            Manifest::hash(manifest.serialize() + " "));
  EXPECT_FALSE(manifest.dataParallel);
  // A data-parallel step says so, once, before its end.
  std::string parallel = kManifest;
  parallel.replace(parallel.rfind("end\n"), 4, "data-parallel\nend\n");
  ASSERT_TRUE(Manifest::parse(parallel, manifest).ok());
  EXPECT_TRUE(manifest.dataParallel);
  EXPECT_EQ(manifest.serialize(), parallel);
}

TEST(ManifestTest, ComputedDimsHaveALengthsOutputAndNoCaller) {
  // A decoder's hypotheses Y, returned with their lengths; Y1 follows.
  const std::string text = "nn-artifact 5\n"
                           "graph g\n"
                           "target cpu\n"
                           "dim B batch\n"
                           "dim T seq B\n"
                           "dim Y seq B computed\n"
                           "dim Y1 seq B Y 1 1\n"
                           "root B\n"
                           "root T\n"
                           "input x f32 0 -1 3 B T 4\n"
                           "output result0 i32 2 B Y1\n"
                           "output lengths:Y i32 1 B\n"
                           "end\n";
  Manifest manifest;
  absl::Status status = Manifest::parse(text, manifest);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(manifest.serialize(), text);
  ASSERT_NE(manifest.findDim("Y"), nullptr);
  EXPECT_TRUE(manifest.findDim("Y")->computed);
  EXPECT_EQ(manifest.entryArity(), 5); // results, B, T + lengths, x
  // What follows from a computed dim is derived once its lengths exist.
  DimValues values;
  values.sizes = {{"B", 2}, {"T", 4}};
  values.lengths = {{"T", {4, 2}}};
  deriveDims(manifest, values);
  EXPECT_FALSE(values.sizes.count("Y1"));
  values.sizes["Y"] = 3;
  values.lengths["Y"] = {3, 0};
  deriveDims(manifest, values);
  EXPECT_EQ(values.sizes.at("Y1"), 4);
  EXPECT_EQ(values.lengths.at("Y1"), (std::vector<int32_t>{4, 1}));

  auto error = [&](const std::string &from, const std::string &to) {
    std::string damaged = text;
    damaged.replace(damaged.find(from), from.size(), to);
    Manifest m;
    absl::Status s = Manifest::parse(damaged, m);
    EXPECT_FALSE(s.ok()) << to;
    return std::string(s.message());
  };
  EXPECT_CONTAINS(error("output lengths:Y i32 1 B\n", ""),
                  "computed dim 'Y' has no output 'lengths:Y' of type i32 [B]");
  EXPECT_CONTAINS(error("output lengths:Y i32 1 B", "output lengths:Y f32 1 B"),
                  "computed dim 'Y' has no output 'lengths:Y'");
  EXPECT_CONTAINS(error("root T\n", "root T\nroot Y\n"),
                  "root 'Y' is not a declared batch or root sequence dim");
  EXPECT_CONTAINS(
      error("input x f32 0 -1 3 B T 4", "input x f32 0 -1 3 B Y1 4"),
      "input 'x' axis 1 names dim 'Y1', whose lengths the graph "
      "computes");
  EXPECT_CONTAINS(error("dim Y seq B computed", "dim Y seq B calculated"),
                  "bad dim record");
}

TEST(ManifestTest, NBestListsFlattenTheirBatchAndLiftSequences) {
  // A search's N-best list: K hypotheses per sequence, H = flatten(B, K),
  // each hypothesis's length Y over H, and T lifted onto H.
  const std::string text = "nn-artifact 5\n"
                           "graph g\n"
                           "target cpu\n"
                           "dim B batch\n"
                           "dim T seq B\n"
                           "dim K seq B computed\n"
                           "dim H batch flatten B K\n"
                           "dim Y seq H computed\n"
                           "dim TH seq H lift T\n"
                           "root B\n"
                           "root T\n"
                           "input x f32 0 -1 3 B T 4\n"
                           "output result0 i32 3 B K Y\n"
                           "output result1 f32 3 H TH 4\n"
                           "output lengths:K i32 1 B\n"
                           "output lengths:Y i32 1 H\n"
                           "end\n";
  Manifest manifest;
  absl::Status status = Manifest::parse(text, manifest);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(manifest.serialize(), text);
  EXPECT_TRUE(manifest.findDim("H")->isFlatten());
  EXPECT_TRUE(manifest.findDim("TH")->lift);
  EXPECT_EQ(manifest.entryArity(), 5); // results, B, T + lengths, x

  // H and TH follow once K is known; Y's lengths run over H, and a
  // position [b, k, y] reads entry offset(b) + k.
  DimValues values;
  values.sizes = {{"B", 3}, {"T", 5}};
  values.lengths = {{"T", {5, 0, 3}}};
  deriveDims(manifest, values);
  EXPECT_FALSE(values.sizes.count("H"));
  values.sizes["K"] = 2;
  values.lengths["K"] = {2, 1, 2};
  deriveDims(manifest, values);
  EXPECT_EQ(values.sizes.at("H"), 5);
  EXPECT_EQ(values.offsets.at("H"), (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(values.sizes.at("TH"), 5);
  EXPECT_EQ(values.lengths.at("TH"), (std::vector<int32_t>{5, 5, 0, 3, 3}));
  values.sizes["Y"] = 4;
  values.lengths["Y"] = {4, 1, 0, 2, 3};
  std::vector<Axis> nBest{Axis{"B"}, Axis{"K"}, Axis{"Y"}};
  EXPECT_TRUE(values.isValid(nBest, {0, 1, 0}));
  EXPECT_FALSE(values.isValid(nBest, {0, 1, 1})); // entry 1 has length 1
  EXPECT_FALSE(values.isValid(nBest, {1, 1, 0})); // sequence 1 has 1 hypothesis
  EXPECT_TRUE(values.isValid(nBest, {2, 1, 2}));  // entry 4 has length 3
  EXPECT_FALSE(values.isValid(nBest, {2, 0, 2})); // entry 3 has length 2
  std::vector<Axis> flat{Axis{"H"}, Axis{"TH"}};
  EXPECT_FALSE(values.isValid(flat, {2, 0})); // sequence 1 has no frames
  EXPECT_TRUE(values.isValid(flat, {4, 2}));

  auto error = [&](const std::string &from, const std::string &to) {
    std::string damaged = text;
    damaged.replace(damaged.find(from), from.size(), to);
    Manifest m;
    absl::Status s = Manifest::parse(damaged, m);
    EXPECT_FALSE(s.ok()) << to;
    return std::string(s.message());
  };
  EXPECT_CONTAINS(error("dim H batch flatten B K", "dim H batch flatten B T2"),
                  "dim 'H': 'T2' is not a sequence dim of 'B'");
  EXPECT_CONTAINS(error("dim TH seq H lift T", "dim TH seq B lift T"),
                  "dim 'TH': lifts 'T' onto 'B', which is not a flattened "
                  "batch of its batch");
  EXPECT_CONTAINS(error("dim Y seq H computed", "dim Y seq H"),
                  "a sequence dim of the flattened batch 'H' must be "
                  "computed, lifted or derived");
  EXPECT_CONTAINS(
      error("output result0 i32 3 B K Y", "output result0 i32 3 B T Y"),
      "output 'result0' axis 2 ('Y') is not a valid position axis");
  EXPECT_CONTAINS(error("dim H batch flatten B K", "dim H batch flatten B"),
                  "bad dim record");
}

TEST(ManifestTest, RejectsEveryDamagedRecord) {
  EXPECT_CONTAINS(manifestError("dim T2 seq B T 2", "dim T2 seq B T 0"),
                  "manifest line 6: field 5 is not an integer in [1, ");
  EXPECT_CONTAINS(manifestError("dim T2 seq B T 2", "dim T2 seq B Q 2"),
                  "dim 'T2': 'Q' is not a sequence dim of the same batch");
  EXPECT_CONTAINS(manifestError("dim T seq B", "dim T seq C"),
                  "dim 'T': 'C' is not a batch dim declared before it");
  EXPECT_CONTAINS(manifestError("dim N packed B T2", "dim N packed B X"),
                  "dim 'N': 'X' is not a sequence dim");
  EXPECT_CONTAINS(manifestError("root T\n", ""),
                  "dim 'T' has no 'root' record");
  EXPECT_CONTAINS(manifestError("root T\n", "root T2\n"),
                  "root 'T2' is not a declared batch or root sequence dim");
  EXPECT_CONTAINS(manifestError("root T\n", "root T\nroot T\n"),
                  "root 'T' is listed twice");
  EXPECT_CONTAINS(manifestError("dim B batch", "dim B batch\ndim B batch"),
                  "dim 'B' is declared twice");
  EXPECT_CONTAINS(manifestError("3 B T 4", "3 B Z 4"),
                  "input 'x' axis 1 names an undeclared dim 'Z'");
  EXPECT_CONTAINS(manifestError("3 B T 4", "3 4 T B"),
                  "input 'x' axis 1 ('T') is not a valid position axis");
  EXPECT_CONTAINS(manifestError("3 B T 4", "3 T B 4"),
                  "is not a valid position axis");
  EXPECT_CONTAINS(manifestError("param w f32 2 5 4", "param w f32 2 B 4"),
                  "param 'w' axis 0 ('B') is not a valid position axis");
  EXPECT_CONTAINS(
      manifestError("param w f32 2 5 4", "param w f32 2 4611686018427387904 4"),
      "param 'w' has static sizes [4611686018427387904, 4] whose byte size "
      "overflows 64 bits");
  EXPECT_CONTAINS(manifestError("3 B T 4", "3 B T -4"), "not an integer");
  EXPECT_CONTAINS(manifestError("3 B T 4", "3 B T 99999999999999999999999"),
                  "not an integer");
  EXPECT_CONTAINS(manifestError("3 B T 4", "3 B T 4x"), "not an integer");
  EXPECT_CONTAINS(manifestError("input y i32 5 0", "input y i32 5 7"),
                  "input 'y' reserves class 7 outside [0, 5)");
  EXPECT_CONTAINS(manifestError("input y i32 5 0", "input y i32 x 0"),
                  "not an integer");
  EXPECT_CONTAINS(manifestError("f32 0 -1 3", "f32 0 -1 40"), "bad rank");
  EXPECT_CONTAINS(manifestError("f32 0 -1 3", "f16 0 -1 3"), "bad dtype");
  EXPECT_CONTAINS(manifestError("per_frame", "per_nothing"),
                  "unknown normalization 'per_nothing'");
  EXPECT_CONTAINS(manifestError("per_frame 1 1", "per_frame nan 1"),
                  "loss scale is not a finite number");
  EXPECT_CONTAINS(manifestError("packed B 1 T2", "packed B 0"),
                  "is packed over 0 sequence dims");
  EXPECT_CONTAINS(manifestError("packed B 1 T2", "packed B 1 Q"),
                  "'Q' is not a sequence dim of 'B'");
  EXPECT_CONTAINS(manifestError("packed B", "packed T"),
                  "'T' is not a batch dim");
  EXPECT_CONTAINS(manifestError("graph g\n", ""), "no 'graph' record");
  EXPECT_CONTAINS(manifestError("graph g\n", "graph g\ngraph h\n"),
                  "repeated 'graph' record");
  EXPECT_CONTAINS(manifestError("graph g", "graph g%zz"), "bad name");
  EXPECT_CONTAINS(manifestError("graph g", "graph g%00"), "bad name");
  // Found by nn-fuzz-manifest: raw NUL bytes in a name parsed, and the
  // name no longer round-tripped through serialize().
  EXPECT_CONTAINS(manifestError("graph g", std::string("graph g\0\0s", 10)),
                  "bad name");
  EXPECT_CONTAINS(manifestError("graph g", "graph g\xff"), "bad name");
  // Any well-formed target parses (DeviceRegistryTest: the registry
  // refuses one no backend runs, at load); a malformed one does not.
  EXPECT_CONTAINS(manifestError("target cpu", "target TPU"),
                  "malformed target");
  EXPECT_CONTAINS(manifestError("end\n", "end\nextra\n"), "text after 'end'");
  EXPECT_CONTAINS(manifestError("f32 3 2 T B", "f32 3 2 T Q"),
                  "saved value 'nn.lstm_with_tape #1' axis 2 names an "
                  "undeclared dim 'Q'");
  EXPECT_CONTAINS(manifestError("f32 3 2 T B", "f32 3 4611686018427387904 T 2"),
                  "whose byte size overflows 64 bits");
  EXPECT_CONTAINS(manifestError("f32 3 2 T B", "f32 4 2 T B"), "bad rank");
  EXPECT_CONTAINS(manifestError("end\n", ""), "missing header or end");
  EXPECT_CONTAINS(manifestError("nn-artifact 5", "nn-artifact 4"),
                  "unsupported artifact version (this runtime reads 5");
  EXPECT_CONTAINS(manifestError("end\n", "hostvisible 7\nend\n"),
                  "hostvisible argument 7 is not below the entry's 6");
  EXPECT_CONTAINS(manifestError("graph g", "graph g extra"),
                  "unknown or malformed record");
  EXPECT_CONTAINS(manifestError("end\n", "data-parallel yes\nend\n"),
                  "unknown or malformed record");
  EXPECT_CONTAINS(manifestError("end\n", "data-parallel\ndata-parallel\nend\n"),
                  "repeated 'data-parallel' record");
  // A long binary line is quoted bounded and printable.
  std::string message = manifestError(
      "graph g\n", "graph g\n" + std::string(5000, '\x01') + "\n");
  EXPECT_LT(message.size(), 300u);
}

TEST(TensorTest, CheckedByteSize) {
  int64_t bytes = 0;
  EXPECT_TRUE(checkedByteSize(DType::f64, {3, 5}, bytes));
  EXPECT_EQ(bytes, 120);
  EXPECT_FALSE(checkedByteSize(DType::f32, {int64_t{1} << 62, 4}, bytes));
  EXPECT_FALSE(checkedByteSize(DType::f32, {-1}, bytes));
  EXPECT_TRUE(checkedByteSize(DType::f32, {0, int64_t{1} << 62}, bytes));
  EXPECT_EQ(bytes, 0);
}

TEST(ArtifactTest, RunningWithoutAnArtifactIsAnError) {
  Executable exe;
  RunResult result;
  absl::Status status = exe.run(RunInputs(), result);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_CONTAINS(status.message(), "no artifact is loaded");
  // A failed load leaves it empty too.
  EXPECT_FALSE(Executable::load("/nonexistent/artifact.so", exe).ok());
  EXPECT_EQ(exe.run(RunInputs(), result).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(ArtifactTest, RefusesFilesThatAreNotCompleteSharedObjects) {
  std::string dir = ::testing::TempDir();
  Executable exe;
  std::string text = dir + "/text.so";
  std::ofstream(text) << "not an ELF file";
  absl::Status status = Executable::load(text, exe);
  EXPECT_CONTAINS(status.message(), "not an ELF shared object");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Executable::load(dir + "/none.so", exe).code(),
            absl::StatusCode::kNotFound);
  // The runtime library itself, cut in half: its segments lie past the end
  // (dlopen would map them and fault on first touch).
  std::string library = readBytes(NN_RUNTIME_LIBRARY);
  ASSERT_GT(library.size(), 4096u);
  std::string cut = dir + "/cut.so";
  std::ofstream(cut, std::ios::binary) << library.substr(0, library.size() / 2);
  EXPECT_CONTAINS(Executable::load(cut, exe).message(), "truncated");
  // Complete but not an artifact.
  EXPECT_CONTAINS(Executable::load(NN_NOT_AN_ARTIFACT, exe).message(),
                  "is not an nn artifact");
}

} // namespace
