// Bindings of simulate/: the two simulators (whole searches with simulated users, native
// and parallel).
#include "arrays.hpp"
#include "tripletsearch/simulate/continuous.hpp"
#include "tripletsearch/simulate/discrete.hpp"

namespace ts = tripletsearch;

namespace {

void register_discrete_simulation(py::module_& m) {
  const ts::DiscreteSimOptions dflt;
  auto make = [](std::int64_t max_queries, double oracle_lapse, std::int64_t first_run,
                 double oracle_miss) {
    const ts::DiscreteSimOptions o{max_queries, oracle_lapse, first_run, oracle_miss};
    o.validate();
    return o;
  };
  py::class_<ts::DiscreteSimOptions> cls(
      m, "DiscreteSimOptions",
      "What each search of simulate_discrete may take, and where a call's runs sit in the "
      "study (run r's streams are keyed by first_run + r); validated on construction, "
      "pickled and compared by value.");
  cls.def(py::init(make), py::kw_only(), py::arg("max_queries") = dflt.max_queries,
          py::arg("oracle_lapse") = dflt.oracle_lapse, py::arg("first_run") = dflt.first_run,
          py::arg("oracle_miss") = dflt.oracle_miss)
      .def_readonly("max_queries", &ts::DiscreteSimOptions::max_queries)
      .def_readonly("oracle_miss", &ts::DiscreteSimOptions::oracle_miss)
      .def_readonly("oracle_lapse", &ts::DiscreteSimOptions::oracle_lapse)
      .def_readonly("first_run", &ts::DiscreteSimOptions::first_run);
  def_state(
      cls,
      [](const ts::DiscreteSimOptions& o) {
        return py::make_tuple(o.max_queries, o.oracle_lapse, o.first_run, o.oracle_miss);
      },
      [make](const py::tuple& t) {
        if (t.size() != 4) throw std::invalid_argument("DiscreteSimOptions: malformed state");
        return make(t[0].cast<std::int64_t>(), t[1].cast<double>(), t[2].cast<std::int64_t>(),
                    t[3].cast<double>());
      });

  m.def(
      "simulate_discrete",
      [](std::shared_ptr<ts::ItemStore> store, const ts::SearchConfig& config,
         const ts::OracleSpec& oracle, std::shared_ptr<ts::ItemStore> oracle_store,
         const IndexArray& targets, const ts::DiscreteSimOptions& options, std::uint64_t seed,
         int threads) {
        require_ndim(targets, 1, "targets");
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
      py::arg("oracle_store").none(false), py::arg("targets"), py::arg("options"), py::arg("seed"),
      py::arg("threads"),
      "One search per target, users answering by `oracle` at the positions of oracle_store "
      "(at random with probability options.oracle_lapse): (queries until the target was "
      "shown, found).");
}

// The users' model of the continuous simulator: gamma-CKL only.
double oracle_gamma(const ts::OracleSpec& oracle) {
  if (oracle.kind != ts::ModelKind::GammaCKL)
    throw std::invalid_argument("oracle: the continuous simulator's users answer by gamma-CKL");
  return oracle.param;
}

void register_continuous_simulation(py::module_& m) {
  const ts::ContinuousSimOptions dflt;
  auto make = [](std::int64_t n_runs, std::int64_t max_queries, std::int64_t max_stages,
                 const ts::OracleSpec& oracle, double oracle_lapse, std::int64_t first_run) {
    return ts::ContinuousSimOptions{n_runs,       max_queries, max_stages, oracle_gamma(oracle),
                                    oracle_lapse, first_run};
  };
  py::class_<ts::ContinuousSimOptions> cls(
      m, "ContinuousSimOptions",
      "What simulate_continuous runs and records (checked against the configuration by "
      "simulate_continuous), pickled and compared by value.");
  cls.def(py::init(make), py::kw_only(), py::arg("n_runs") = dflt.n_runs,
          py::arg("max_queries") = dflt.max_queries, py::arg("max_stages") = dflt.max_stages,
          py::arg_v("oracle", ts::OracleSpec{ts::ModelKind::GammaCKL, dflt.oracle_gamma},
                    "OracleSpec(ModelKind.GammaCKL, 3.0)"),
          py::arg("oracle_lapse") = dflt.oracle_lapse, py::arg("first_run") = dflt.first_run)
      .def_readonly("n_runs", &ts::ContinuousSimOptions::n_runs)
      .def_readonly("max_queries", &ts::ContinuousSimOptions::max_queries)
      .def_readonly("max_stages", &ts::ContinuousSimOptions::max_stages)
      .def_property_readonly("oracle",
                             [](const ts::ContinuousSimOptions& o) {
                               return ts::OracleSpec{ts::ModelKind::GammaCKL, o.oracle_gamma};
                             })
      .def_readonly("oracle_lapse", &ts::ContinuousSimOptions::oracle_lapse)
      .def_readonly("first_run", &ts::ContinuousSimOptions::first_run);
  def_state(
      cls,
      [](const ts::ContinuousSimOptions& o) {
        return py::make_tuple(o.n_runs, o.max_queries, o.max_stages, o.oracle_gamma, o.oracle_lapse,
                              o.first_run);
      },
      [](const py::tuple& t) {
        if (t.size() != 6) throw std::invalid_argument("ContinuousSimOptions: malformed state");
        return ts::ContinuousSimOptions{t[0].cast<std::int64_t>(), t[1].cast<std::int64_t>(),
                                        t[2].cast<std::int64_t>(), t[3].cast<double>(),
                                        t[4].cast<double>(),       t[5].cast<std::int64_t>()};
      });

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
      .def_property_readonly("n_queries", [](const Sim& s) { return to_array(s.queries); });

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
