// Bindings of discrete.hpp: the item store, a searcher session, the simulator.
#include "arrays.hpp"
#include "tripletsearch/discrete.hpp"

namespace ts = tripletsearch;

namespace {

ts::SearchConfig make_config(int method, double gamma, double r, double sigma, int n_choices,
                             int selection) {
  if (method < 0 || method > 2) throw std::invalid_argument("method: unknown");
  if (selection < 0 || selection > 3) throw std::invalid_argument("selection: unknown");
  if (n_choices < 2 || n_choices > 64) throw std::invalid_argument("n_choices: must be in [2, 64]");
  ts::SearchConfig cfg;
  cfg.method = static_cast<ts::SearchMethod>(method);
  cfg.gamma = gamma;
  cfg.r = r;
  cfg.sigma = sigma;
  cfg.n_choices = n_choices;
  cfg.selection = static_cast<ts::Selection>(selection);
  return cfg;
}

}  // namespace

void register_discrete(py::module_& m) {
  py::class_<ts::ItemStore, std::shared_ptr<ts::ItemStore>>(m, "ItemStore")
      .def(py::init([](const DoubleArray& X) {
             require_ndim(X, 2, "X");
             py::gil_scoped_release release;
             return std::make_shared<ts::ItemStore>(X.data(), X.shape(0), X.shape(1));
           }),
           py::arg("X"))
      .def_property_readonly("n", &ts::ItemStore::n)
      .def_property_readonly("d", &ts::ItemStore::d);

  py::class_<ts::DiscreteSearcher>(m, "DiscreteSearcher")
      .def(
          py::init([](std::shared_ptr<ts::ItemStore> store, int method, double gamma, double r,
                      double sigma, int n_choices, int selection, std::uint64_t seed, int threads) {
            require_threads(threads);
            const auto cfg = make_config(method, gamma, r, sigma, n_choices, selection);
            py::gil_scoped_release release;
            return new ts::DiscreteSearcher(store, cfg, seed, threads);
          }),
          py::arg("store"), py::arg("method"), py::arg("gamma"), py::arg("r"), py::arg("sigma"),
          py::arg("n_choices"), py::arg("selection"), py::arg("seed"), py::arg("threads"))
      .def("select",
           [](ts::DiscreteSearcher& s) {
             std::vector<std::int64_t> q(64);
             int k;
             {
               py::gil_scoped_release release;
               k = s.select(q.data());
             }
             return py::array_t<std::int64_t>(k, q.data());
           })
      .def(
          "update",
          [](ts::DiscreteSearcher& s, const IndexArray& shown, int choice) {
            require_ndim(shown, 1, "shown");
            py::gil_scoped_release release;
            s.update(shown.data(), static_cast<int>(shown.shape(0)), choice);
          },
          py::arg("shown"), py::arg("choice"))
      .def(
          "posterior",
          [](const ts::DiscreteSearcher& s, std::int64_t n) {
            py::array_t<double> out(n);
            double* o = out.mutable_data();
            {
              py::gil_scoped_release release;
              s.posterior(o);
            }
            return out;
          },
          py::arg("n"))
      .def_property_readonly("mean",
                             [](const ts::DiscreteSearcher& s) {
                               return py::array_t<double>(s.mean().size(), s.mean().data());
                             })
      .def_property_readonly("cov",
                             [](const ts::DiscreteSearcher& s) {
                               const auto d = static_cast<py::ssize_t>(s.mean().size());
                               py::array_t<double> out({d, d});
                               std::copy(s.cov().begin(), s.cov().end(), out.mutable_data());
                               return out;
                             })
      .def_property_readonly("n_unshown", &ts::DiscreteSearcher::n_unshown)
      .def_property_readonly("n_queries", &ts::DiscreteSearcher::n_queries);

  m.def(
      "simulate_discrete",
      [](std::shared_ptr<ts::ItemStore> store, int method, double gamma, double r, double sigma,
         int n_choices, int selection, int oracle_kind, double oracle_param,
         std::shared_ptr<ts::ItemStore> ostore, const IndexArray& targets, std::int64_t max_queries,
         std::uint64_t seed, int threads) {
        require_ndim(targets, 1, "targets");
        require_threads(threads);
        if (oracle_kind < 0 || oracle_kind > 4) throw std::invalid_argument("oracle: unknown");
        if (ostore->n() != store->n())
          throw std::invalid_argument("oracle_X: must have one row per item of X");
        const auto cfg = make_config(method, gamma, r, sigma, n_choices, selection);
        const ts::OracleSpec oracle{static_cast<ts::ModelKind>(oracle_kind), oracle_param};
        ts::DiscreteSimulation res;
        {
          py::gil_scoped_release release;
          res = ts::simulate_discrete(store, cfg, oracle, ostore, targets.data(), targets.shape(0),
                                      max_queries, seed, threads);
        }
        py::array_t<bool> found(static_cast<py::ssize_t>(res.found.size()));
        auto* f = found.mutable_data();
        for (std::size_t i = 0; i < res.found.size(); ++i) f[i] = res.found[i] != 0;
        return py::make_tuple(py::array_t<std::int64_t>(res.n_queries.size(), res.n_queries.data()),
                              found);
      },
      py::arg("store"), py::arg("method"), py::arg("gamma"), py::arg("r"), py::arg("sigma"),
      py::arg("n_choices"), py::arg("selection"), py::arg("oracle_kind"), py::arg("oracle_param"),
      py::arg("oracle_store"), py::arg("targets"), py::arg("max_queries"), py::arg("seed"),
      py::arg("threads"));
}
