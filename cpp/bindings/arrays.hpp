// Array plumbing shared by the binding files: typed aliases and shape checks. Values and
// index ranges are the core's to check (it throws std::invalid_argument, a ValueError);
// these checks only keep a direct call into _core from reading out of bounds.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "tripletsearch/oracle/user_grid.hpp"

namespace py = pybind11;

// The probe of a tripletsearch::Cancel for a long call made with the GIL released: takes
// the GIL and runs Python's signal handlers; true when one raised (Ctrl-C: the
// KeyboardInterrupt is then pending, and the Interrupted translator leaves it in place).
inline std::function<bool()> signal_probe() {
  return [] {
    py::gil_scoped_acquire acquire;
    return PyErr_CheckSignals() != 0;
  };
}

// Runs fn(obj) with the GIL released and obj's mutex held: a session shared by Python
// threads is used by one at a time (waiting for the mutex does not hold the GIL).
template <class T, class Fn>
auto locked(T& obj, Fn&& fn) {
  py::gil_scoped_release release;
  std::lock_guard<std::mutex> lock(obj.mutex());
  return fn(obj);
}

// Inputs as the core reads them: C order and aligned (numpy copies a buffer at an odd
// address, e.g. one unpickled from a Dask message, instead of handing it over).
constexpr int kAligned = py::detail::npy_api::NPY_ARRAY_ALIGNED_;
using DoubleArray = py::array_t<double, py::array::c_style | py::array::forcecast | kAligned>;
using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast | kAligned>;
using IndexArray = py::array_t<std::int64_t, py::array::c_style | kAligned>;
// int32 rows (large triplet sets kept as they are: no int64 copy)
using Index32Array = py::array_t<std::int32_t, py::array::c_style | kAligned>;

inline void require_ndim(const py::array& a, int ndim, const char* name) {
  if (a.ndim() != ndim)
    throw std::invalid_argument(std::string(name) + ": expected a " + std::to_string(ndim) +
                                "-d array, got " + std::to_string(a.ndim()) + "-d");
}

inline void require_cols(const py::array& a, py::ssize_t cols, const char* name) {
  if (a.shape(1) != cols)
    throw std::invalid_argument(std::string(name) + ": expected " + std::to_string(cols) +
                                " columns, got " + std::to_string(a.shape(1)));
}

// A new 1-d array with a copy of v.
template <class T>
py::array_t<T> to_array(const std::vector<T>& v) {
  return py::array_t<T>(static_cast<py::ssize_t>(v.size()), v.data());
}

// A new (rows, cols) array with a copy of v (rows * cols values).
template <class T>
py::array_t<T> to_array(const std::vector<T>& v, py::ssize_t rows, py::ssize_t cols) {
  py::array_t<T> out({rows, cols});
  std::copy(v.begin(), v.begin() + rows * cols, out.mutable_data());
  return out;
}

// Value semantics of a bound configuration: it pickles through its state tuple (`state`),
// rebuilt by `make`, which validates as the constructor does; two configurations are equal
// (and hash alike) when their states are. A configuration sent to another process (a Dask
// worker) arrives equal to what was sent, and checked.
template <class T, class State, class Make>
void def_state(py::class_<T>& cls, State state, Make make) {
  cls.def(py::pickle(state, make));
  cls.def(
      "__eq__",
      [state](const T& a, const py::object& other) -> py::object {
        if (!py::isinstance<T>(other)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
        return py::bool_(state(a).equal(state(other.cast<const T&>())));
      },
      py::arg("other"));
  cls.def("__hash__", [state](const T& a) {
    py::list items;  // the state with its lists (an axis's bounds) as tuples
    for (const auto& h : state(a)) {
      const auto v = py::reinterpret_borrow<py::object>(h);
      items.append(py::isinstance<py::list>(v) ? py::tuple(v) : v);
    }
    return py::hash(py::tuple(items));
  });
}

// A search session's user posterior (user_grid.hpp): (gamma grid probabilities, lapse grid
// probabilities), or None when the session infers neither; under the session's lock.
template <class S>
py::object user_posterior_of(const S& s) {
  py::array_t<double> g(tripletsearch::kGammaGrid), l(tripletsearch::kLapseGrid);
  double* pg = g.mutable_data();
  double* pl = l.mutable_data();
  if (!locked(s, [&](const S& x) { return x.user_posterior(pg, pl); })) return py::none();
  return py::make_tuple(g, l);
}
