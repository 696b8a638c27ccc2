//===- python/src/Arrays.cpp - numpy arrays, statuses, options ------------===//

#include "python/src/Arrays.h"

#include "absl/status/status.h"

#include <cmath>
#include <limits>

namespace nn::python {

namespace {

/// nn._nn.Error, created once by defineError and kept for the process's
/// life (never destroyed: exceptions may be raised until exit).
PyObject *errorType = nullptr;

/// A Python string of `text`, which may hold bytes that are not UTF-8 (a
/// file name in a message): those become U+FFFD rather than an error.
py::str text(const std::string &value) {
  return py::reinterpret_steal<py::str>(
      PyUnicode_DecodeUTF8(value.data(), (Py_ssize_t)value.size(), "replace"));
}

/// The nn dtype of numpy dtype `dtype`, by kind and size (any byte order).
bool dtypeOf(const py::handle &dtype, DType &type) {
  std::string kind = dtype.attr("kind").cast<std::string>();
  int64_t size = dtype.attr("itemsize").cast<int64_t>();
  if (kind == "f" && size == 4)
    type = DType::f32;
  else if (kind == "f" && size == 8)
    type = DType::f64;
  else if (kind == "i" && size == 4)
    type = DType::i32;
  else if (kind == "i" && size == 8)
    type = DType::i64;
  else
    return false;
  return true;
}

/// A tensor that numpy arrays view through the buffer protocol: the
/// array's base keeps it, and so the tensor's memory, alive.
struct TensorBuffer {
  Tensor tensor;
};

py::object numpy() { return py::module_::import("numpy"); }

} // namespace

void defineError(py::module_ &module) {
  errorType = PyErr_NewExceptionWithDoc(
      "nn._nn.Error",
      "An error of the nn compiler or runtime: `code` is the name of its "
      "status code (\"INVALID_ARGUMENT\", \"NOT_FOUND\", \"UNAVAILABLE\", "
      "\"RESOURCE_EXHAUSTED\", \"INTERNAL\", ...), `message` what went "
      "wrong and where.",
      PyExc_Exception, nullptr);
  if (!errorType)
    throw py::error_already_set();
  module.add_object("Error", py::handle(errorType));
}

void raise(const absl::Status &status) {
  py::str message = text(std::string(status.message()));
  py::object error = py::reinterpret_borrow<py::object>(errorType)(message);
  error.attr("code") = absl::StatusCodeToString(status.code());
  error.attr("message") = message;
  PyErr_SetObject(errorType, error.ptr());
  throw py::error_already_set();
}

void defineArrays(py::module_ &module) {
  py::class_<TensorBuffer>(module, "TensorBuffer", py::buffer_protocol(),
                           "The memory of a tensor nn returned, which the "
                           "numpy array over it keeps alive.")
      .def_buffer([](TensorBuffer &buffer) {
        const Tensor &tensor = buffer.tensor;
        std::vector<ssize_t> shape(tensor.shape().begin(),
                                   tensor.shape().end());
        std::vector<ssize_t> strides(shape.size());
        ssize_t stride = (ssize_t)byteSize(tensor.dtype());
        for (size_t i = shape.size(); i-- > 0;) {
          strides[i] = stride;
          stride *= shape[i];
        }
        const char *format = "f";
        switch (tensor.dtype()) {
        case DType::f32:
          format = "f";
          break;
        case DType::f64:
          format = "d";
          break;
        case DType::i32:
          format = "i";
          break;
        case DType::i64:
          format = "q";
          break;
        }
        return py::buffer_info(buffer.tensor.raw(),
                               (ssize_t)byteSize(tensor.dtype()), format,
                               (ssize_t)shape.size(), shape, strides);
      });
}

const char *numpyType(DType dtype) {
  switch (dtype) {
  case DType::f32:
    return "float32";
  case DType::f64:
    return "float64";
  case DType::i32:
    return "int32";
  case DType::i64:
    return "int64";
  }
  return "float32";
}

Tensor toTensor(py::handle value, const std::string &what,
                std::optional<DType> dtype) {
  py::object np = numpy();
  py::object array = py::reinterpret_borrow<py::object>(value);
  if (!py::isinstance(value, np.attr("ndarray"))) {
    array = np.attr("asarray")(value);
    // Lists and scalars take the graph's dtype, but floats never become
    // integers (1.5 would be truncated without a word).
    if (dtype) {
      std::string kind = array.attr("dtype").attr("kind").cast<std::string>();
      bool integer = *dtype == DType::i32 || *dtype == DType::i64;
      if (integer && kind == "f")
        throw py::type_error(what + ": floats given for a " + toString(*dtype) +
                             " input");
      array = array.attr("astype")(numpyType(*dtype));
    }
  }

  DType type;
  py::object dt = array.attr("dtype");
  if (!dtypeOf(dt, type))
    throw py::type_error(what + ": numpy dtype " +
                         py::str(dt).cast<std::string>() +
                         " is not one nn runs (float32, float64, int32 or "
                         "int64)");
  // Another byte order, alignment or memory layout: a contiguous native
  // copy (numpy's own conversion).
  py::object flags = array.attr("flags");
  bool shareable = flags.attr("c_contiguous").cast<bool>() &&
                   flags.attr("aligned").cast<bool>() &&
                   dt.attr("isnative").cast<bool>();
  if (!shareable)
    array = np.attr("ascontiguousarray")(array, numpyType(type));

  py::buffer_info info = py::reinterpret_borrow<py::buffer>(array).request();
  std::vector<int64_t> shape(info.shape.begin(), info.shape.end());
  // The tensor holds a reference to the array; the last tensor sharing
  // it may go away without the GIL (inside a run), so the release takes
  // it.
  auto *held = new py::object(array);
  std::shared_ptr<void> owner(held, [](void *object) {
    py::gil_scoped_acquire gil;
    delete static_cast<py::object *>(object);
  });
  return Tensor::adopt(type, std::move(shape), info.ptr, std::move(owner));
}

py::object toArray(Tensor tensor) {
  py::object np = numpy();
  if (tensor.numElements() == 0)
    return np.attr("zeros")(py::cast(tensor.shape()),
                            numpyType(tensor.dtype()));
  return np.attr("asarray")(py::cast(TensorBuffer{std::move(tensor)}));
}

py::dict toArrays(const std::map<std::string, Tensor> &tensors) {
  py::dict arrays;
  for (const auto &[name, tensor] : tensors)
    arrays[text(name)] = toArray(tensor);
  return arrays;
}

std::map<std::string, Tensor> toTensors(
    py::handle dict, const std::string &kind,
    const std::function<std::optional<DType>(const std::string &)> &dtypeOf,
    bool share) {
  std::map<std::string, Tensor> tensors;
  if (dict.is_none())
    return tensors;
  if (!py::isinstance<py::dict>(dict))
    throw py::type_error(kind + "s: expected a dict of arrays by name, got " +
                         py::str(py::type::of(dict)).cast<std::string>());
  for (auto [key, value] : py::reinterpret_borrow<py::dict>(dict)) {
    if (!py::isinstance<py::str>(key))
      throw py::type_error(kind + "s: names must be strings, got " +
                           py::repr(key).cast<std::string>());
    std::string name = key.cast<std::string>();
    Tensor tensor = toTensor(value, kind + " '" + name + "'", dtypeOf(name));
    // A copy owns its bytes (Tensor's copy is deep).
    tensors[name] = share ? std::move(tensor) : Tensor(tensor);
  }
  return tensors;
}

std::map<std::string, std::vector<int32_t>> toLengths(py::handle dict) {
  std::map<std::string, std::vector<int32_t>> lengths;
  if (dict.is_none())
    return lengths;
  if (!py::isinstance<py::dict>(dict))
    throw py::type_error("lengths: expected a dict {dim: lengths}, got " +
                         py::str(py::type::of(dict)).cast<std::string>());
  for (auto [key, value] : py::reinterpret_borrow<py::dict>(dict)) {
    if (!py::isinstance<py::str>(key))
      throw py::type_error("lengths: dim names must be strings, got " +
                           py::repr(key).cast<std::string>());
    std::string dim = key.cast<std::string>();
    py::object values = numpy().attr("asarray")(value);
    std::string kind = values.attr("dtype").attr("kind").cast<std::string>();
    int64_t size = values.attr("size").cast<int64_t>();
    if (values.attr("ndim").cast<int64_t>() != 1 ||
        (size && kind != "i" && kind != "u"))
      throw py::type_error("lengths of '" + dim +
                           "': expected a 1-d sequence of integers");
    std::vector<int32_t> &out = lengths[dim];
    for (py::handle entry : values.attr("tolist")()) {
      int64_t length = entry.cast<int64_t>();
      if (length < 0 || length > std::numeric_limits<int32_t>::max())
        throw py::value_error(
            "lengths of '" + dim + "': entry " + std::to_string(out.size()) +
            " is " + std::to_string(length) + ", not within [0, 2^31)");
      out.push_back((int32_t)length);
    }
  }
  return lengths;
}

std::string keyword(const OptionInfo &info) {
  std::string key = info.name;
  for (char &c : key)
    if (c == '-')
      c = '_';
  return key;
}

void KeywordBinder::bind(bool &value, const OptionInfo &info) {
  std::string key = keyword(info);
  if (!kwargs.contains(key))
    return;
  py::object given = kwargs.attr("pop")(key);
  if (!py::isinstance<py::bool_>(given))
    throw py::type_error(key + ": expected True or False, got " +
                         py::repr(given).cast<std::string>());
  value = given.cast<bool>();
}

bool finiteNumber(const py::handle &value, double &number) {
  if (py::isinstance<py::bool_>(value) ||
      !(py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value)))
    return false;
  number = value.cast<double>();
  return std::isfinite(number);
}

void KeywordBinder::bind(double &value, const OptionInfo &info) {
  std::string key = keyword(info);
  if (!kwargs.contains(key))
    return;
  py::object given = kwargs.attr("pop")(key);
  double parsed;
  if (!finiteNumber(given, parsed))
    throw py::type_error(key + ": expected a finite number, got " +
                         py::repr(given).cast<std::string>());
  value = parsed;
}

void KeywordBinder::bind(std::string &value, const OptionInfo &info) {
  take(info, value);
}

bool KeywordBinder::take(const OptionInfo &info, std::string &value) {
  std::string key = keyword(info);
  if (!kwargs.contains(key))
    return false;
  py::object given = kwargs.attr("pop")(key);
  if (!py::isinstance<py::str>(given))
    throw py::type_error(key + ": expected a string, got " +
                         py::repr(given).cast<std::string>());
  value = given.cast<std::string>();
  return true;
}

void rejectUnknownKeywords(const py::dict &kwargs, const std::string &call) {
  if (kwargs.empty())
    return;
  std::string names;
  for (auto [key, value] : kwargs)
    names +=
        (names.empty() ? "'" : ", '") + py::str(key).cast<std::string>() + "'";
  throw py::type_error(call + "() got unknown keyword argument" +
                       (kwargs.size() > 1 ? "s " : " ") + names);
}

} // namespace nn::python
