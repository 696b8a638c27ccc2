//===- Manifest.cpp - the text an artifact carries about itself -----------===//
//
// One record per line, space-separated tokens; names are percent-encoded so
// that they never contain spaces. A static axis is written as its size, a
// named axis as the dim name (dim names never start with a digit).
//
//   nn-artifact 1
//   graph NAME
//   dim NAME batch | dim NAME seq BATCH [SOURCE FACTOR] | dim NAME packed BATCH
//   SEQ root NAME input NAME DTYPE CLASSES RANK AXIS... param NAME DTYPE RANK
//   SIZE... output NAME DTYPE RANK AXIS... loss NAME NORMALIZATION SCALE
//   USE_NORMALIZED AS_ERROR packed|padded BATCH N SEQ...
//   target cpu|cuda   kernel NAME ORIGIN   hostvisible ARG...   end
//
//===----------------------------------------------------------------------===//

#include "nn/Runtime.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <sstream>

using namespace nn;

namespace {

std::string encode(const std::string &name) {
  std::string out;
  for (unsigned char c : name) {
    if (c <= ' ' || c == '%' || c >= 0x7f) {
      char buffer[4];
      std::snprintf(buffer, sizeof(buffer), "%%%02X", c);
      out += buffer;
    } else {
      out += (char)c;
    }
  }
  return out.empty() ? "%00" : out;
}

std::string decode(const std::string &token) {
  std::string out;
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '%' && i + 2 < token.size()) {
      int value = std::strtol(token.substr(i + 1, 2).c_str(), nullptr, 16);
      if (value != 0)
        out += (char)value;
      i += 2;
    } else {
      out += token[i];
    }
  }
  return out;
}

std::string axisToken(const Axis &axis) {
  return axis.isNamed() ? encode(axis.dim) : std::to_string(axis.size);
}

Axis parseAxis(const std::string &token) {
  Axis axis;
  if (!token.empty() && std::isdigit((unsigned char)token[0]))
    axis.size = std::strtoll(token.c_str(), nullptr, 10);
  else
    axis.dim = decode(token);
  return axis;
}

} // namespace

const DimInfo *Manifest::findDim(const std::string &name) const {
  for (const DimInfo &dim : dims)
    if (dim.name == name)
      return &dim;
  return nullptr;
}

std::string Manifest::serialize() const {
  std::ostringstream os;
  os << "nn-artifact 1\n";
  os << "graph " << encode(graph) << "\n";
  os << "target " << encode(target) << "\n";
  for (const DimInfo &dim : dims) {
    os << "dim " << encode(dim.name);
    switch (dim.kind) {
    case DimInfo::Kind::batch:
      os << " batch";
      break;
    case DimInfo::Kind::seq:
      os << " seq " << encode(dim.batch);
      if (!dim.source.empty())
        os << " " << encode(dim.source) << " " << dim.factor;
      break;
    case DimInfo::Kind::packed:
      os << " packed " << encode(dim.batch) << " " << encode(dim.sequence);
      break;
    }
    os << "\n";
  }
  for (const std::string &root : rootDims)
    os << "root " << encode(root) << "\n";
  for (const TensorInfo &input : inputs) {
    os << "input " << encode(input.name) << " " << toString(input.dtype) << " "
       << input.classes << " " << input.axes.size();
    for (const Axis &axis : input.axes)
      os << " " << axisToken(axis);
    os << "\n";
  }
  for (const TensorInfo &parameter : parameters) {
    os << "param " << encode(parameter.name) << " " << toString(parameter.dtype)
       << " " << parameter.axes.size();
    for (const Axis &axis : parameter.axes)
      os << " " << axis.size;
    os << "\n";
  }
  for (const TensorInfo &output : outputs) {
    os << "output " << encode(output.name) << " " << toString(output.dtype)
       << " " << output.axes.size();
    for (const Axis &axis : output.axes)
      os << " " << axisToken(axis);
    os << "\n";
  }
  char scale[64];
  for (const LossInfo &loss : losses) {
    std::snprintf(scale, sizeof(scale), "%.17g", loss.scale);
    os << "loss " << encode(loss.name) << " " << loss.normalization << " "
       << scale << " " << loss.useNormalizedLoss << " " << loss.asError << " "
       << (loss.packed ? "packed" : "padded") << " " << encode(loss.batch)
       << " " << loss.sequences.size();
    for (const std::string &sequence : loss.sequences)
      os << " " << encode(sequence);
    os << "\n";
  }
  for (const KernelInfo &kernel : kernels)
    os << "kernel " << encode(kernel.name) << " " << encode(kernel.origin)
       << "\n";
  if (!hostVisibleArguments.empty()) {
    os << "hostvisible";
    for (int64_t argument : hostVisibleArguments)
      os << " " << argument;
    os << "\n";
  }
  os << "end\n";
  return os.str();
}

Status Manifest::parse(const std::string &text, Manifest &manifest) {
  manifest = Manifest();
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  bool sawHeader = false, sawEnd = false;
  auto fail = [&](const std::string &why) {
    return Status::error("manifest line " + std::to_string(number) + ": " +
                         why + ": '" + line + "'");
  };
  while (std::getline(lines, line)) {
    ++number;
    std::istringstream tokens(line);
    std::vector<std::string> t;
    for (std::string token; tokens >> token;)
      t.push_back(token);
    if (t.empty())
      continue;
    const std::string &kind = t[0];
    auto count = [&](size_t at) -> long {
      return at < t.size() ? std::strtol(t[at].c_str(), nullptr, 10) : -1;
    };
    if (kind == "nn-artifact") {
      if (t.size() != 2 || t[1] != "1")
        return fail("unsupported artifact version");
      sawHeader = true;
    } else if (kind == "graph" && t.size() == 2) {
      manifest.graph = decode(t[1]);
    } else if (kind == "target" && t.size() == 2) {
      manifest.target = decode(t[1]);
      if (manifest.target != "cpu" && manifest.target != "cuda")
        return fail("unknown target");
    } else if (kind == "hostvisible") {
      for (size_t i = 1; i < t.size(); ++i)
        manifest.hostVisibleArguments.push_back(count(i));
    } else if (kind == "kernel" && t.size() == 3) {
      manifest.kernels.push_back({decode(t[1]), decode(t[2])});
    } else if (kind == "dim" && t.size() >= 3) {
      DimInfo dim;
      dim.name = decode(t[1]);
      if (t[2] == "batch" && t.size() == 3) {
        dim.kind = DimInfo::Kind::batch;
      } else if (t[2] == "seq" && (t.size() == 4 || t.size() == 6)) {
        dim.kind = DimInfo::Kind::seq;
        dim.batch = decode(t[3]);
        if (t.size() == 6) {
          dim.source = decode(t[4]);
          dim.factor = count(5);
        }
      } else if (t[2] == "packed" && t.size() == 5) {
        dim.kind = DimInfo::Kind::packed;
        dim.batch = decode(t[3]);
        dim.sequence = decode(t[4]);
      } else {
        return fail("bad dim record");
      }
      manifest.dims.push_back(dim);
    } else if (kind == "root" && t.size() == 2) {
      manifest.rootDims.push_back(decode(t[1]));
    } else if ((kind == "input" || kind == "output" || kind == "param") &&
               t.size() >= 4) {
      TensorInfo info;
      info.name = decode(t[1]);
      if (!parseDType(t[2], info.dtype))
        return fail("bad dtype");
      size_t at = 3;
      if (kind == "input")
        info.classes = count(at++);
      long rank = count(at++);
      if (rank < 0 || t.size() != at + (size_t)rank)
        return fail("bad rank");
      for (long i = 0; i < rank; ++i)
        info.axes.push_back(parseAxis(t[at + i]));
      (kind == "input"   ? manifest.inputs
       : kind == "param" ? manifest.parameters
                         : manifest.outputs)
          .push_back(info);
    } else if (kind == "loss" && t.size() >= 9) {
      LossInfo loss;
      loss.name = decode(t[1]);
      loss.normalization = t[2];
      loss.scale = std::strtod(t[3].c_str(), nullptr);
      loss.useNormalizedLoss = t[4] == "1";
      loss.asError = t[5] == "1";
      loss.packed = t[6] == "packed";
      loss.batch = decode(t[7]);
      long n = count(8);
      if (n < 0 || t.size() != 9 + (size_t)n)
        return fail("bad loss record");
      for (long i = 0; i < n; ++i)
        loss.sequences.push_back(decode(t[9 + i]));
      manifest.losses.push_back(loss);
    } else if (kind == "end") {
      sawEnd = true;
    } else {
      return fail("unknown record");
    }
  }
  if (!sawHeader || !sawEnd)
    return Status::error("not an nn artifact manifest (missing header or end)");
  return Status();
}

bool DimValues::isValid(const std::vector<Axis> &axes,
                        const std::vector<int64_t> &index) const {
  for (size_t i = 1; i < axes.size() && i < index.size(); ++i) {
    if (!axes[i].isNamed())
      continue;
    auto it = lengths.find(axes[i].dim);
    if (it != lengths.end() && index[i] >= it->second[index[0]])
      return false;
  }
  return true;
}

void nn::deriveDims(const Manifest &manifest, DimValues &values) {
  for (const DimInfo &dim : manifest.dims) {
    if (dim.kind == DimInfo::Kind::seq && !dim.source.empty()) {
      auto ceilDiv = [&](int64_t n) {
        return (n + dim.factor - 1) / dim.factor;
      };
      values.sizes[dim.name] = ceilDiv(values.sizes[dim.source]);
      std::vector<int32_t> &lengths = values.lengths[dim.name];
      lengths.clear();
      for (int32_t length : values.lengths[dim.source])
        lengths.push_back((int32_t)ceilDiv(length));
    } else if (dim.kind == DimInfo::Kind::packed) {
      int64_t total = 0;
      for (int32_t length : values.lengths[dim.sequence])
        total += length;
      values.sizes[dim.name] = total;
    }
  }
}
