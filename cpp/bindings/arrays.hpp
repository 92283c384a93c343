// Array plumbing shared by the binding files: typed aliases and shape checks.
// The Python layer validates dtypes, values and index ranges; these checks only keep a
// direct call into _core from reading out of bounds.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace py = pybind11;

using DoubleArray = py::array_t<double, py::array::c_style | py::array::forcecast>;
using IndexArray = py::array_t<std::int64_t, py::array::c_style>;

inline void require_ndim(const py::array& a, int ndim, const char* name) {
  if (a.ndim() != ndim)
    throw std::invalid_argument(std::string(name) + ": expected " + std::to_string(ndim) +
                                "-d array, got " + std::to_string(a.ndim()) + "-d");
}

inline void require_cols(const py::array& a, py::ssize_t cols, const char* name) {
  if (a.shape(1) != cols)
    throw std::invalid_argument(std::string(name) + ": expected " + std::to_string(cols) +
                                " columns, got " + std::to_string(a.shape(1)));
}

inline void require_threads(int threads) {
  if (threads < 1) throw std::invalid_argument("n_jobs: thread count must be >= 1");
}
