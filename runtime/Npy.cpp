//===- Npy.cpp - NumPy .npy / .npz files ----------------------------------===//
//
// .npy: magic "\x93NUMPY", version (1.0: 2-byte header length, 2.0/3.0:
// 4-byte), then a Python dict literal {'descr': '<f4', 'fortran_order':
// False, 'shape': (2, 3), } padded with spaces, then the raw data.
// .npz: a zip archive of .npy members. Only stored (uncompressed) members
// are read; a CRC-32 is written for archives this file creates.
//
//===----------------------------------------------------------------------===//

#include "nn/Npy.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace nn;

namespace {

Status readFile(const std::string &path, std::string &bytes) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return Status::error("cannot open '" + path + "'");
  std::ostringstream buffer;
  buffer << file.rdbuf();
  bytes = buffer.str();
  return Status();
}

/// The value text after `'key':` in the header dict.
bool headerField(const std::string &header, const std::string &key,
                 std::string &value) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    return false;
  at = header.find(':', at);
  if (at == std::string::npos)
    return false;
  ++at;
  while (at < header.size() && header[at] == ' ')
    ++at;
  size_t end = at;
  if (header[at] == '(') {
    end = header.find(')', at);
    if (end == std::string::npos)
      return false;
    ++end;
  } else {
    while (end < header.size() && header[end] != ',' && header[end] != '}')
      ++end;
  }
  value = header.substr(at, end - at);
  return true;
}

uint32_t read16(const std::string &b, size_t at) {
  return (uint8_t)b[at] | (uint8_t)b[at + 1] << 8;
}
uint32_t read32(const std::string &b, size_t at) {
  return read16(b, at) | read16(b, at + 2) << 16;
}
void put16(std::string &out, uint32_t v) {
  out += (char)(v & 0xff);
  out += (char)(v >> 8 & 0xff);
}
void put32(std::string &out, uint32_t v) {
  put16(out, v & 0xffff);
  put16(out, v >> 16);
}

uint32_t crc32(const std::string &data) {
  uint32_t crc = 0xffffffffu;
  for (unsigned char c : data) {
    crc ^= c;
    for (int k = 0; k < 8; ++k)
      crc = crc & 1 ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
  }
  return ~crc;
}

} // namespace

Status nn::parseNpy(const std::string &bytes, const std::string &what,
                    Tensor &tensor) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    return Status::error(what + " is not a .npy array (bad magic)");
  int major = (uint8_t)bytes[6];
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = read16(bytes, 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return Status::error(what + " is truncated");
    headerLength = read32(bytes, 8);
    headerStart = 12;
  } else {
    return Status::error(what + " has unsupported .npy version " +
                         std::to_string(major));
  }
  if (headerStart + headerLength > bytes.size())
    return Status::error(what + " is truncated (header)");
  std::string header = bytes.substr(headerStart, headerLength);
  std::string descr, fortran, shapeText;
  if (!headerField(header, "descr", descr) ||
      !headerField(header, "fortran_order", fortran) ||
      !headerField(header, "shape", shapeText))
    return Status::error(what + " has a malformed .npy header");
  if (fortran.find("True") != std::string::npos)
    return Status::error(what + " is in Fortran order; save it C-contiguous "
                                "(numpy.ascontiguousarray)");
  DType dtype;
  if (descr == "'<f4'")
    dtype = DType::f32;
  else if (descr == "'<f8'")
    dtype = DType::f64;
  else if (descr == "'<i4'")
    dtype = DType::i32;
  else if (descr == "'<i8'")
    dtype = DType::i64;
  else
    return Status::error(what + " has dtype " + descr +
                         "; supported: <f4, <f8, <i4, <i8");
  std::vector<int64_t> shape;
  for (size_t at = 1; at < shapeText.size();) {
    while (at < shapeText.size() && !std::isdigit((unsigned char)shapeText[at]))
      ++at;
    if (at >= shapeText.size())
      break;
    size_t end = at;
    while (end < shapeText.size() &&
           std::isdigit((unsigned char)shapeText[end]))
      ++end;
    shape.push_back(std::stoll(shapeText.substr(at, end - at)));
    at = end;
  }
  tensor = Tensor(dtype, shape);
  size_t dataStart = headerStart + headerLength;
  if (bytes.size() - dataStart != tensor.sizeInBytes())
    return Status::error(what + " holds " +
                         std::to_string(bytes.size() - dataStart) +
                         " data bytes, its header promises " +
                         std::to_string(tensor.sizeInBytes()));
  std::memcpy(tensor.raw(), bytes.data() + dataStart, tensor.sizeInBytes());
  return Status();
}

Status nn::readNpy(const std::string &path, Tensor &tensor) {
  std::string bytes;
  Status status = readFile(path, bytes);
  if (!status.ok())
    return status;
  return parseNpy(bytes, "'" + path + "'", tensor);
}

Status nn::readNpz(const std::string &path,
                   std::map<std::string, Tensor> &arrays) {
  std::string bytes;
  Status status = readFile(path, bytes);
  if (!status.ok())
    return status;
  size_t at = 0;
  while (at + 30 <= bytes.size() && read32(bytes, at) == 0x04034b50) {
    uint32_t flags = read16(bytes, at + 6);
    uint32_t method = read16(bytes, at + 8);
    uint32_t size = read32(bytes, at + 18);
    uint32_t nameLength = read16(bytes, at + 26);
    uint32_t extraLength = read16(bytes, at + 28);
    std::string name = bytes.substr(at + 30, nameLength);
    size_t dataStart = at + 30 + nameLength + extraLength;
    std::string what = "'" + path + "' member '" + name + "'";
    if (method != 0)
      return Status::error(what + " is compressed (numpy.savez_compressed); "
                                  "save with numpy.savez");
    if (flags & 0x8 || size == 0xffffffffu)
      return Status::error(what + " uses a zip feature this reader lacks "
                                  "(data descriptor or zip64)");
    if (dataStart + size > bytes.size())
      return Status::error(what + " is truncated");
    std::string key = name;
    if (key.size() > 4 && key.compare(key.size() - 4, 4, ".npy") == 0)
      key.resize(key.size() - 4);
    Tensor tensor;
    status = parseNpy(bytes.substr(dataStart, size), what, tensor);
    if (!status.ok())
      return status;
    arrays[key] = std::move(tensor);
    at = dataStart + size;
  }
  if (arrays.empty())
    return Status::error("'" + path + "' is not an .npz archive with arrays");
  return Status();
}

std::string nn::serializeNpy(const Tensor &tensor) {
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
  out.append((const char *)tensor.raw(), tensor.sizeInBytes());
  return out;
}

Status nn::writeNpy(const std::string &path, const Tensor &tensor) {
  std::ofstream file(path, std::ios::binary);
  file << serializeNpy(tensor);
  if (!file)
    return Status::error("cannot write '" + path + "'");
  return Status();
}

Status nn::writeNpz(const std::string &path,
                    const std::map<std::string, Tensor> &arrays) {
  std::string out, central;
  uint16_t count = 0;
  for (const auto &[key, tensor] : arrays) {
    std::string data = serializeNpy(tensor);
    std::string name = key + ".npy";
    uint32_t offset = out.size();
    uint32_t crc = crc32(data);
    auto header = [&](std::string &to, bool isCentral) {
      put32(to, isCentral ? 0x02014b50 : 0x04034b50);
      if (isCentral)
        put16(to, 20);
      put16(to, 20);
      put16(to, 0);    // flags
      put16(to, 0);    // stored
      put16(to, 0);    // time
      put16(to, 0x21); // date
      put32(to, crc);
      put32(to, data.size());
      put32(to, data.size());
      put16(to, name.size());
      put16(to, 0); // extra
      if (isCentral) {
        put16(to, 0); // comment
        put16(to, 0); // disk
        put16(to, 0); // internal attributes
        put32(to, 0); // external attributes
        put32(to, offset);
      }
      to += name;
    };
    header(out, false);
    out += data;
    header(central, true);
    ++count;
  }
  uint32_t centralOffset = out.size();
  out += central;
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, count);
  put16(out, count);
  put32(out, central.size());
  put32(out, centralOffset);
  put16(out, 0);
  std::ofstream file(path, std::ios::binary);
  file << out;
  if (!file)
    return Status::error("cannot write '" + path + "'");
  return Status();
}
