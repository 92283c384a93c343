// Bindings of discrete/: the configuration, the item store and a searcher session.
#include "arrays.hpp"
#include "tripletsearch/discrete/search.hpp"

namespace ts = tripletsearch;

namespace {

void register_config(py::module_& m) {
  py::enum_<ts::SearchMethod>(m, "SearchMethod", "Database search methods.")
      .value("GammaCKL", ts::SearchMethod::GammaCKL)
      .value("Gauss", ts::SearchMethod::Gauss)
      .value("Random", ts::SearchMethod::Random);
  py::enum_<ts::Selection>(m, "Selection", "gamma-CKLSearch's selection rules.")
      .value("Weighted", ts::Selection::Weighted)
      .value("Paper", ts::Selection::Paper)
      .value("Nearest", ts::Selection::Nearest)
      .value("InfoGain", ts::Selection::InfoGain);
  m.attr("MAX_CHOICES") = ts::kMaxChoices;

  const ts::SearchConfig dflt;
  py::class_<ts::SearchConfig>(m, "SearchConfig",
                               "A database search's configuration; validated on construction.")
      .def(py::init([](ts::SearchMethod method, double gamma, double r, double sigma, int n_choices,
                       ts::Selection selection) {
             const ts::SearchConfig c{method, gamma, r, sigma, n_choices, selection};
             c.validate();
             return c;
           }),
           py::kw_only(), py::arg("method") = dflt.method, py::arg("gamma") = dflt.gamma,
           py::arg("r") = dflt.r, py::arg("sigma") = dflt.sigma,
           py::arg("n_choices") = dflt.n_choices, py::arg("selection") = dflt.selection)
      .def_readonly("method", &ts::SearchConfig::method)
      .def_readonly("gamma", &ts::SearchConfig::gamma)
      .def_readonly("r", &ts::SearchConfig::r)
      .def_readonly("sigma", &ts::SearchConfig::sigma)
      .def_readonly("n_choices", &ts::SearchConfig::n_choices)
      .def_readonly("selection", &ts::SearchConfig::selection);
}

void register_store(py::module_& m) {
  py::class_<ts::ItemStore, std::shared_ptr<ts::ItemStore>>(
      m, "ItemStore", "The items (n, d) in the search's single-precision block layout.")
      .def(py::init([](const DoubleArray& X) {
             require_ndim(X, 2, "X");
             py::gil_scoped_release release;
             return std::make_shared<ts::ItemStore>(X.data(), X.shape(0), X.shape(1));
           }),
           py::arg("X"))
      .def_property_readonly("n", &ts::ItemStore::n)
      .def_property_readonly("d", &ts::ItemStore::d);
}

void register_searcher(py::module_& m) {
  py::class_<ts::DiscreteSearcher>(m, "DiscreteSearcher", "A database search session.")
      .def(py::init([](std::shared_ptr<ts::ItemStore> store, const ts::SearchConfig& config,
                       std::uint64_t seed, int threads) {
             py::gil_scoped_release release;
             return ts::make_searcher(std::move(store), config, seed, threads);
           }),
           py::arg("store"), py::arg("config"), py::arg("seed"), py::arg("threads"))
      .def(
          "select",
          [](ts::DiscreteSearcher& s) {
            std::vector<std::int64_t> q(ts::kMaxChoices);
            int k;
            {
              py::gil_scoped_release release;
              k = s.select(q.data());
            }
            q.resize(static_cast<std::size_t>(k));
            return to_array(q);
          },
          "The items to show next (empty when every item was shown).")
      .def(
          "update",
          [](ts::DiscreteSearcher& s, const IndexArray& shown, int choice) {
            require_ndim(shown, 1, "shown");
            py::gil_scoped_release release;
            s.update(shown.data(), static_cast<int>(shown.shape(0)), choice);
          },
          py::arg("shown"), py::arg("choice"),
          "The user saw `shown` and picked shown[choice] (choice = -1: no answer).")
      .def(
          "posterior",
          [](const ts::DiscreteSearcher& s) {
            py::array_t<double> out(s.n_items());
            double* o = out.mutable_data();
            {
              py::gil_scoped_release release;
              s.posterior(o);
            }
            return out;
          },
          "P(item is the target) for every item (shown items: 0).")
      .def_property_readonly("config", &ts::DiscreteSearcher::config)
      .def_property_readonly("mean",
                             [](const ts::DiscreteSearcher& s) { return to_array(s.mean()); })
      .def_property_readonly("cov",
                             [](const ts::DiscreteSearcher& s) {
                               const auto d = static_cast<py::ssize_t>(s.mean().size());
                               return to_array(s.cov(), d, d);
                             })
      .def_property_readonly("n_items", &ts::DiscreteSearcher::n_items)
      .def_property_readonly("n_unshown", &ts::DiscreteSearcher::n_unshown)
      .def_property_readonly("n_queries", &ts::DiscreteSearcher::n_queries);
}

}  // namespace

void register_discrete(py::module_& m) {
  register_config(m);
  register_store(m);
  register_searcher(m);
}
