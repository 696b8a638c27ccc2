//===- python/src/Arrays.h - numpy arrays, statuses, options ----*- C++ -*-===//
//
// What every binding of nn._nn shares: numpy arrays to and from runtime
// tensors (without a copy where the layout allows), absl::Status to the
// Python exception nn.Error, and keyword arguments to the option structs
// of nn/Options.h.
//
//===----------------------------------------------------------------------===//

#ifndef NN_PYTHON_ARRAYS_H
#define NN_PYTHON_ARRAYS_H

#include "nn/Manifest.h"
#include "nn/Options.h"
#include "nn/Runtime.h"

#include "absl/status/statusor.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace nn::python {

namespace py = pybind11;

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// Creates nn._nn.Error (an Exception with `code`, absl's name of the
/// status code such as "INVALID_ARGUMENT", and `message`) in `module`.
void defineError(py::module_ &module);

/// Raises `status` (not OK) as nn.Error.
[[noreturn]] void raise(const absl::Status &status);

/// Raises `status` unless it is OK.
inline void check(const absl::Status &status) {
  if (!status.ok())
    raise(status);
}

/// The value of `value`, or its status raised.
template <typename T> T check(absl::StatusOr<T> value) {
  if (!value.ok())
    raise(value.status());
  return *std::move(value);
}

//===----------------------------------------------------------------------===//
// Arrays
//===----------------------------------------------------------------------===//

// Arrays cross through the buffer protocol and numpy's Python API, not
// pybind11's numpy.h: pybind11 2.10 (Debian 12) reads numpy's C structs
// with their 1.x layout and would misread numpy 2's dtypes.

/// Registers the type whose buffers numpy arrays over tensors view
/// (nn._nn.TensorBuffer).
void defineArrays(py::module_ &module);

/// The numpy dtype name of `dtype` ("float32").
const char *numpyType(DType dtype);

/// `value` as a tensor, `what` naming it in errors ("input 'features'").
/// A C-contiguous, aligned, native-order numpy array of float32, float64,
/// int32 or int64 is shared, not copied: the tensor keeps the array alive
/// and the runtime reads it in place (and never writes it). Any other
/// array of those dtypes is copied into a contiguous one. Other objects
/// (lists, scalars) become arrays of `dtype` when given, else as numpy
/// infers; a dtype nn does not run (float16, bool, object, ...) is a
/// TypeError naming `what`.
Tensor toTensor(py::handle value, const std::string &what,
                std::optional<DType> dtype = std::nullopt);

/// A numpy array over `tensor`'s memory, which it takes over (no copy).
py::object toArray(Tensor tensor);

/// A dict of arrays by name: copies of `tensors`.
py::dict toArrays(const std::map<std::string, Tensor> &tensors);

/// A dict of arrays (or array-likes) by name, as tensors; `kind` names
/// the dict in errors ("input", "parameter"), and `dtypeOf` gives the
/// dtype a non-array value is converted to (by name; none when unknown).
/// `share` false copies every array: for tensors kept past the call (a
/// train state, a dataset, initial parameters), which a later change of
/// the caller's array must not reach.
std::map<std::string, Tensor> toTensors(
    py::handle dict, const std::string &kind,
    const std::function<std::optional<DType>(const std::string &)> &dtypeOf,
    bool share = true);

/// For toTensors: no dtype to convert non-arrays to (numpy infers it).
inline std::optional<DType> anyDtype(const std::string &) {
  return std::nullopt;
}

/// Whether `value` is a Python int or float (not a bool) with a finite
/// value, stored in `number`.
bool finiteNumber(const py::handle &value, double &number);

/// {dim: lengths} as the runtime takes them: each a sequence of integers
/// within int32.
std::map<std::string, std::vector<int32_t>> toLengths(py::handle dict);

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

/// The keyword a Python call spells an option with: its flag name with '_'
/// for '-' ("weight_decay", "pack_frontier").
std::string keyword(const OptionInfo &info);

/// Reads the options of nn/Options.h structs from keyword arguments: each
/// bind() takes (and removes from `kwargs`) the option's keyword when it
/// is there, checking its type (bool, a finite number, a string, one of
/// an enumeration's spellings); absent keywords keep the struct's values.
class KeywordBinder {
public:
  explicit KeywordBinder(py::dict &kwargs) : kwargs(kwargs) {}

  void bind(bool &value, const OptionInfo &info);
  void bind(double &value, const OptionInfo &info);
  void bind(std::string &value, const OptionInfo &info);
  template <typename E>
  std::enable_if_t<std::is_enum_v<E>> bind(E &value, const OptionInfo &info) {
    std::string spelled;
    if (!take(info, spelled))
      return;
    std::optional<E> parsed = parseEnum<E>(spelled);
    if (!parsed)
      throw py::value_error(keyword(info) + ": " +
                            unknownEnumMessage<E>(spelled));
    value = *parsed;
  }

private:
  /// The keyword's value as a string, when given; a TypeError otherwise.
  bool take(const OptionInfo &info, std::string &value);

  py::dict &kwargs;
};

/// Takes `key` from `kwargs` as a T, when it is there.
template <typename T>
void takeKeyword(py::dict &kwargs, const char *key, T &value,
                 const char *expected) {
  if (!kwargs.contains(key))
    return;
  py::object given = kwargs.attr("pop")(key);
  if constexpr (std::is_same_v<T, bool>) {
    if (!py::isinstance<py::bool_>(given))
      throw py::type_error(std::string(key) + ": expected " + expected +
                           ", got " + py::repr(given).cast<std::string>());
  } else if constexpr (std::is_floating_point_v<T>) {
    double number;
    if (!finiteNumber(given, number))
      throw py::type_error(std::string(key) + ": expected " + expected +
                           ", got " + py::repr(given).cast<std::string>());
  } else if constexpr (std::is_integral_v<T>) {
    if (py::isinstance<py::bool_>(given) || !py::isinstance<py::int_>(given))
      throw py::type_error(std::string(key) + ": expected " + expected +
                           ", got " + py::repr(given).cast<std::string>());
  }
  try {
    value = given.cast<T>();
  } catch (const py::cast_error &) {
    throw py::type_error(std::string(key) + ": expected " + expected +
                         ", got " + py::repr(given).cast<std::string>());
  }
}

/// A TypeError naming the keywords `kwargs` still holds (none of the
/// call's), when there are any; `call` names the call ("nn.compile").
void rejectUnknownKeywords(const py::dict &kwargs, const std::string &call);

} // namespace nn::python

#endif // NN_PYTHON_ARRAYS_H
