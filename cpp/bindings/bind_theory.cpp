// Bindings of theory.hpp: the native Monte-Carlo estimate of p_Q.
#include "arrays.hpp"
#include "tripletsearch/theory.hpp"

namespace ts = tripletsearch;

void register_theory(py::module_& m) {
  m.def(
      "p_correct_monte_carlo",
      [](double gamma, std::int64_t d, std::int64_t n_samples, std::uint64_t seed, int threads) {
        if (!(gamma > 0.0)) throw std::invalid_argument("gamma: must be > 0");
        if (d < 1) throw std::invalid_argument("d: must be >= 1");
        if (n_samples < 1) throw std::invalid_argument("n_samples: must be >= 1");
        require_threads(threads);
        ts::MeanStderr r{};
        {
          py::gil_scoped_release release;
          r = ts::p_correct_monte_carlo(gamma, d, n_samples, seed, threads);
        }
        return py::make_tuple(r.mean, r.stderr_);
      },
      py::arg("gamma"), py::arg("d"), py::arg("n_samples"), py::arg("seed"), py::arg("threads"));
}
