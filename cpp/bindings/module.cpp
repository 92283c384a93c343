// The _core extension module: wires the per-concept binding files together.
#include "arrays.hpp"
#include "tripletsearch/parallel.hpp"

void register_oracle(py::module_& m);
void register_theory(py::module_& m);
void register_sgd(py::module_& m);
void register_discrete(py::module_& m);
void register_continuous(py::module_& m);

PYBIND11_MODULE(_core, m) {
  m.doc() = "tripletsearch native core (C++17, OpenMP)";
  m.def("max_threads", &tripletsearch::max_threads,
        "Threads OpenMP would use by default (respects OMP_NUM_THREADS); 1 in a serial build.");
  m.def("openmp_enabled", &tripletsearch::openmp_enabled);
  register_oracle(m);
  register_theory(m);
  register_sgd(m);
  register_discrete(m);
  register_continuous(m);
}
