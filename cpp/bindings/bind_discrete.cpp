// Bindings of discrete/: the configuration, the item store and a searcher session.
#include <optional>

#include "arrays.hpp"
#include "tripletsearch/discrete/search.hpp"

namespace ts = tripletsearch;

namespace {

void register_discrete_config(py::module_& m) {
  py::enum_<ts::SearchMethod>(m, "SearchMethod", "Database search methods.")
      .value("GammaCKL", ts::SearchMethod::GammaCKL)
      .value("Gauss", ts::SearchMethod::Gauss)
      .value("Random", ts::SearchMethod::Random);
  py::enum_<ts::Selection>(m, "Selection", "gamma-CKLSearch's selection rules.")
      .value("Weighted", ts::Selection::Weighted)
      .value("Paper", ts::Selection::Paper)
      .value("Nearest", ts::Selection::Nearest)
      .value("InfoGain", ts::Selection::InfoGain);
  py::enum_<ts::Opening>(m, "Opening", "A database search's first screen.")
      .value("Principal", ts::Opening::Principal)
      .value("Random", ts::Opening::Random)
      .value("Uniform", ts::Opening::Uniform);
  m.attr("MAX_CHOICES") = ts::kMaxChoices;

  const ts::SearchConfig dflt;
  auto make = [](ts::SearchMethod method, double gamma, double r, double sigma, int n_choices,
                 ts::Selection selection, double lapse, bool gamma_auto, bool lapse_auto,
                 ts::Opening opening, int guesses, double miss, bool miss_auto) {
    const ts::SearchConfig c{method,     gamma,      r,       sigma,   n_choices, selection, lapse,
                             gamma_auto, lapse_auto, opening, guesses, miss,      miss_auto};
    c.validate();
    return c;
  };
  py::class_<ts::SearchConfig> cls(
      m, "SearchConfig",
      "A database search's configuration; validated on construction, pickled and compared "
      "by value.");
  cls.def(py::init(make), py::kw_only(), py::arg("method") = dflt.method,
          py::arg("gamma") = dflt.gamma, py::arg("r") = dflt.r, py::arg("sigma") = dflt.sigma,
          py::arg("n_choices") = dflt.n_choices, py::arg("selection") = dflt.selection,
          py::arg("lapse") = dflt.lapse, py::arg("gamma_auto") = dflt.gamma_auto,
          py::arg("lapse_auto") = dflt.lapse_auto, py::arg("opening") = dflt.opening,
          py::arg("guesses") = dflt.guesses, py::arg("miss") = dflt.miss,
          py::arg("miss_auto") = dflt.miss_auto)
      .def_readonly("guesses", &ts::SearchConfig::guesses)
      .def_readonly("miss", &ts::SearchConfig::miss)
      .def_readonly("miss_auto", &ts::SearchConfig::miss_auto)
      .def_readonly("lapse", &ts::SearchConfig::lapse)
      .def_readonly("opening", &ts::SearchConfig::opening)
      .def_readonly("gamma_auto", &ts::SearchConfig::gamma_auto)
      .def_readonly("lapse_auto", &ts::SearchConfig::lapse_auto)
      .def_readonly("method", &ts::SearchConfig::method)
      .def_readonly("gamma", &ts::SearchConfig::gamma)
      .def_readonly("r", &ts::SearchConfig::r)
      .def_readonly("sigma", &ts::SearchConfig::sigma)
      .def_readonly("n_choices", &ts::SearchConfig::n_choices)
      .def_readonly("selection", &ts::SearchConfig::selection);
  def_state(
      cls,
      [](const ts::SearchConfig& c) {
        return py::make_tuple(c.method, c.gamma, c.r, c.sigma, c.n_choices, c.selection, c.lapse,
                              c.gamma_auto, c.lapse_auto, c.opening, c.guesses, c.miss,
                              c.miss_auto);
      },
      [make](const py::tuple& t) {
        if (t.size() != 13) throw std::invalid_argument("SearchConfig: malformed state");
        return make(t[0].cast<ts::SearchMethod>(), t[1].cast<double>(), t[2].cast<double>(),
                    t[3].cast<double>(), t[4].cast<int>(), t[5].cast<ts::Selection>(),
                    t[6].cast<double>(), t[7].cast<bool>(), t[8].cast<bool>(),
                    t[9].cast<ts::Opening>(), t[10].cast<int>(), t[11].cast<double>(),
                    t[12].cast<bool>());
      });
}

void register_store(py::module_& m) {
  py::class_<ts::ItemStore, std::shared_ptr<ts::ItemStore>>(
      m, "ItemStore", "The items (n, d) in the search's single-precision block layout.")
      .def(py::init([](const py::object& X, bool scaled, bool distinct) {
             auto make = [&](const auto& A) {
               require_ndim(A, 2, "X");
               py::gil_scoped_release release;
               return std::make_shared<ts::ItemStore>(A.data(), A.shape(0), A.shape(1), scaled,
                                                      distinct);
             };
             if (py::isinstance<py::array>(X)) {  // float32 read as it is
               const py::dtype dt = py::reinterpret_borrow<py::array>(X).dtype();
               if (dt.kind() == 'f' && dt.itemsize() == 4) return make(X.cast<FloatArray>());
             }
             return make(X.cast<DoubleArray>());
           }),
           py::arg("X"), py::kw_only(), py::arg("scaled") = true, py::arg("distinct") = false,
           "Centres X (and with `scaled` divides it by a power of two) before single "
           "precision; with `distinct`, items that coincide there raise ValueError.")
      .def(
          "save",
          [](const ts::ItemStore& s, const std::string& path) {
            py::gil_scoped_release release;
            s.save(path);
          },
          py::arg("path"),
          "Writes the store to `path`, for ItemStore.map (a header, the centre, the blocks).")
      .def_static(
          "map",
          [](const std::string& path) {
            py::gil_scoped_release release;
            return ts::ItemStore::map(path);
          },
          py::arg("path"),
          "The store that `save` wrote to `path`, mapped read-only: processes that map one "
          "file share its pages (read into memory where files cannot be mapped).")
      .def_property_readonly("mapped", &ts::ItemStore::mapped,
                             "Whether the items live in a mapped file.")
      .def_property_readonly("center", [](const ts::ItemStore& s) { return to_array(s.center()); })
      .def_property_readonly("scale", &ts::ItemStore::scale)
      .def_property_readonly("n", &ts::ItemStore::n)
      .def_property_readonly("d", &ts::ItemStore::d);
}

void register_discrete_searcher(py::module_& m) {
  using S = ts::DiscreteSearcher;
  py::class_<S>(m, "DiscreteSearcher",
                "A database search session (safe to share between threads: calls take turns).")
      .def(py::init([](std::shared_ptr<ts::ItemStore> store, const ts::SearchConfig& config,
                       std::uint64_t seed, int threads) {
             py::gil_scoped_release release;
             return ts::make_searcher(std::move(store), config, seed, threads);
           }),
           py::arg("store").none(false), py::arg("config"), py::arg("seed"), py::arg("threads"))
      .def(
          "copy",
          [](const S& s, std::uint64_t seed) {
            return locked(s, [&](const S& x) { return x.copy_with_seed(seed); });
          },
          py::arg("seed"),
          "This session's state with another seed: from a session neither asked nor told, "
          "the same as a new one with that seed (its prior computed once).")
      .def_property_readonly(
          "state_bytes",
          [](const S& s) { return locked(s, [](const S& x) { return x.state_bytes(); }); },
          "The bytes of the session's own state (weights, shown items, moments; not the "
          "shared item store).")
      .def(
          "select",
          [](S& s) {
            std::vector<std::int64_t> q(ts::kMaxChoices);
            const int k = locked(s, [&](S& o) { return o.select(q.data()); });
            q.resize(static_cast<std::size_t>(k));
            return to_array(q);
          },
          "The items to show next (empty when every item was shown).")
      .def(
          "offer",
          [](const S& s, const IndexArray& shown) {
            require_ndim(shown, 1, "shown");
            const int k = static_cast<int>(shown.shape(0));
            ts::require_between(k, 0, ts::kMaxChoices, "shown");
            std::vector<std::int64_t> out(static_cast<std::size_t>(s.config().guesses));
            const int g =
                locked(s, [&](const S& x) { return x.offer(shown.data(), k, out.data()); });
            out.resize(static_cast<std::size_t>(g));
            return to_array(out);
          },
          py::arg("shown"),
          "The strip of best guesses for the screen `shown` that select() just gave: up to "
          "config.guesses items, the most probable ones neither on it nor shown before "
          "(GaussSearch: nor passed over), most probable first.")
      .def(
          "update",
          [](S& s, const IndexArray& shown, int choice, std::optional<IndexArray> offered) {
            require_ndim(shown, 1, "shown");
            const std::int64_t* o = nullptr;
            int g = 0;
            if (offered) {
              require_ndim(*offered, 1, "offered");
              o = offered->data();
              g = static_cast<int>(offered->shape(0));
            }
            locked(s, [&](S& x) {
              x.update(shown.data(), static_cast<int>(shown.shape(0)), choice, o, g);
            });
          },
          py::arg("shown"), py::arg("choice"), py::arg("offered") = py::none(),
          "The user saw `shown` and picked shown[choice] (choice = -1: no answer), and passed "
          "over the strip `offered`.")
      .def(
          "posterior",
          [](const S& s) {
            py::array_t<double> out(s.n_items());
            double* o = out.mutable_data();
            locked(s, [&](const S& x) { x.posterior(o); });
            return out;
          },
          "P(item is the target) for every item (shown items: 0).")
      .def("user_posterior", &user_posterior_of<S>,
           "(gamma grid probabilities, lapse grid probabilities), or None when neither is "
           "inferred.")
      .def_property_readonly("config", &S::config)
      .def_property_readonly(
          "mean",
          [](const S& s) { return to_array(locked(s, [](const S& x) { return x.input_mean(); })); })
      .def_property_readonly("cov",
                             [](const S& s) {
                               const auto d = static_cast<py::ssize_t>(s.n_dims());
                               return to_array(locked(s, [](const S& x) { return x.input_cov(); }),
                                               d, d);
                             })
      .def(
          "principal_axes",
          [](const S& s, int count) {
            ts::require_between<std::int64_t>(count, 1, s.n_dims(), "count");
            const ts::Axes axes = locked(s, [&](const S& x) { return x.axes(count); });
            std::vector<double> values = axes.values;
            for (double& v : values) v *= s.store_scale() * s.store_scale();
            return py::make_tuple(to_array(values), to_array(axes.vectors, count, s.n_dims()));
          },
          py::arg("count"),
          "The belief's top `count` principal axes: (values in the input's units, unit "
          "vectors as rows). gamma-CKLSearch beyond 32 dimensions: the Ritz pairs of the "
          "subspace step taken with the last answer, as its next query uses them; otherwise "
          "the eigenpairs of the covariance (test hook).")
      .def(
          "most_probable",
          [](const S& s, int m) {
            ts::require_between<std::int64_t>(m, 1, s.n_items(), "m");
            return to_array(locked(s, [&](const S& x) { return x.most_probable(m); }));
          },
          py::arg("m"),
          "The m items of highest posterior probability (ties: lower index; positive "
          "probabilities only) as the next query sees them (test hook).")
      .def_property_readonly("n_items", &S::n_items)
      .def_property_readonly(
          "n_unshown",
          [](const S& s) { return locked(s, [](const S& x) { return x.n_unshown(); }); })
      .def_property_readonly("n_queries", [](const S& s) {
        return locked(s, [](const S& x) { return x.n_queries(); });
      });
}

void register_scan(py::module_& m) {
  m.def(
      "scan_candidates",
      [](std::shared_ptr<ts::ItemStore> store, const DoubleArray& protos, int kb,
         const DoubleArray& weights, int rule, std::optional<DoubleArray> center,
         std::optional<DoubleArray> vectors, std::optional<IndexArray> axis,
         std::optional<DoubleArray> steps) {
        const std::int64_t n = store->n(), d = store->d();
        require_ndim(protos, 2, "protos");
        if (protos.shape(1) != d) throw std::invalid_argument("protos: expected d columns");
        const int P = static_cast<int>(protos.shape(0));
        ts::require_between(kb, 1, 64, "kb");
        ts::require_between(rule, 0, 2, "rule");
        require_ndim(weights, 1, "weights");
        if (weights.shape(0) != n) throw std::invalid_argument("weights: expected n values");
        std::vector<ts::Weight> w(static_cast<std::size_t>(store->blocks() * ts::kLanes), 0.0f);
        for (std::int64_t i = 0; i < n; ++i)
          w[static_cast<std::size_t>(i)] = ts::to_weight(weights.data()[i]);
        const ts::ShownSet shown(n);
        ts::AxisProtos ax{nullptr, nullptr, 0, {}, {}};
        const bool axis_form = center.has_value();
        if (axis_form) {
          if (!vectors || !axis || !steps)
            throw std::invalid_argument("center: needs vectors, axis and steps");
          require_ndim(*vectors, 2, "vectors");
          if (center->ndim() != 1 || center->shape(0) != d || vectors->shape(1) != d)
            throw std::invalid_argument("center, vectors: expected d columns");
          if (axis->ndim() != 1 || axis->shape(0) != P || steps->ndim() != 1 ||
              steps->shape(0) != P)
            throw std::invalid_argument("axis, steps: expected one value per proto");
          ax.center = center->data();
          ax.V = vectors->data();
          ax.ne = static_cast<int>(vectors->shape(0));
          ts::require_in_range(axis->data(), P, ax.ne, 1, "axis");
          for (int c = 0; c < P; ++c) {
            ax.axis.push_back(static_cast<int>(axis->data()[c]));
            ax.step.push_back(steps->data()[c]);
          }
        }
        const ts::ScanInput in{*store, w.data(), shown, ts::balanced_chunks(store->blocks() / 4),
                               2};
        const std::vector<ts::Cand> top =
            ts::scan_top(in, protos.data(), P, kb, static_cast<ts::ScanRule>(rule), {},
                         axis_form ? &ax : nullptr);
        std::vector<std::int64_t> idx;
        for (const auto& c : top) idx.push_back(c.index);
        return to_array(idx, P, kb);
      },
      py::arg("store").none(false), py::arg("protos"), py::arg("kb"), py::arg("weights"),
      py::arg("rule"), py::kw_only(), py::arg("center") = py::none(),
      py::arg("vectors") = py::none(), py::arg("axis") = py::none(), py::arg("steps") = py::none(),
      "Test hook: for each proto (store frame), the kb items of lowest score (rule 0: D / w, "
      "1: w sqrt(D), 2: D; w rounded to the sessions' single-precision weights), ties by index; "
      "with center/vectors/axis/steps the pre-test runs "
      "on projections, which is exact only when protos = center + steps[c] vectors[axis[c]] "
      "with unit rows in vectors (the caller's promise; not checked).");
}

void register_axes(py::module_& m) {
  m.def(
      "principal_axes",
      [](const DoubleArray& cov, int count) {
        require_ndim(cov, 2, "cov");
        const std::int64_t d = cov.shape(0);
        if (cov.shape(1) != d) throw std::invalid_argument("cov: expected a square matrix");
        ts::require_between<std::int64_t>(count, 1, d, "count");
        const std::vector<double> C(cov.data(), cov.data() + d * d);
        ts::AxesWarmStart warm;
        const ts::Axes axes = ts::Axes::of(C, d, count, warm);
        return py::make_tuple(to_array(axes.values), to_array(axes.vectors, count, d));
      },
      py::arg("cov"), py::arg("count"),
      "The top `count` eigenpairs (values, vectors as rows) of a covariance, as the searches "
      "compute them: Jacobi rotations up to 32 dimensions, subspace iteration beyond.");
}

}  // namespace

void register_discrete(py::module_& m) {
  register_axes(m);
  register_discrete_config(m);
  register_store(m);
  register_scan(m);
  register_discrete_searcher(m);
}
