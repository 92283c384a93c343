// Bindings of theory/: the native Monte-Carlo estimate of p_Q.
#include "arrays.hpp"
#include "tripletsearch/theory/monte_carlo.hpp"

namespace ts = tripletsearch;

void register_theory(py::module_& m) {
  m.def(
      "p_correct_monte_carlo",
      [](double gamma, std::int64_t dim, std::int64_t n_samples, std::uint64_t seed, int threads) {
        ts::MeanStderr r{};
        {
          py::gil_scoped_release release;
          ts::Cancel cancel(signal_probe());
          r = ts::p_correct_monte_carlo(gamma, dim, n_samples, seed, threads, cancel);
        }
        return py::make_tuple(r.mean, r.stderr_);
      },
      py::arg("gamma"), py::arg("dim"), py::arg("n_samples"), py::arg("seed"), py::arg("threads"),
      "(mean, standard error) of the Monte-Carlo estimate of p_Q (Theorem 2.1).");
}
