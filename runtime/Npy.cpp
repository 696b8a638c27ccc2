//===- Npy.cpp - NumPy .npy / .npz files ----------------------------------===//
//
// .npy: magic "\x93NUMPY", version (1.0: 2-byte header length, 2.0/3.0:
// 4-byte), then a Python dict literal {'descr': '<f4', 'fortran_order':
// False, 'shape': (2, 3), } padded with spaces and ending in a newline, then
// the raw data.
//
// .npz: a zip archive of .npy members. The reader walks the central
// directory (as unzip does), so it reads what numpy 1.x and 2.x write:
// zip64 extra fields (numpy 2 forces zip64 on every member), data
// descriptors, and stored or deflated (numpy.savez_compressed) members,
// each checked against its CRC-32.
//
// Every input is untrusted: every size is checked against the bytes present
// before anything is allocated, every product of sizes for overflow, and
// every error names the file, the member and the field.
//
//===----------------------------------------------------------------------===//

#include "nn/Npy.h"
#include "nn/File.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>
#include <unistd.h>

using namespace nn;

namespace {

/// What one .npy or .npz file may hold: it is read whole, so one larger
/// than the machine's memory could never be read (and a fault in the
/// middle of a long read helps no one).
uint64_t maxArrayFileBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return std::numeric_limits<uint64_t>::max();
  return (uint64_t)pages * (uint64_t)pageSize;
}

absl::Status readFile(const std::string &path, std::string &bytes) {
  absl::StatusOr<std::string> read = readRegularFile(path, maxArrayFileBytes());
  if (!read.ok())
    return read.status();
  bytes = std::move(*read);
  return absl::OkStatus();
}

uint64_t readLE(const std::string &b, size_t at, int bytes) {
  uint64_t value = 0;
  for (int i = bytes; i-- > 0;)
    value = value << 8 | (uint8_t)b[at + i];
  return value;
}
uint32_t read16(const std::string &b, size_t at) {
  return (uint32_t)readLE(b, at, 2);
}
uint32_t read32(const std::string &b, size_t at) {
  return (uint32_t)readLE(b, at, 4);
}
uint64_t read64(const std::string &b, size_t at) { return readLE(b, at, 8); }

void put16(std::string &out, uint32_t v) {
  out += (char)(v & 0xff);
  out += (char)(v >> 8 & 0xff);
}
void put32(std::string &out, uint32_t v) {
  put16(out, v & 0xffff);
  put16(out, v >> 16);
}

/// The CRC-32 of `data`, continuing `start` (the CRC of what precedes it).
uint32_t crc32Of(const char *data, size_t size, uint32_t start = 0) {
  uLong crc = start;
  // zlib takes at most uInt bytes per call.
  while (size > 0) {
    uInt chunk = (uInt)std::min<size_t>(size, 1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef *>(data), chunk);
    data += chunk;
    size -= chunk;
  }
  return (uint32_t)crc;
}

/// A strict reader of the header dict numpy writes:
///   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
/// Keys and string values in single or double quotes, True/False, and a
/// tuple of non-negative integers; nothing else.
class HeaderParser {
public:
  HeaderParser(const std::string &text, const std::string &what)
      : text(text), what(what) {}

  absl::Status parse(std::string &descr, bool &fortranOrder,
                     std::vector<int64_t> &shape) {
    std::set<std::string> seen;
    skipSpace();
    if (!consume('{'))
      return error("does not start with '{'");
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key;
      absl::Status status = parseString(key);
      if (!status.ok())
        return status;
      skipSpace();
      if (!consume(':'))
        return error("has no ':' after key '" + key + "'");
      skipSpace();
      if (!seen.insert(key).second)
        return error("repeats key '" + key + "'");
      if (key == "descr")
        status = parseString(descr);
      else if (key == "fortran_order")
        status = parseBool(fortranOrder);
      else if (key == "shape")
        status = parseShape(shape);
      else
        return error("has unknown key '" + key +
                     "' (expected descr, fortran_order, shape)");
      if (!status.ok())
        return status;
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (consume('}'))
        break;
      return error("has no ',' or '}' after key '" + key + "'");
    }
    for (const char *key : {"descr", "fortran_order", "shape"})
      if (!seen.count(key))
        return error(std::string("lacks key '") + key + "'");
    // Padding: spaces, then the newline numpy ends the header with.
    while (at < text.size())
      if (!std::strchr(" \t\n\r\0", text[at++]))
        return error("has text after the header dict");
    return absl::OkStatus();
  }

private:
  absl::Status error(const std::string &why) const {
    return absl::InvalidArgumentError(what + ": .npy header " + why);
  }
  void skipSpace() {
    while (at < text.size() && (text[at] == ' ' || text[at] == '\t' ||
                                text[at] == '\n' || text[at] == '\r'))
      ++at;
  }
  bool consume(char c) {
    if (at < text.size() && text[at] == c) {
      ++at;
      return true;
    }
    return false;
  }
  bool consumeWord(const char *word) {
    size_t length = std::strlen(word);
    if (text.compare(at, length, word) != 0)
      return false;
    at += length;
    return true;
  }
  absl::Status parseString(std::string &out) {
    if (at >= text.size() || (text[at] != '\'' && text[at] != '"'))
      return error("has a key or value that is not a quoted string");
    char quote = text[at++];
    size_t end = text.find(quote, at);
    if (end == std::string::npos || end - at > 64)
      return error("has an unterminated or overlong string");
    out = text.substr(at, end - at);
    at = end + 1;
    return absl::OkStatus();
  }
  absl::Status parseBool(bool &out) {
    if (consumeWord("True"))
      out = true;
    else if (consumeWord("False"))
      out = false;
    else
      return error("field 'fortran_order' is not True or False");
    return absl::OkStatus();
  }
  absl::Status parseShape(std::vector<int64_t> &shape) {
    shape.clear();
    if (!consume('('))
      return error("field 'shape' is not a tuple");
    skipSpace();
    if (consume(')'))
      return absl::OkStatus();
    while (true) {
      skipSpace();
      if (at >= text.size() || !std::isdigit((unsigned char)text[at]))
        return error("field 'shape' entry " + std::to_string(shape.size()) +
                     " is not a non-negative integer");
      int64_t value = 0;
      while (at < text.size() && std::isdigit((unsigned char)text[at])) {
        int digit = text[at++] - '0';
        if (__builtin_mul_overflow(value, 10, &value) ||
            __builtin_add_overflow(value, digit, &value))
          return error("field 'shape' entry " + std::to_string(shape.size()) +
                       " does not fit in 64 bits");
      }
      shape.push_back(value);
      if (shape.size() > 32)
        return error("field 'shape' has more than 32 axes");
      skipSpace();
      bool comma = consume(',');
      skipSpace();
      if (consume(')')) {
        // Python writes a one-element tuple with a trailing comma.
        if (shape.size() == 1 && !comma)
          return error("field 'shape' (n) is not a tuple; expected (n,)");
        return absl::OkStatus();
      }
      if (!comma)
        return error("field 'shape' entry " + std::to_string(shape.size() - 1) +
                     " is followed by neither ',' nor ')'");
    }
  }

  const std::string &text;
  const std::string &what;
  size_t at = 0;
};

/// A member name as it may appear in a message: at most 80 characters,
/// anything unprintable escaped.
std::string printableName(const std::string &name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    if (out.size() >= 80) {
      out += "... (" + std::to_string(name.size()) + " bytes)";
      break;
    }
    unsigned char c = name[i];
    if (c < 0x20 || c >= 0x7f || c == '\'' || c == '\\') {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\x%02x", c);
      out += buffer;
    } else {
      out += (char)c;
    }
  }
  return out;
}

/// One member of an archive, from its central directory record.
struct ZipMember {
  std::string name;
  uint32_t flags = 0, method = 0, crc = 0;
  uint64_t compressedSize = 0, size = 0, localOffset = 0;
};

/// Takes the zip64 extended values (extra field 0x0001) for the fields the
/// fixed record left at 0xffffffff, in the order the format fixes.
bool applyZip64(const std::string &extra, ZipMember &member, bool sizeFull,
                bool compressedFull, bool offsetFull) {
  for (size_t at = 0; at + 4 <= extra.size();) {
    uint32_t id = read16(extra, at), length = read16(extra, at + 2);
    if (at + 4 + length > extra.size())
      return false;
    if (id == 0x0001) {
      size_t field = at + 4, end = field + length;
      for (auto [full, target] :
           {std::pair{sizeFull, &member.size},
            std::pair{compressedFull, &member.compressedSize},
            std::pair{offsetFull, &member.localOffset}}) {
        if (!full)
          continue;
        if (field + 8 > end)
          return false;
        *target = read64(extra, field);
        field += 8;
      }
      return true;
    }
    at += 4 + length;
  }
  return !sizeFull && !compressedFull && !offsetFull;
}

/// Inflates a raw deflate stream of `compressed` into exactly `size` bytes.
absl::Status inflateMember(const char *compressed, uint64_t compressedSize,
                           uint64_t size, std::string &out,
                           const std::string &what) {
  out.assign(size, '\0');
  z_stream stream{};
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK)
    return absl::InvalidArgumentError(what + ": cannot start zlib");
  stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(compressed));
  stream.next_out = reinterpret_cast<Bytef *>(out.data());
  uint64_t inLeft = compressedSize, outLeft = size;
  int rc = Z_OK;
  while (rc == Z_OK) {
    uInt inChunk = (uInt)std::min<uint64_t>(inLeft, 1u << 30);
    uInt outChunk = (uInt)std::min<uint64_t>(outLeft, 1u << 30);
    stream.avail_in = inChunk;
    stream.avail_out = outChunk;
    rc = inflate(&stream, Z_NO_FLUSH);
    inLeft -= inChunk - stream.avail_in;
    outLeft -= outChunk - stream.avail_out;
    if (rc == Z_BUF_ERROR && (inLeft == 0 || outLeft == 0))
      break;
  }
  inflateEnd(&stream);
  if (rc != Z_STREAM_END || outLeft != 0)
    return absl::InvalidArgumentError(
        what + " is a corrupt deflate stream or its sizes " +
        "are wrong (zlib: " + (stream.msg ? stream.msg : std::to_string(rc)) +
        ")");
  return absl::OkStatus();
}

} // namespace

absl::Status nn::parseNpy(const std::string &bytes, const std::string &what,
                          Tensor &tensor) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    return absl::InvalidArgumentError(what +
                                      " is not a .npy array (bad magic)");
  int major = (uint8_t)bytes[6];
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = read16(bytes, 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return absl::InvalidArgumentError(what + " is truncated (header length)");
    headerLength = read32(bytes, 8);
    headerStart = 12;
  } else {
    return absl::InvalidArgumentError(what + " has unsupported .npy version " +
                                      std::to_string(major));
  }
  if (headerLength > bytes.size() - headerStart)
    return absl::InvalidArgumentError(
        what + " is truncated: its header promises " +
        std::to_string(headerLength) + " bytes, " +
        std::to_string(bytes.size() - headerStart) + " are present");
  std::string header = bytes.substr(headerStart, headerLength);
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
  absl::Status status =
      HeaderParser(header, what).parse(descr, fortranOrder, shape);
  if (!status.ok())
    return status;
  DType dtype;
  if (descr == "<f4")
    dtype = DType::f32;
  else if (descr == "<f8")
    dtype = DType::f64;
  else if (descr == "<i4")
    dtype = DType::i32;
  else if (descr == "<i8")
    dtype = DType::i64;
  else
    return absl::InvalidArgumentError(what + " has dtype '" +
                                      printableName(descr) +
                                      "'; supported: <f4, <f8, <i4, <i8");
  if (fortranOrder)
    return absl::InvalidArgumentError(
        what + " is in Fortran order; save it C-contiguous "
               "(numpy.ascontiguousarray)");
  int64_t expected = 0;
  if (!checkedByteSize(dtype, shape, expected))
    return absl::InvalidArgumentError(what + " declares shape " +
                                      shapeText(shape) +
                                      ", whose byte size overflows 64 bits");
  size_t dataStart = headerStart + headerLength;
  uint64_t present = bytes.size() - dataStart;
  // Before allocating: a short file never makes a large tensor.
  if (present != (uint64_t)expected)
    return absl::InvalidArgumentError(
        what + " holds " + std::to_string(present) +
        " data bytes, its header (shape " + shapeText(shape) + ", " +
        toString(dtype) + ") promises " + std::to_string(expected));
  tensor = Tensor(dtype, shape);
  std::memcpy(tensor.raw(), bytes.data() + dataStart, expected);
  return absl::OkStatus();
}

absl::Status nn::readNpy(const std::string &path, Tensor &tensor) {
  std::string bytes;
  absl::Status status = readFile(path, bytes);
  if (!status.ok())
    return status;
  return parseNpy(bytes, "'" + path + "'", tensor);
}

absl::Status nn::parseNpz(const std::string &bytes, const std::string &what,
                          std::map<std::string, Tensor> &arrays) {
  arrays.clear();
  auto fail = [&](const std::string &why) {
    return absl::InvalidArgumentError(what + " " + why);
  };
  // End of central directory: 22 bytes and a comment of up to 64 KiB.
  if (bytes.size() < 22)
    return fail("is not an .npz archive (too short for a zip file)");
  size_t end = std::string::npos;
  size_t lowest = bytes.size() > 22 + 0xffff ? bytes.size() - 22 - 0xffff : 0;
  for (size_t at = bytes.size() - 22;; --at) {
    if (read32(bytes, at) == 0x06054b50 &&
        at + 22 + read16(bytes, at + 20) == bytes.size()) {
      end = at;
      break;
    }
    if (at == lowest)
      break;
  }
  if (end == std::string::npos)
    return fail("is not an .npz archive (no zip end-of-directory record)");
  if (read16(bytes, end + 4) != 0 || read16(bytes, end + 6) != 0)
    return fail("is a multi-disk zip archive");
  uint64_t count = read16(bytes, end + 10);
  uint64_t directorySize = read32(bytes, end + 12);
  uint64_t directoryOffset = read32(bytes, end + 16);
  if (count == 0xffff || directorySize == 0xffffffffu ||
      directoryOffset == 0xffffffffu) {
    // zip64: a locator right before the record points at the zip64 record.
    if (end < 20 || read32(bytes, end - 20) != 0x07064b50)
      return fail("needs a zip64 end-of-directory locator and has none");
    uint64_t record = read64(bytes, end - 12);
    if (record > end - 20 || end - 20 - record < 56 ||
        read32(bytes, record) != 0x06064b50)
      return fail("has a corrupt zip64 end-of-directory record");
    count = read64(bytes, record + 32);
    directorySize = read64(bytes, record + 40);
    directoryOffset = read64(bytes, record + 48);
  }
  if (directoryOffset > bytes.size() ||
      directorySize > bytes.size() - directoryOffset)
    return fail("is truncated or corrupt: its central directory (offset " +
                std::to_string(directoryOffset) + ", " +
                std::to_string(directorySize) + " bytes) lies outside the " +
                std::to_string(bytes.size()) + "-byte file");
  // Each directory record takes at least 46 bytes.
  if (count > directorySize / 46)
    return fail("claims " + std::to_string(count) + " members in a " +
                std::to_string(directorySize) + "-byte central directory");

  std::vector<ZipMember> members;
  size_t at = directoryOffset, directoryEnd = directoryOffset + directorySize;
  for (uint64_t i = 0; i < count; ++i) {
    std::string where = "central directory record " + std::to_string(i);
    if (directoryEnd - at < 46 || read32(bytes, at) != 0x02014b50)
      return fail("has a corrupt " + where);
    ZipMember member;
    member.flags = read16(bytes, at + 8);
    member.method = read16(bytes, at + 10);
    member.crc = read32(bytes, at + 16);
    member.compressedSize = read32(bytes, at + 20);
    member.size = read32(bytes, at + 24);
    uint32_t nameLength = read16(bytes, at + 28);
    uint32_t extraLength = read16(bytes, at + 30);
    uint32_t commentLength = read16(bytes, at + 32);
    member.localOffset = read32(bytes, at + 42);
    if (directoryEnd - at - 46 <
        (uint64_t)nameLength + extraLength + commentLength)
      return fail("has a " + where + " whose name or extra field runs past " +
                  "the directory");
    member.name = bytes.substr(at + 46, nameLength);
    std::string extra = bytes.substr(at + 46 + nameLength, extraLength);
    if (!applyZip64(extra, member, member.size == 0xffffffffu,
                    member.compressedSize == 0xffffffffu,
                    member.localOffset == 0xffffffffu))
      return fail("member '" + printableName(member.name) +
                  "' has a corrupt zip64 extra field");
    members.push_back(member);
    at += 46 + nameLength + extraLength + commentLength;
  }

  for (const ZipMember &member : members) {
    std::string where = what + " member '" + printableName(member.name) + "'";
    if (member.flags & 0x1)
      return absl::InvalidArgumentError(where + " is encrypted");
    if (member.method != 0 && member.method != 8)
      return absl::InvalidArgumentError(
          where + " uses zip compression method " +
          std::to_string(member.method) +
          "; only stored (numpy.savez) and deflated "
          "(numpy.savez_compressed) members are read");
    uint64_t local = member.localOffset;
    if (local > bytes.size() || bytes.size() - local < 30 ||
        read32(bytes, local) != 0x04034b50)
      return absl::InvalidArgumentError(
          where + " has no local header at offset " + std::to_string(local));
    // The local name and extra field may differ in length from the
    // directory's; only the data offset is taken from them.
    uint64_t dataStart =
        local + 30 + read16(bytes, local + 26) + read16(bytes, local + 28);
    if (dataStart > bytes.size() ||
        member.compressedSize > bytes.size() - dataStart)
      return absl::InvalidArgumentError(
          where + " is truncated: " + std::to_string(member.compressedSize) +
          " bytes at offset " + std::to_string(dataStart) + " run past the " +
          std::to_string(bytes.size()) + "-byte file");
    const char *data = bytes.data() + dataStart;
    std::string inflated;
    const char *content = data;
    if (member.method == 0) {
      if (member.compressedSize != member.size)
        return absl::InvalidArgumentError(
            where + " is stored, but its sizes differ (" +
            std::to_string(member.compressedSize) + " vs " +
            std::to_string(member.size) + ")");
    } else {
      // Deflate expands at most ~1032:1; a larger claim is a lie, and is
      // refused before the output is allocated.
      if (member.size / 1032 > member.compressedSize + 64)
        return absl::InvalidArgumentError(
            where + " claims " + std::to_string(member.size) + " bytes from " +
            std::to_string(member.compressedSize) +
            " compressed bytes, more than deflate can give");
      absl::Status status = inflateMember(data, member.compressedSize,
                                          member.size, inflated, where);
      if (!status.ok())
        return status;
      content = inflated.data();
    }
    if (crc32Of(content, member.size) != member.crc)
      return absl::InvalidArgumentError(
          where + " fails its CRC-32 check (corrupt data)");
    std::string key = member.name;
    if (key.size() > 4 && key.compare(key.size() - 4, 4, ".npy") == 0)
      key.resize(key.size() - 4);
    if (arrays.count(key))
      return absl::InvalidArgumentError(where + " repeats the array name '" +
                                        printableName(key) + "'");
    Tensor tensor;
    absl::Status status =
        parseNpy(std::string(content, member.size), where, tensor);
    if (!status.ok())
      return status;
    arrays[key] = std::move(tensor);
  }
  if (arrays.empty())
    return fail("is a zip archive without arrays");
  return absl::OkStatus();
}

absl::Status nn::readNpz(const std::string &path,
                         std::map<std::string, Tensor> &arrays) {
  std::string bytes;
  absl::Status status = readFile(path, bytes);
  if (!status.ok())
    return status;
  return parseNpz(bytes, "'" + path + "'", arrays);
}

namespace {

/// The .npy header of `tensor`: magic, version 1.0, the dict padded so
/// that the data starts at a multiple of 64 bytes (as numpy.save does).
std::string npyHeader(const Tensor &tensor) {
  const char *descr = tensor.dtype() == DType::f32   ? "<f4"
                      : tensor.dtype() == DType::f64 ? "<f8"
                      : tensor.dtype() == DType::i32 ? "<i4"
                                                     : "<i8";
  // Python tuple syntax: (), (5,), (2, 3).
  std::string shape = "(";
  for (int64_t i = 0; i < tensor.rank(); ++i)
    shape += (i ? ", " : "") + std::to_string(tensor.shape()[i]);
  shape += tensor.rank() == 1 ? ",)" : ")";
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += (char)1;
  out += (char)0;
  put16(out, header.size());
  out += header;
  return out;
}

/// One member of an archive being written: what its two headers need.
struct ZipEntry {
  std::string name, npyHeader;
  const Tensor *tensor;
  uint64_t size, offset;
  uint32_t crc;
};

/// A local header (isCentral false) or a central directory record for a
/// stored member, as numpy.savez writes them without zip64.
std::string zipHeader(const ZipEntry &entry, bool isCentral) {
  std::string to;
  put32(to, isCentral ? 0x02014b50 : 0x04034b50);
  if (isCentral)
    put16(to, 20);
  put16(to, 20);
  put16(to, 0);    // flags
  put16(to, 0);    // stored
  put16(to, 0);    // time
  put16(to, 0x21); // date
  put32(to, entry.crc);
  put32(to, (uint32_t)entry.size);
  put32(to, (uint32_t)entry.size);
  put16(to, (uint32_t)entry.name.size());
  put16(to, 0); // extra
  if (isCentral) {
    put16(to, 0); // comment
    put16(to, 0); // disk
    put16(to, 0); // internal attributes
    put32(to, 0); // external attributes
    put32(to, (uint32_t)entry.offset);
  }
  return to + entry.name;
}

} // namespace

std::string nn::serializeNpy(const Tensor &tensor) {
  std::string out = npyHeader(tensor);
  out.append((const char *)tensor.raw(), tensor.sizeInBytes());
  return out;
}

absl::Status nn::writeNpy(const std::string &path, const Tensor &tensor) {
  absl::StatusOr<OutputFile> file = OutputFile::create(path);
  if (!file.ok())
    return file.status();
  if (absl::Status status = file->write(npyHeader(tensor)); !status.ok())
    return status;
  if (absl::Status status = file->write(tensor.raw(), tensor.sizeInBytes());
      !status.ok())
    return status;
  return file->commit();
}

absl::Status nn::writeNpz(const std::string &path,
                          const std::map<std::string, Tensor> &arrays) {
  auto refuse = [&](const std::string &why) {
    return absl::InvalidArgumentError("cannot write '" + path + "': " + why +
                                      " (this writer makes no zip64 records)");
  };
  // Without zip64 a count is 16 bits and a size or offset 32, 0xffff and
  // 0xffffffff being the markers for zip64 values: all of it is checked,
  // from the sizes alone, before the first byte is written.
  if (arrays.size() > 0xffff - 1)
    return refuse(std::to_string(arrays.size()) +
                  " arrays are more than a zip archive holds (65534)");
  std::vector<ZipEntry> entries;
  entries.reserve(arrays.size());
  uint64_t at = 0, directorySize = 0;
  for (const auto &[key, tensor] : arrays) {
    ZipEntry entry{key + ".npy", npyHeader(tensor), &tensor, 0, at, 0};
    if (entry.name.size() > 0xffff)
      return refuse("array name '" + printableName(key) + "' is " +
                    std::to_string(key.size()) +
                    " bytes, more than a zip member name holds");
    entry.size = entry.npyHeader.size() + (uint64_t)tensor.sizeInBytes();
    if (entry.size >= 0xffffffffu)
      return refuse("array '" + printableName(key) + "' takes " +
                    std::to_string(entry.size) + " bytes, 4 GiB or more");
    at += 30 + entry.name.size() + entry.size;
    directorySize += 46 + entry.name.size();
    entries.push_back(std::move(entry));
  }
  if (at + directorySize + 22 >= 0xffffffffu)
    return refuse("the archive would take " +
                  std::to_string(at + directorySize + 22) +
                  " bytes, 4 GiB or more");

  // Each member straight from its tensor: the archive is never held in
  // memory (a gradient archive is as large as the model).
  absl::StatusOr<OutputFile> file = OutputFile::create(path);
  if (!file.ok())
    return file.status();
  for (ZipEntry &entry : entries) {
    entry.crc =
        crc32Of((const char *)entry.tensor->raw(), entry.tensor->sizeInBytes(),
                crc32Of(entry.npyHeader.data(), entry.npyHeader.size()));
    for (const std::string &bytes : {zipHeader(entry, false), entry.npyHeader})
      if (absl::Status status = file->write(bytes); !status.ok())
        return status;
    if (absl::Status status =
            file->write(entry.tensor->raw(), entry.tensor->sizeInBytes());
        !status.ok())
      return status;
  }
  std::string directory;
  for (const ZipEntry &entry : entries)
    directory += zipHeader(entry, true);
  put32(directory, 0x06054b50);
  put16(directory, 0);
  put16(directory, 0);
  put16(directory, (uint32_t)entries.size());
  put16(directory, (uint32_t)entries.size());
  put32(directory, (uint32_t)directorySize);
  put32(directory, (uint32_t)at);
  put16(directory, 0);
  if (absl::Status status = file->write(directory); !status.ok())
    return status;
  return file->commit();
}
