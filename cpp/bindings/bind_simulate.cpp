// Bindings of simulate/: the two simulators (whole searches with simulated users, native
// and parallel).
#include "arrays.hpp"
#include "tripletsearch/simulate/continuous.hpp"
#include "tripletsearch/simulate/discrete.hpp"

namespace ts = tripletsearch;

namespace {

void register_discrete_simulation(py::module_& m) {
  m.def(
      "simulate_discrete",
      [](std::shared_ptr<ts::ItemStore> store, const ts::SearchConfig& config,
         const ts::OracleSpec& oracle, std::shared_ptr<ts::ItemStore> oracle_store,
         const IndexArray& targets, std::int64_t max_queries, double user_lapse,
         std::int64_t first_run, std::uint64_t seed, int threads) {
        require_ndim(targets, 1, "targets");
        const ts::DiscreteSimOptions options{max_queries, user_lapse, first_run};
        ts::DiscreteSimulation res;
        {
          py::gil_scoped_release release;
          ts::Cancel cancel(signal_probe());
          res = ts::simulate_discrete(store, config, oracle, oracle_store, targets.data(),
                                      targets.shape(0), options, seed, threads, cancel);
        }
        py::array_t<bool> found(static_cast<py::ssize_t>(res.found.size()));
        std::copy(res.found.begin(), res.found.end(), found.mutable_data());
        return py::make_tuple(to_array(res.n_queries), found);
      },
      py::arg("store").none(false), py::arg("config"), py::arg("oracle"),
      py::arg("oracle_store").none(false), py::arg("targets"), py::arg("max_queries"),
      py::arg("user_lapse"), py::arg("first_run"), py::arg("seed"), py::arg("threads"),
      "One search per target, users answering by `oracle` at the positions of oracle_store "
      "(at random with probability user_lapse); run r's streams are keyed by first_run + r: "
      "(queries until the target was shown, found).");
}

void register_continuous_simulation(py::module_& m) {
  const ts::ContinuousSimOptions dflt;
  py::class_<ts::ContinuousSimOptions>(m, "ContinuousSimOptions",
                                       "What simulate_continuous runs and records.")
      .def(py::init([](std::int64_t runs, std::int64_t max_queries, std::int64_t max_stages,
                       double user_gamma, double user_lapse, std::int64_t first_run) {
             return ts::ContinuousSimOptions{runs,       max_queries, max_stages,
                                             user_gamma, user_lapse,  first_run};
           }),
           py::kw_only(), py::arg("runs") = dflt.runs, py::arg("max_queries") = dflt.max_queries,
           py::arg("max_stages") = dflt.max_stages, py::arg("user_gamma") = dflt.user_gamma,
           py::arg("user_lapse") = dflt.user_lapse, py::arg("first_run") = dflt.first_run)
      .def_readonly("runs", &ts::ContinuousSimOptions::runs)
      .def_readonly("max_queries", &ts::ContinuousSimOptions::max_queries)
      .def_readonly("max_stages", &ts::ContinuousSimOptions::max_stages)
      .def_readonly("user_gamma", &ts::ContinuousSimOptions::user_gamma)
      .def_readonly("user_lapse", &ts::ContinuousSimOptions::user_lapse)
      .def_readonly("first_run", &ts::ContinuousSimOptions::first_run);

  using Sim = ts::ContinuousSimulation;
  py::class_<Sim>(m, "ContinuousSimulation", "The records of simulate_continuous.")
      .def_property_readonly("errors",
                             [](const Sim& s) -> py::object {
                               if (s.query_cols == 0) return py::none();
                               return to_array(s.errors, s.runs, s.query_cols);
                             })
      .def_property_readonly(
          "stage_errors",
          [](const Sim& s) { return to_array(s.stage_errors, s.runs, s.stage_cols); })
      .def_property_readonly(
          "stage_queries",
          [](const Sim& s) { return to_array(s.stage_queries, s.runs, s.stage_cols); })
      .def_property_readonly("targets",
                             [](const Sim& s) { return to_array(s.targets, s.runs, s.dim); })
      .def_property_readonly("centers",
                             [](const Sim& s) { return to_array(s.centers, s.runs, s.dim); })
      .def_property_readonly("edges", [](const Sim& s) { return to_array(s.edges); })
      .def_property_readonly("depths", [](const Sim& s) { return to_array(s.depths); })
      .def_property_readonly("queries", [](const Sim& s) { return to_array(s.queries); });

  m.def(
      "simulate_continuous",
      [](const ts::ContinuousConfig& config, const ts::ContinuousSimOptions& options,
         std::uint64_t seed, int threads) {
        py::gil_scoped_release release;
        ts::Cancel cancel(signal_probe());
        return ts::simulate_continuous(config, options, seed, threads, cancel);
      },
      py::arg("config"), py::arg("options"), py::arg("seed"), py::arg("threads"),
      "Searches for targets uniform in Omega by simulated gamma-CKL users.");
}

}  // namespace

void register_simulate(py::module_& m) {
  register_discrete_simulation(m);
  register_continuous_simulation(m);
}
