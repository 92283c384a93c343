// Bindings of continuous.hpp: the searcher session and the simulator.
#include "arrays.hpp"
#include "tripletsearch/continuous.hpp"

namespace ts = tripletsearch;

namespace {

ts::ContinuousConfig make_config(std::int64_t d, double gamma, double low, double high, int method,
                                 double alpha, double lapse, std::int64_t stage_cap,
                                 std::int64_t particles, std::int64_t cells_per_axis,
                                 std::int64_t n_obs, std::int64_t tau, int mh_sweeps,
                                 double resample_ess, int threads) {
  if (d < 1) throw std::invalid_argument("dim: must be >= 1");
  if (method < 0 || method > 2) throw std::invalid_argument("method: unknown");
  if (method != 0 && d > 15)
    throw std::invalid_argument("dim: the particle methods support d <= 15");
  if (!(gamma > 0.0)) throw std::invalid_argument("gamma: must be > 0");
  if (!(low < high)) throw std::invalid_argument("bounds: need low < high");
  if (particles < 16) throw std::invalid_argument("particles: must be >= 16");
  ts::ContinuousConfig c;
  c.d = d;
  c.gamma = gamma;
  c.low = low;
  c.high = high;
  c.method = static_cast<ts::ContinuousMethod>(method);
  c.alpha = alpha;
  c.lapse = lapse;
  c.stage_cap = stage_cap;
  c.particles = particles;
  c.cells_per_axis = cells_per_axis;
  c.n_obs = n_obs;
  c.tau = tau;
  c.mh_sweeps = mh_sweeps;
  c.resample_ess = resample_ess;
  c.threads = threads;
  return c;
}

py::array_t<double> vec(const std::vector<double>& v) {
  return py::array_t<double>(v.size(), v.data());
}

}  // namespace

void register_continuous(py::module_& m) {
  m.def("binomial_upper_tail", &ts::binomial_upper_tail, py::arg("n"), py::arg("p"), py::arg("tau"),
        "P(Binomial(n, p) >= tau), the hypothesis test's acceptance probability.");

  py::class_<ts::ContinuousSearcher>(m, "ContinuousSearcher")
      .def(py::init([](std::int64_t d, double gamma, double low, double high, int method,
                       double alpha, double lapse, std::int64_t stage_cap, std::int64_t particles,
                       std::int64_t cells_per_axis, std::int64_t n_obs, std::int64_t tau,
                       int mh_sweeps, double resample_ess, std::uint64_t seed, int threads) {
             require_threads(threads);
             const auto cfg =
                 make_config(d, gamma, low, high, method, alpha, lapse, stage_cap, particles,
                             cells_per_axis, n_obs, tau, mh_sweeps, resample_ess, threads);
             py::gil_scoped_release release;
             return new ts::ContinuousSearcher(cfg, seed);
           }),
           py::arg("d"), py::arg("gamma"), py::arg("low"), py::arg("high"), py::arg("method"),
           py::arg("alpha"), py::arg("lapse"), py::arg("stage_cap"), py::arg("particles"),
           py::arg("cells_per_axis"), py::arg("n_obs"), py::arg("tau"), py::arg("mh_sweeps"),
           py::arg("resample_ess"), py::arg("seed"), py::arg("threads"))
      .def("ask",
           [](ts::ContinuousSearcher& s) {
             const auto d = static_cast<py::ssize_t>(s.region().center.size());
             py::array_t<double> a(d), b(d);
             double* pa = a.mutable_data();
             double* pb = b.mutable_data();
             {
               py::gil_scoped_release release;
               s.ask(pa, pb);
             }
             return py::make_tuple(a, b);
           })
      .def(
          "tell",
          [](ts::ContinuousSearcher& s, bool a_closer) {
            py::gil_scoped_release release;
            return s.tell(a_closer);
          },
          py::arg("a_closer"))
      .def("estimate",
           [](const ts::ContinuousSearcher& s) {
             py::array_t<double> out(static_cast<py::ssize_t>(s.region().center.size()));
             s.estimate(out.mutable_data());
             return out;
           })
      .def_property_readonly("center",
                             [](const ts::ContinuousSearcher& s) { return vec(s.region().center); })
      .def_property_readonly("edge",
                             [](const ts::ContinuousSearcher& s) { return s.region().edge; })
      .def_property_readonly("depth",
                             [](const ts::ContinuousSearcher& s) { return s.region().depth; })
      .def_property_readonly("n_queries", &ts::ContinuousSearcher::n_queries)
      .def_property_readonly("n_stages", &ts::ContinuousSearcher::n_stages)
      .def_property_readonly("stage_queries", &ts::ContinuousSearcher::stage_queries)
      .def_property_readonly("n_cells", &ts::ContinuousSearcher::n_cells);

  m.def(
      "simulate_continuous",
      [](std::int64_t d, double gamma, double low, double high, int method, double alpha,
         double lapse, std::int64_t stage_cap, std::int64_t particles, std::int64_t cells_per_axis,
         std::int64_t n_obs, std::int64_t tau, int mh_sweeps, double resample_ess,
         std::int64_t runs, std::int64_t max_queries, std::int64_t max_stages, double oracle_gamma,
         double oracle_lapse, std::uint64_t seed, int threads) {
        const auto cfg =
            make_config(d, gamma, low, high, method, alpha, lapse, stage_cap, particles,
                        cells_per_axis, n_obs, tau, mh_sweeps, resample_ess, 1);
        require_threads(threads);
        if (runs < 1) throw std::invalid_argument("n_runs: must be >= 1");
        ts::ContinuousSimulation r;
        {
          py::gil_scoped_release release;
          r = ts::simulate_continuous(cfg, runs, max_queries, max_stages, oracle_gamma,
                                      oracle_lapse, seed, threads);
        }
        const std::int64_t S = max_stages >= 0 ? max_stages : max_queries;
        py::dict out;
        if (max_queries >= 0) {
          py::array_t<double> e({runs, max_queries + 1});
          std::copy(r.errors.begin(), r.errors.end(), e.mutable_data());
          out["errors"] = e;
        }
        py::array_t<double> se({runs, S + 1}), sq({runs, S + 1}), tg({runs, d}), ce({runs, d});
        std::copy(r.stage_errors.begin(), r.stage_errors.end(), se.mutable_data());
        std::copy(r.stage_queries.begin(), r.stage_queries.end(), sq.mutable_data());
        std::copy(r.targets.begin(), r.targets.end(), tg.mutable_data());
        std::copy(r.centers.begin(), r.centers.end(), ce.mutable_data());
        out["stage_errors"] = se;
        out["stage_queries"] = sq;
        out["targets"] = tg;
        out["centers"] = ce;
        out["edges"] = vec(r.edges);
        out["depths"] = py::array_t<std::int64_t>(r.depths.size(), r.depths.data());
        out["queries"] = py::array_t<std::int64_t>(r.queries.size(), r.queries.data());
        return out;
      },
      py::arg("d"), py::arg("gamma"), py::arg("low"), py::arg("high"), py::arg("method"),
      py::arg("alpha"), py::arg("lapse"), py::arg("stage_cap"), py::arg("particles"),
      py::arg("cells_per_axis"), py::arg("n_obs"), py::arg("tau"), py::arg("mh_sweeps"),
      py::arg("resample_ess"), py::arg("runs"), py::arg("max_queries"), py::arg("max_stages"),
      py::arg("oracle_gamma"), py::arg("oracle_lapse"), py::arg("seed"), py::arg("threads"));
}
