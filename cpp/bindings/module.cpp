// The _core extension module: wires the per-concept binding files together, and reports
// how the core was built (OpenMP, SIMD).
#include "arrays.hpp"
#include "tripletsearch/core/errors.hpp"
#include "tripletsearch/core/interrupt.hpp"
#include "tripletsearch/core/parallel.hpp"
#include "tripletsearch/simd/dispatch.hpp"
#include "tripletsearch/simd/vmath.hpp"

void register_rng(py::module_& m);
void register_oracle(py::module_& m);
void register_embedding(py::module_& m);
void register_theory(py::module_& m);
void register_discrete(py::module_& m);
void register_continuous(py::module_& m);
void register_simulate(py::module_& m);
void register_collect(py::module_& m);
void register_trials(py::module_& m);

namespace simd = tripletsearch::simd;

PYBIND11_MODULE(_core, m) {
  m.doc() = "tripletsearch native core (C++17, OpenMP)";
  // A call stopped by Ctrl-C: the KeyboardInterrupt its probe saw is already pending.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tripletsearch::Interrupted&) {
      if (!PyErr_Occurred()) PyErr_SetNone(PyExc_KeyboardInterrupt);
    }
  });
  m.def("max_threads", &tripletsearch::max_threads,
        "Threads OpenMP would use by default (respects OMP_NUM_THREADS); 1 in a serial build.");
  m.def("openmp_enabled", &tripletsearch::openmp_enabled, "Whether the core uses OpenMP.");
  m.def(
      "simd_isa", [] { return std::string(simd::isa_name(simd::active_isa())); },
      "The instruction set the block kernels run: 'avx2' or 'portable'.");
  m.def(
      "set_simd_isa",
      [](const std::string& name) { return simd::set_active_isa(simd::require_isa(name, "isa")); },
      py::arg("isa"),
      "Selects the kernels' instruction set (tests); False when the CPU or build lacks it.");
  m.def(
      "vector_math",
      [](const std::string& name, const DoubleArray& x) {
        using F = simd::VectorFunction;
        F f;
        if (name == "exp")
          f = F::Exp;
        else if (name == "log")
          f = F::Log;
        else if (name == "exp_neg_float")
          f = F::ExpNegFloat;
        else
          throw std::invalid_argument("name: expected 'exp', 'log' or 'exp_neg_float', got '" +
                                      name + "'");
        const py::ssize_t n = x.size();
        py::array_t<double> out(n);
        simd::vector_math(f, x.data(), out.mutable_data(), n);
        return out;
      },
      py::arg("name"), py::arg("x"),
      "exp, log, or the float exp of x <= 0 ('exp_neg_float': on the values rounded to float) "
      "of each value by the kernels' vector maths under the active ISA (the C library's exp "
      "or log for the last n % 4 values, n % 8 for the float exp, and under 'portable'): "
      "tests of its accuracy.");
  m.def(
      "require_allocation",
      [](double bytes, const std::string& name) {
        tripletsearch::require_allocation(bytes, name.c_str());
      },
      py::arg("bytes"), py::arg("name"),
      "ValueError naming `name` when `bytes` exceed this machine's memory (the core's check).");
  register_rng(m);
  register_oracle(m);
  register_embedding(m);
  register_theory(m);
  register_discrete(m);
  register_continuous(m);
  register_simulate(m);
  register_collect(m);
  register_trials(m);
}
