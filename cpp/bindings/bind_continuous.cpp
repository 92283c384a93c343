// Bindings of continuous/: the configuration and a searcher session.
#include "arrays.hpp"
#include "tripletsearch/continuous/search.hpp"

namespace ts = tripletsearch;

namespace {

void register_continuous_config(py::module_& m) {
  m.def("binomial_upper_tail", &ts::binomial_upper_tail, py::arg("n"), py::arg("p"), py::arg("tau"),
        "P(Binomial(n, p) >= tau), the hypothesis test's acceptance probability.");

  py::enum_<ts::ContinuousMethod>(m, "ContinuousMethod", "Continuous search methods.")
      .value("HypothesisTest", ts::ContinuousMethod::HypothesisTest)
      .value("Posterior", ts::ContinuousMethod::Posterior)
      .value("Global", ts::ContinuousMethod::Global);
  m.attr("MAX_PARTICLE_DIM") = ts::kMaxParticleDim;
  m.attr("MAX_HYPTEST_CELLS") = static_cast<std::int64_t>(ts::kMaxCells);
  m.attr("GAMMA_GRID") = std::vector<double>(ts::kGammaValues, ts::kGammaValues + ts::kGammaGrid);
  m.attr("LAPSE_GRID") = std::vector<double>(ts::kLapseValues, ts::kLapseValues + ts::kLapseGrid);
  m.def(
      "gamma_log_prior",
      [](int j) {
        ts::require_between(j, 0, ts::kGammaGrid - 1, "j");
        return ts::gamma_log_prior(j);
      },
      py::arg("j"), "log prior mass of GAMMA_GRID[j] (log-uniform on [0.5, 32]).");

  const ts::ContinuousConfig dflt;
  auto make = [](std::int64_t dim, double gamma, std::vector<double> low, std::vector<double> high,
                 ts::ContinuousMethod method, double alpha, double lapse, std::int64_t stage_cap,
                 std::int64_t n_particles, int mh_sweeps, double resample_ess,
                 std::int64_t cells_per_axis, std::int64_t n_obs, std::int64_t tau, bool gamma_auto,
                 bool lapse_auto) {
    // one entry: the same range on every axis
    for (auto* v : {&low, &high})
      if (v->size() == 1 && dim > 1 && dim <= (std::int64_t(1) << 20))
        v->assign(static_cast<std::size_t>(dim), v->front());
    const ts::ContinuousConfig c{dim,         gamma,     low,          high,
                                 method,      alpha,     lapse,        stage_cap,
                                 n_particles, mh_sweeps, resample_ess, cells_per_axis,
                                 n_obs,       tau,       gamma_auto,   lapse_auto};
    c.validate();
    return c;
  };
  py::class_<ts::ContinuousConfig> cls(
      m, "ContinuousConfig",
      "A continuous search's configuration; validated on construction, pickled and compared "
      "by value. 0 n_particles or stage_cap: the defaults; low, high: one entry per axis, or "
      "one for all.");
  cls.def(py::init(make), py::kw_only(), py::arg("dim") = dflt.dim, py::arg("gamma") = dflt.gamma,
          py::arg("low") = std::vector<double>{-1.0}, py::arg("high") = std::vector<double>{1.0},
          py::arg("method") = dflt.method, py::arg("alpha") = dflt.alpha,
          py::arg("lapse") = dflt.lapse, py::arg("stage_cap") = dflt.stage_cap,
          py::arg("n_particles") = dflt.n_particles, py::arg("mh_sweeps") = dflt.mh_sweeps,
          py::arg("resample_ess") = dflt.resample_ess,
          py::arg("cells_per_axis") = dflt.cells_per_axis, py::arg("n_obs") = dflt.n_obs,
          py::arg("tau") = dflt.tau, py::arg("gamma_auto") = dflt.gamma_auto,
          py::arg("lapse_auto") = dflt.lapse_auto)
      .def_readonly("dim", &ts::ContinuousConfig::dim)
      .def_readonly("gamma", &ts::ContinuousConfig::gamma)
      .def_readonly("low", &ts::ContinuousConfig::low)
      .def_readonly("high", &ts::ContinuousConfig::high)
      .def_readonly("method", &ts::ContinuousConfig::method)
      .def_readonly("alpha", &ts::ContinuousConfig::alpha)
      .def_readonly("lapse", &ts::ContinuousConfig::lapse)
      .def_readonly("mh_sweeps", &ts::ContinuousConfig::mh_sweeps)
      .def_readonly("resample_ess", &ts::ContinuousConfig::resample_ess)
      .def_readonly("cells_per_axis", &ts::ContinuousConfig::cells_per_axis)
      .def_readonly("n_obs", &ts::ContinuousConfig::n_obs)
      .def_readonly("tau", &ts::ContinuousConfig::tau)
      .def_readonly("gamma_auto", &ts::ContinuousConfig::gamma_auto)
      .def_readonly("lapse_auto", &ts::ContinuousConfig::lapse_auto)
      .def_property_readonly("n_particles", &ts::ContinuousConfig::resolved_particles,
                             "Particles of the posterior (the default resolved).")
      .def_property_readonly("stage_cap", &ts::ContinuousConfig::resolved_stage_cap,
                             "Queries per stage of the posterior method (the default resolved).");
  // the state holds the values as given (0: a default), not the resolved ones
  def_state(
      cls,
      [](const ts::ContinuousConfig& c) {
        return py::make_tuple(c.dim, c.gamma, c.low, c.high, c.method, c.alpha, c.lapse,
                              c.stage_cap, c.n_particles, c.mh_sweeps, c.resample_ess,
                              c.cells_per_axis, c.n_obs, c.tau, c.gamma_auto, c.lapse_auto);
      },
      [make](const py::tuple& t) {
        if (t.size() != 16) throw std::invalid_argument("ContinuousConfig: malformed state");
        return make(t[0].cast<std::int64_t>(), t[1].cast<double>(),
                    t[2].cast<std::vector<double>>(), t[3].cast<std::vector<double>>(),
                    t[4].cast<ts::ContinuousMethod>(), t[5].cast<double>(), t[6].cast<double>(),
                    t[7].cast<std::int64_t>(), t[8].cast<std::int64_t>(), t[9].cast<int>(),
                    t[10].cast<double>(), t[11].cast<std::int64_t>(), t[12].cast<std::int64_t>(),
                    t[13].cast<std::int64_t>(), t[14].cast<bool>(), t[15].cast<bool>());
      });
}

void register_continuous_searcher(py::module_& m) {
  using S = ts::ContinuousSearcher;
  py::class_<S>(m, "ContinuousSearcher",
                "A continuous search session (safe to share between threads: calls take turns).")
      .def(py::init([](const ts::ContinuousConfig& config, std::uint64_t seed, int threads) {
             py::gil_scoped_release release;
             return ts::make_searcher(config, seed, threads);
           }),
           py::arg("config"), py::arg("seed"), py::arg("threads"))
      .def(
          "ask",
          [](S& s) {
            const auto d = static_cast<py::ssize_t>(s.config().dim);
            py::array_t<double> a(d), b(d);
            double* pa = a.mutable_data();
            double* pb = b.mutable_data();
            locked(s, [&](S& o) { o.ask(pa, pb); });
            return py::make_tuple(a, b);
          },
          "The pending query (a, b), the same until told.")
      .def(
          "tell",
          [](S& s, bool a_is_closer) {
            return locked(s, [&](S& o) { return o.tell(a_is_closer); });
          },
          py::arg("a_is_closer"), "Records the answer; True when a stage ended.")
      .def(
          "observe",
          [](S& s, const DoubleArray& a, const DoubleArray& b, bool a_is_closer) {
            const auto d = static_cast<py::ssize_t>(s.config().dim);
            if (a.ndim() != 1 || a.shape(0) != d || b.ndim() != 1 || b.shape(0) != d)
              throw std::invalid_argument("query: a and b must have shape (dim,)");
            return locked(s,
                          [&](S& o) { return o.observe_query(a.data(), b.data(), a_is_closer); });
          },
          py::arg("a"), py::arg("b"), py::arg("a_is_closer"),
          "Records the answer to a query asked elsewhere (replacing any pending one); True "
          "when a stage ended.")
      .def(
          "estimate",
          [](const S& s) {
            py::array_t<double> out(static_cast<py::ssize_t>(s.config().dim));
            double* o = out.mutable_data();
            locked(s, [&](const S& x) { x.estimate(o); });
            return out;
          },
          "The point estimate of the target.")
      .def_property_readonly("config", &S::config)
      .def_property_readonly(
          "center",
          [](const S& s) {
            return to_array(locked(s, [](const S& x) { return x.region().center; }));
          })
      .def_property_readonly(
          "edge", [](const S& s) { return locked(s, [](const S& x) { return x.region().edge; }); })
      .def_property_readonly(
          "depth",
          [](const S& s) { return locked(s, [](const S& x) { return x.region().depth; }); })
      .def_property_readonly(
          "n_queries",
          [](const S& s) { return locked(s, [](const S& x) { return x.n_queries(); }); })
      .def_property_readonly(
          "n_stages", [](const S& s) { return locked(s, [](const S& x) { return x.n_stages(); }); })
      .def_property_readonly(
          "n_particles",
          [](const S& s) { return locked(s, [](const S& x) { return x.n_particles(); }); })
      .def("user_posterior", &user_posterior_of<S>,
           "(gamma grid probabilities, lapse grid probabilities), or None when neither is "
           "inferred.");
}

}  // namespace

void register_continuous(py::module_& m) {
  register_continuous_config(m);
  register_continuous_searcher(m);
}
