//===- Manifest.cpp - the text an artifact carries about itself -----------===//
//
// One record per line, space-separated tokens; names are percent-encoded so
// that they never contain spaces. A static axis is written as its size, a
// named axis as the dim name (dim names never start with a digit).
//
//   nn-artifact 5
//   graph NAME
//   target TARGET                  (cpu, cuda, ...: see isTargetName)
//   dim NAME batch | dim NAME batch flatten SOURCE INNER
//                  | dim NAME seq BATCH [SOURCE FACTOR [OFFSET]]
//                  | dim NAME seq BATCH computed | dim NAME seq BATCH lift
//                  SOURCE | dim NAME packed BATCH SEQ [INNER]
//   root NAME
//   input NAME DTYPE CLASSES RESERVED_CLASS RANK AXIS...
//   param NAME DTYPE RANK SIZE...
//   init NAME zeros|ones|uniform|normal SCALE     (after NAME's param)
//   output NAME DTYPE RANK AXIS...
//   saved NAME DTYPE RANK AXIS...                 (any dims, any position)
//   loss NAME NORMALIZATION SCALE USE_NORMALIZED AS_ERROR packed|padded
//        BATCH N SEQ...
//   kernel NAME ORIGIN
//   hostvisible ARG...
//   data-parallel                                 (a data-parallel step)
//   end
//
// An artifact's manifest is untrusted input like any other: parse() reads
// it strictly (every token, every integer's range) and verify() checks that
// it describes a callable graph (declared dims, well-formed axes, sizes
// whose byte counts fit in 64 bits), so a damaged manifest is an error and
// never a crash in the runtime.
//===----------------------------------------------------------------------===//

#include "nn/Manifest.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
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

constexpr size_t kMaxTargetLength = 64;

/// A target name: what the device registry keys backends on ("cpu",
/// "cuda", "rocm-gfx90a"). Never needs percent-encoding.
bool isTargetName(const std::string &name) {
  if (name.empty() || name.size() > kMaxTargetLength || name[0] < 'a' ||
      name[0] > 'z')
    return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-'))
      return false;
  return true;
}

/// Percent-decodes a token; false on a stray '%', a raw byte encode()
/// would have escaped, or an encoded NUL other than the empty name's "%00".
bool decode(const std::string &token, std::string &out) {
  out.clear();
  if (token == "%00")
    return true;
  for (size_t i = 0; i < token.size(); ++i) {
    unsigned char c = token[i];
    // encode() escapes everything else: a raw control byte, NUL or
    // non-ASCII byte is damage.
    if (c <= ' ' || c >= 0x7f)
      return false;
    if (c != '%') {
      out += (char)c;
      continue;
    }
    if (i + 2 >= token.size() || !std::isxdigit((unsigned char)token[i + 1]) ||
        !std::isxdigit((unsigned char)token[i + 2]))
      return false;
    int value = std::stoi(token.substr(i + 1, 2), nullptr, 16);
    if (value == 0)
      return false;
    out += (char)value;
    i += 2;
  }
  return true;
}

/// A decimal integer, all of the token; false on anything else or overflow.
bool parseInteger(const std::string &token, int64_t &value) {
  if (token.empty() || token.size() > 20)
    return false;
  errno = 0;
  char *end = nullptr;
  long long parsed = std::strtoll(token.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' ||
      !(std::isdigit((unsigned char)token[0]) || token[0] == '-'))
    return false;
  value = parsed;
  return true;
}

std::string axisToken(const Axis &axis) {
  return axis.isNamed() ? encode(axis.dim) : std::to_string(axis.size);
}

} // namespace

std::string nn::derivedFormula(const DimInfo &dim, const std::string &source) {
  if (dim.lift)
    return source;
  if (dim.offset != 0)
    return source + " + " + std::to_string(dim.offset);
  return "ceil(" + source + " / " + std::to_string(dim.factor) + ")";
}

const DimInfo *Manifest::findDim(const std::string &name) const {
  for (const DimInfo &dim : dims)
    if (dim.name == name)
      return &dim;
  return nullptr;
}

std::string Manifest::serialize() const {
  std::ostringstream os;
  os << "nn-artifact " << kManifestVersion << "\n";
  os << "graph " << encode(graph) << "\n";
  os << "target " << encode(target) << "\n";
  for (const DimInfo &dim : dims) {
    os << "dim " << encode(dim.name);
    switch (dim.kind) {
    case DimInfo::Kind::batch:
      os << " batch";
      if (dim.isFlatten())
        os << " flatten " << encode(dim.source) << " " << encode(dim.inner);
      break;
    case DimInfo::Kind::seq:
      os << " seq " << encode(dim.batch);
      if (dim.computed)
        os << " computed";
      if (dim.lift)
        os << " lift " << encode(dim.source);
      else if (!dim.source.empty())
        os << " " << encode(dim.source) << " " << dim.factor;
      if (dim.offset != 0)
        os << " " << dim.offset;
      break;
    case DimInfo::Kind::packed:
      os << " packed " << encode(dim.batch) << " " << encode(dim.sequence);
      if (!dim.inner.empty())
        os << " " << encode(dim.inner);
      break;
    }
    os << "\n";
  }
  for (const std::string &root : rootDims)
    os << "root " << encode(root) << "\n";
  for (const TensorInfo &input : inputs) {
    os << "input " << encode(input.name) << " " << toString(input.dtype) << " "
       << input.classes << " " << input.reservedClass << " "
       << input.axes.size();
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
  char number[64];
  for (const TensorInfo &parameter : parameters)
    if (!parameter.init.empty()) {
      std::snprintf(number, sizeof(number), "%.17g", parameter.initScale);
      os << "init " << encode(parameter.name) << " " << parameter.init << " "
         << number << "\n";
    }
  for (const TensorInfo &output : outputs) {
    os << "output " << encode(output.name) << " " << toString(output.dtype)
       << " " << output.axes.size();
    for (const Axis &axis : output.axes)
      os << " " << axisToken(axis);
    os << "\n";
  }
  for (const TensorInfo &value : saved) {
    os << "saved " << encode(value.name) << " " << toString(value.dtype) << " "
       << value.axes.size();
    for (const Axis &axis : value.axes)
      os << " " << axisToken(axis);
    os << "\n";
  }
  for (const LossInfo &loss : losses) {
    std::snprintf(number, sizeof(number), "%.17g", loss.scale);
    os << "loss " << encode(loss.name) << " " << loss.normalization << " "
       << number << " " << loss.useNormalizedLoss << " " << loss.asError << " "
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
  if (dataParallel)
    os << "data-parallel\n";
  os << "end\n";
  return os.str();
}

absl::Status Manifest::parse(const std::string &text, Manifest &manifest) {
  manifest = Manifest();
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  bool sawHeader = false, sawEnd = false;
  std::set<std::string> singleRecords;
  // Lines are quoted in messages at most 120 characters long.
  auto fail = [&](const std::string &why) {
    std::string shown = line.size() > 120 ? line.substr(0, 120) + "..." : line;
    for (char &c : shown)
      if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
        c = '?';
    return absl::InvalidArgumentError("manifest line " +
                                      std::to_string(number) + ": " + why +
                                      ": '" + shown + "'");
  };
  while (std::getline(lines, line)) {
    ++number;
    if (sawEnd)
      return fail("text after 'end'");
    std::istringstream tokens(line);
    std::vector<std::string> t;
    for (std::string token; tokens >> token;)
      t.push_back(token);
    if (t.empty())
      continue;
    const std::string &kind = t[0];
    if (!sawHeader && kind != "nn-artifact")
      return fail("expected the header 'nn-artifact " +
                  std::to_string(kManifestVersion) + "'");
    // Token `at` as a name or an integer; false (and a message) otherwise.
    std::string why;
    auto name = [&](size_t at, std::string &out) {
      if (at < t.size() && decode(t[at], out))
        return true;
      why = "bad name in field " + std::to_string(at);
      return false;
    };
    auto integer = [&](size_t at, int64_t &out, int64_t min, int64_t max) {
      if (at < t.size() && parseInteger(t[at], out) && out >= min && out <= max)
        return true;
      why = "field " + std::to_string(at) + " is not an integer in [" +
            std::to_string(min) + ", " + std::to_string(max) + "]";
      return false;
    };
    auto axis = [&](size_t at, Axis &out) {
      if (at < t.size() && !t[at].empty() &&
          (std::isdigit((unsigned char)t[at][0]) || t[at][0] == '-'))
        return integer(at, out.size, 0, INT64_MAX);
      return name(at, out.dim) && !out.dim.empty();
    };
    if ((kind == "nn-artifact" || kind == "graph" || kind == "target" ||
         kind == "hostvisible" || kind == "data-parallel") &&
        !singleRecords.insert(kind).second)
      return fail("repeated '" + kind + "' record");
    if (kind == "nn-artifact") {
      if (t.size() != 2 || t[1] != std::to_string(kManifestVersion))
        return fail("unsupported artifact version (this runtime reads " +
                    std::to_string(kManifestVersion) +
                    "; recompile the model)");
      sawHeader = true;
    } else if (kind == "graph" && t.size() == 2) {
      if (!name(1, manifest.graph))
        return fail(why);
    } else if (kind == "target" && t.size() == 2) {
      // Any well-formed name: which targets run is the runtime's device
      // registry's business, when the artifact is loaded.
      manifest.target = t[1];
      if (!isTargetName(manifest.target))
        return fail("malformed target (a lowercase letter, then lowercase "
                    "letters, digits, '_' or '-'; at most " +
                    std::to_string(kMaxTargetLength) + " characters)");
    } else if (kind == "data-parallel" && t.size() == 1) {
      manifest.dataParallel = true;
    } else if (kind == "hostvisible") {
      for (size_t i = 1; i < t.size(); ++i) {
        int64_t argument;
        if (!integer(i, argument, 0, INT32_MAX))
          return fail(why);
        manifest.hostVisibleArguments.push_back(argument);
      }
    } else if (kind == "kernel" && t.size() == 3) {
      KernelInfo kernel;
      if (!name(1, kernel.name) || !name(2, kernel.origin))
        return fail(why);
      manifest.kernels.push_back(kernel);
    } else if (kind == "dim" && t.size() >= 3) {
      DimInfo dim;
      bool ok = name(1, dim.name);
      if (t[2] == "batch" && t.size() == 3) {
        dim.kind = DimInfo::Kind::batch;
      } else if (t[2] == "batch" && t.size() == 6 && t[3] == "flatten") {
        dim.kind = DimInfo::Kind::batch;
        ok = ok && name(4, dim.source) && name(5, dim.inner);
      } else if (t[2] == "seq" && t.size() == 6 && t[4] == "lift") {
        dim.kind = DimInfo::Kind::seq;
        dim.lift = true;
        dim.factor = 1;
        ok = ok && name(3, dim.batch) && name(5, dim.source);
      } else if (t[2] == "seq" && t.size() == 5 && t[4] == "computed") {
        dim.kind = DimInfo::Kind::seq;
        dim.computed = true;
        ok = ok && name(3, dim.batch);
      } else if (t[2] == "seq" && t.size() >= 4 && t.size() <= 7 &&
                 t.size() != 5) {
        dim.kind = DimInfo::Kind::seq;
        ok = ok && name(3, dim.batch);
        if (t.size() >= 6)
          ok =
              ok && name(4, dim.source) && integer(5, dim.factor, 1, INT32_MAX);
        if (t.size() == 7)
          ok = ok && integer(6, dim.offset, 1, INT32_MAX);
      } else if (t[2] == "packed" && (t.size() == 5 || t.size() == 6)) {
        dim.kind = DimInfo::Kind::packed;
        ok = ok && name(3, dim.batch) && name(4, dim.sequence);
        if (t.size() == 6)
          ok = ok && name(5, dim.inner);
      } else {
        return fail("bad dim record");
      }
      if (!ok)
        return fail(why);
      manifest.dims.push_back(dim);
    } else if (kind == "root" && t.size() == 2) {
      std::string root;
      if (!name(1, root))
        return fail(why);
      manifest.rootDims.push_back(root);
    } else if ((kind == "input" || kind == "output" || kind == "param" ||
                kind == "saved") &&
               t.size() >= 4) {
      TensorInfo info;
      if (!name(1, info.name))
        return fail(why);
      if (!parseDType(t[2], info.dtype))
        return fail("bad dtype");
      size_t at = 3;
      if (kind == "input" &&
          (!integer(at++, info.classes, 0, INT64_MAX) ||
           !integer(at++, info.reservedClass, -1, INT64_MAX)))
        return fail(why);
      int64_t rank;
      if (!integer(at++, rank, 0, 32) || t.size() != at + (size_t)rank)
        return fail("bad rank");
      info.axes.resize(rank);
      for (int64_t i = 0; i < rank; ++i)
        if (!axis(at + i, info.axes[i]))
          return fail(why);
      (kind == "input"   ? manifest.inputs
       : kind == "param" ? manifest.parameters
       : kind == "saved" ? manifest.saved
                         : manifest.outputs)
          .push_back(info);
    } else if (kind == "init" && t.size() == 4) {
      std::string param;
      if (!name(1, param))
        return fail(why);
      auto found = std::find_if(
          manifest.parameters.begin(), manifest.parameters.end(),
          [&](const TensorInfo &info) { return info.name == param; });
      if (found == manifest.parameters.end())
        return fail("init record for '" + param +
                    "', which no earlier param record declares");
      if (!found->init.empty())
        return fail("repeated init record for '" + param + "'");
      if (t[2] != "zeros" && t[2] != "ones" && t[2] != "uniform" &&
          t[2] != "normal")
        return fail("unknown init scheme '" + t[2] + "'");
      char *end = nullptr;
      double scale = std::strtod(t[3].c_str(), &end);
      if (*end != '\0' || !std::isfinite(scale) || scale < 0)
        return fail("init scale is not a finite number >= 0");
      found->init = t[2];
      found->initScale = scale;
    } else if (kind == "loss" && t.size() >= 9) {
      LossInfo loss;
      loss.normalization = t[2];
      char *end = nullptr;
      loss.scale = std::strtod(t[3].c_str(), &end);
      if (*end != '\0' || !std::isfinite(loss.scale))
        return fail("loss scale is not a finite number");
      if ((t[4] != "0" && t[4] != "1") || (t[5] != "0" && t[5] != "1") ||
          (t[6] != "packed" && t[6] != "padded"))
        return fail("bad loss flags");
      loss.useNormalizedLoss = t[4] == "1";
      loss.asError = t[5] == "1";
      loss.packed = t[6] == "packed";
      int64_t n;
      if (!name(1, loss.name) || !name(7, loss.batch) || !integer(8, n, 0, 32))
        return fail(why);
      if (t.size() != 9 + (size_t)n)
        return fail("bad loss record");
      loss.sequences.resize(n);
      for (int64_t i = 0; i < n; ++i)
        if (!name(9 + i, loss.sequences[i]))
          return fail(why);
      manifest.losses.push_back(loss);
    } else if (kind == "end" && t.size() == 1) {
      sawEnd = true;
    } else {
      return fail("unknown or malformed record");
    }
  }
  if (!sawHeader || !sawEnd)
    return absl::InvalidArgumentError(
        "not an nn artifact manifest (missing header or end)");
  absl::Status status = manifest.verify();
  if (!status.ok())
    return withContext(status, "manifest: ");
  return absl::OkStatus();
}

absl::Status Manifest::verify() const {
  auto fail = [](const std::string &why) {
    return absl::InvalidArgumentError(why);
  };
  if (graph.empty())
    return fail("no 'graph' record");
  std::map<std::string, const DimInfo *> declared;
  for (const DimInfo &dim : dims) {
    std::string what = "dim '" + dim.name + "'";
    if (dim.name.empty() || std::isdigit((unsigned char)dim.name[0]))
      return fail(what + ": a dim name is not empty and starts with no digit");
    if (!declared.emplace(dim.name, &dim).second)
      return fail(what + " is declared twice");
    // Declarations refer only to dims declared before them.
    auto earlier = [&](const std::string &other, DimInfo::Kind kind) {
      auto it = declared.find(other);
      return it != declared.end() && it->second != &dim &&
             it->second->kind == kind;
    };
    if (dim.kind == DimInfo::Kind::seq || dim.kind == DimInfo::Kind::packed) {
      if (!earlier(dim.batch, DimInfo::Kind::batch))
        return fail(what + ": '" + dim.batch +
                    "' is not a batch dim declared before it");
    }
    if (dim.isFlatten()) {
      if (!earlier(dim.source, DimInfo::Kind::batch) ||
          declared[dim.source]->isFlatten())
        return fail(what + ": '" + dim.source +
                    "' is not an unflattened batch dim declared before it");
      if (!earlier(dim.inner, DimInfo::Kind::seq) ||
          declared[dim.inner]->batch != dim.source)
        return fail(what + ": '" + dim.inner + "' is not a sequence dim of '" +
                    dim.source + "' declared before it");
      continue;
    }
    const DimInfo *batchDim =
        dim.kind == DimInfo::Kind::seq ? declared[dim.batch] : nullptr;
    if (dim.lift) {
      if (!batchDim->isFlatten() || !earlier(dim.source, DimInfo::Kind::seq) ||
          declared[dim.source]->batch != batchDim->source)
        return fail(what + ": lifts '" + dim.source + "' onto '" + dim.batch +
                    "', which is not a flattened batch of its batch");
      continue;
    }
    if (batchDim && batchDim->isFlatten() && !dim.computed &&
        dim.source.empty())
      return fail(what + ": a sequence dim of the flattened batch '" +
                  dim.batch + "' must be computed, lifted or derived");
    const std::string &source =
        dim.kind == DimInfo::Kind::packed ? dim.sequence : dim.source;
    if ((dim.kind == DimInfo::Kind::packed || !dim.source.empty()) &&
        (!earlier(source, DimInfo::Kind::seq) ||
         declared[source]->batch != dim.batch))
      return fail(what + ": '" + source +
                  "' is not a sequence dim of the same batch declared "
                  "before it");
    if (dim.kind == DimInfo::Kind::seq && !dim.source.empty() && dim.factor < 1)
      return fail(what + ": derived with factor " + std::to_string(dim.factor) +
                  " (must be at least 1)");
    if (!dim.inner.empty() &&
        (dim.inner == dim.sequence || !earlier(dim.inner, DimInfo::Kind::seq) ||
         declared[dim.inner]->batch != dim.batch))
      return fail(what + ": '" + dim.inner +
                  "' is not a second sequence dim of the same batch declared "
                  "before it");
  }
  // Every batch and root sequence dim is an argument, once.
  std::set<std::string> roots;
  for (const std::string &root : rootDims) {
    auto it = declared.find(root);
    if (it == declared.end() || it->second->kind == DimInfo::Kind::packed ||
        !it->second->source.empty() || it->second->computed)
      return fail("root '" + root +
                  "' is not a declared batch or root sequence dim");
    if (!roots.insert(root).second)
      return fail("root '" + root + "' is listed twice");
  }
  for (const DimInfo &dim : dims)
    if (dim.kind != DimInfo::Kind::packed && dim.source.empty() &&
        !dim.computed && !roots.count(dim.name))
      return fail("dim '" + dim.name + "' has no 'root' record");
  // Dims whose lengths the graph computes, directly or through a derived
  // or packed dim; inputs and parameters cannot name them.
  std::set<std::string> computed;
  for (const DimInfo &dim : dims) {
    const std::string &source =
        dim.kind == DimInfo::Kind::packed ? dim.sequence : dim.source;
    if (dim.computed || computed.count(source) || computed.count(dim.inner) ||
        (dim.kind == DimInfo::Kind::seq && computed.count(dim.batch)))
      computed.insert(dim.name);
  }
  for (const DimInfo &dim : dims) {
    if (!dim.computed)
      continue;
    std::string name = lengthsOutputName(dim.name);
    auto it = std::find_if(outputs.begin(), outputs.end(),
                           [&](const TensorInfo &t) { return t.name == name; });
    if (it == outputs.end() || it->dtype != DType::i32 ||
        it->axes.size() != 1 || it->axes[0].dim != dim.batch)
      return fail("computed dim '" + dim.name + "' has no output '" + name +
                  "' of type i32 [" + dim.batch + "]");
  }

  // Axes: named position axes first ([], [B], [B, T...] or [N]), then
  // static sizes whose byte size fits in 64 bits.
  std::set<std::string> tensorNames;
  auto checkTensor = [&](const TensorInfo &info,
                         const std::string &kind) -> absl::Status {
    std::string what = kind + " '" + info.name + "'";
    if (info.name.empty())
      return fail(kind + " without a name");
    if (kind != "output" && !tensorNames.insert(info.name).second)
      return fail(what + " is declared twice");
    std::vector<int64_t> staticSizes;
    const DimInfo *first = nullptr;
    for (size_t i = 0; i < info.axes.size(); ++i) {
      const Axis &axis = info.axes[i];
      if (!axis.isNamed()) {
        staticSizes.push_back(axis.size);
        continue;
      }
      auto it = declared.find(axis.dim);
      if (it == declared.end())
        return fail(what + " axis " + std::to_string(i) +
                    " names an undeclared dim '" + axis.dim + "'");
      const DimInfo &dim = *it->second;
      bool ok = staticSizes.empty();
      // The N-best layout [B, K, Y...]: Y a sequence dim of flatten(B, K).
      auto nested = [&]() {
        const DimInfo *batch = findDim(dim.batch);
        return i >= 2 && batch && batch->isFlatten() &&
               batch->source == first->name && batch->inner == info.axes[1].dim;
      };
      if (i == 0)
        first = &dim;
      else
        ok = ok && first->kind == DimInfo::Kind::batch &&
             dim.kind == DimInfo::Kind::seq &&
             (dim.batch == first->name || nested());
      if (!ok || (kind == "param"))
        return fail(what + " axis " + std::to_string(i) + " ('" + axis.dim +
                    "') is not a valid position axis");
      if (kind == "input" && computed.count(axis.dim))
        return fail(what + " axis " + std::to_string(i) + " names dim '" +
                    axis.dim + "', whose lengths the graph computes");
    }
    if (first && first->kind == DimInfo::Kind::seq)
      return fail(what + " starts with the sequence dim '" + first->name +
                  "' (the batch dim comes first)");
    int64_t bytes;
    if (!checkedByteSize(info.dtype, staticSizes, bytes))
      return fail(what + " has static sizes " + shapeText(staticSizes) +
                  " whose byte size overflows 64 bits");
    if (info.reservedClass >= 0 && info.reservedClass >= info.classes)
      return fail(what + " reserves class " +
                  std::to_string(info.reservedClass) + " outside [0, " +
                  std::to_string(info.classes) + ")");
    return absl::OkStatus();
  };
  for (const TensorInfo &info : inputs)
    if (absl::Status status = checkTensor(info, "input"); !status.ok())
      return status;
  for (const TensorInfo &info : parameters)
    if (absl::Status status = checkTensor(info, "param"); !status.ok())
      return status;
  for (const TensorInfo &info : outputs)
    if (absl::Status status = checkTensor(info, "output"); !status.ok())
      return status;
  // Saved activations are sized, never bound: declared dims in any
  // position, a static part whose byte size fits in 64 bits.
  for (const TensorInfo &info : saved) {
    std::string what = "saved value '" + info.name + "'";
    std::vector<int64_t> staticSizes;
    for (size_t i = 0; i < info.axes.size(); ++i) {
      if (!info.axes[i].isNamed())
        staticSizes.push_back(info.axes[i].size);
      else if (!declared.count(info.axes[i].dim))
        return fail(what + " axis " + std::to_string(i) +
                    " names an undeclared dim '" + info.axes[i].dim + "'");
    }
    int64_t bytes;
    if (!checkedByteSize(info.dtype, staticSizes, bytes))
      return fail(what + " has static sizes " + shapeText(staticSizes) +
                  " whose byte size overflows 64 bits");
  }

  std::set<std::string> lossNames;
  for (const LossInfo &loss : losses) {
    std::string what = "loss '" + loss.name + "'";
    if (!lossNames.insert(loss.name).second)
      return fail(what + " is declared twice");
    if (loss.normalization != "sum" && loss.normalization != "per_frame" &&
        loss.normalization != "per_sequence" && loss.normalization != "custom")
      return fail(what + " has unknown normalization '" + loss.normalization +
                  "'");
    // An empty batch: a callee's loss whose frames the entry cannot count.
    if (loss.batch.empty() && loss.sequences.empty())
      continue;
    auto batch = declared.find(loss.batch);
    if (batch == declared.end() || batch->second->kind != DimInfo::Kind::batch)
      return fail(what + ": '" + loss.batch + "' is not a batch dim");
    for (const std::string &sequence : loss.sequences) {
      auto it = declared.find(sequence);
      if (it == declared.end() || it->second->kind != DimInfo::Kind::seq ||
          it->second->batch != loss.batch)
        return fail(what + ": '" + sequence + "' is not a sequence dim of '" +
                    loss.batch + "'");
    }
    if (loss.packed && loss.sequences.size() != 1)
      return fail(what + " is packed over " +
                  std::to_string(loss.sequences.size()) +
                  " sequence dims (must be one)");
  }
  int64_t arguments = entryArity() - (hasResults() ? 1 : 0);
  for (int64_t argument : hostVisibleArguments)
    if (argument >= arguments)
      return fail("hostvisible argument " + std::to_string(argument) +
                  " is not below the entry's " + std::to_string(arguments) +
                  " arguments");
  return absl::OkStatus();
}

bool Manifest::hasResults() const {
  return !outputs.empty() || !losses.empty();
}

int64_t Manifest::entryArity() const {
  int64_t arity = hasResults() ? 1 : 0;
  for (const std::string &root : rootDims) {
    const DimInfo *dim = findDim(root);
    arity += dim && dim->kind == DimInfo::Kind::seq ? 2 : 1;
  }
  return arity + (int64_t)inputs.size() + (int64_t)parameters.size();
}

bool DimValues::isValid(const std::vector<Axis> &axes,
                        const std::vector<int64_t> &index) const {
  for (size_t i = 1; i < axes.size() && i < index.size(); ++i) {
    if (!axes[i].isNamed())
      continue;
    auto it = lengths.find(axes[i].dim);
    if (it == lengths.end())
      continue;
    // An N-best axis [B, K, Y]: Y's lengths are over flatten(B, K), whose
    // entry for (b, k) follows b's offset (axis 1 checked k already).
    int64_t row = index[0];
    auto flat = flatBatch.find(axes[i].dim);
    if (i >= 2 && flat != flatBatch.end() && axes[0].dim != flat->second) {
      auto offset = offsets.find(flat->second);
      if (offset == offsets.end() || row >= (int64_t)offset->second.size())
        return false;
      row = offset->second[row] + index[1];
    }
    if (row >= (int64_t)it->second.size() || index[i] >= it->second[row])
      return false;
  }
  return true;
}

void nn::deriveDims(const Manifest &manifest, DimValues &values) {
  // Dims that follow from a computed dim whose lengths are not known yet
  // (before the run that computes them).
  std::set<std::string> unknown;
  for (const DimInfo &dim : manifest.dims) {
    const std::string &source =
        dim.kind == DimInfo::Kind::packed ? dim.sequence : dim.source;
    if ((dim.computed && !values.lengths.count(dim.name)) ||
        unknown.count(source) || unknown.count(dim.inner) ||
        (dim.kind == DimInfo::Kind::seq && unknown.count(dim.batch)))
      unknown.insert(dim.name);
  }
  for (const DimInfo &dim : manifest.dims) {
    if (dim.kind == DimInfo::Kind::seq &&
        manifest.findDim(dim.batch)->isFlatten())
      values.flatBatch[dim.name] = dim.batch;
    if (unknown.count(dim.name))
      continue;
    if (dim.isFlatten()) {
      const std::vector<int32_t> &inner = values.lengths[dim.inner];
      std::vector<int64_t> &offsets = values.offsets[dim.name];
      offsets.clear();
      int64_t total = 0;
      for (int32_t length : inner) {
        offsets.push_back(total);
        total += length;
      }
      values.sizes[dim.name] = total;
    } else if (dim.lift) {
      const DimInfo &flat = *manifest.findDim(dim.batch);
      const std::vector<int32_t> &source = values.lengths[dim.source];
      const std::vector<int32_t> &inner = values.lengths[flat.inner];
      std::vector<int32_t> &lengths = values.lengths[dim.name];
      lengths.clear();
      for (size_t b = 0; b < inner.size() && b < source.size(); ++b)
        lengths.insert(lengths.end(), std::max(inner[b], 0), source[b]);
      values.sizes[dim.name] = values.sizes[dim.source];
    } else if (dim.kind == DimInfo::Kind::seq && !dim.source.empty()) {
      values.sizes[dim.name] = dim.deriveLength(values.sizes[dim.source]);
      std::vector<int32_t> &lengths = values.lengths[dim.name];
      lengths.clear();
      for (int32_t length : values.lengths[dim.source])
        lengths.push_back((int32_t)dim.deriveLength(length));
    } else if (dim.kind == DimInfo::Kind::packed && !dim.inner.empty()) {
      const std::vector<int32_t> &rows = values.lengths[dim.sequence];
      const std::vector<int32_t> &columns = values.lengths[dim.inner];
      int64_t total = 0;
      for (size_t b = 0; b < rows.size() && b < columns.size(); ++b)
        total += (int64_t)rows[b] * columns[b];
      values.sizes[dim.name] = total;
    } else if (dim.kind == DimInfo::Kind::packed) {
      int64_t total = 0;
      for (int32_t length : values.lengths[dim.sequence])
        total += length;
      values.sizes[dim.name] = total;
    }
  }
}
