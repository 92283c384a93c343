// Bindings of oracle/trials.hpp: the log-likelihood of ranked and odd-one-out trials, its
// gradient, and a fit of an embedding to them (embedding/train.hpp's train_trials).
#include <Python.h>

#include <vector>

#include "arrays.hpp"
#include "tripletsearch/embedding/train.hpp"
#include "tripletsearch/oracle/trials.hpp"

namespace ts = tripletsearch;

namespace {

// The trial sets of a list of (rows, kind, k, r, ordered[, lapse]); `keep` holds the arrays.
ts::TrialSets make_sets(const py::list& sets, std::vector<IndexArray>& keep) {
  std::vector<ts::TrialSet> out;
  keep.reserve(sets.size());
  for (const py::handle item : sets) {
    const auto t = item.cast<py::tuple>();
    if (t.size() != 5 && t.size() != 6)
      throw std::invalid_argument("trials: each set is (rows, kind, k, r, ordered[, lapse])");
    keep.push_back(py::cast<IndexArray>(t[0]));
    const IndexArray& rows = keep.back();
    ts::TrialSet s;
    s.kind = static_cast<ts::TrialKind>(t[1].cast<int>());
    if (s.kind != ts::TrialKind::Ranked && s.kind != ts::TrialKind::OddOneOut)
      throw std::invalid_argument("trials: unknown kind");
    s.k = t[2].cast<int>();
    s.r = t[3].cast<int>();
    s.ordered = t[4].cast<bool>();
    if (t.size() == 6) s.lapse = t[5].cast<double>();
    require_ndim(rows, 2, "trials");
    if (s.k < 2 || s.k > ts::kMaxChoices)
      throw std::invalid_argument("candidates: between 2 and 64 per trial");
    require_cols(rows, s.width(), "trials");
    s.rows = rows.data();
    s.m = rows.shape(0);
    out.push_back(s);
  }
  return ts::TrialSets(std::move(out));
}

void require_embedding(const DoubleArray& X) { require_ndim(X, 2, "X"); }

}  // namespace

void register_trials(py::module_& m) {
  m.def(
      "trials_log_prob",
      [](const ts::OracleSpec& spec, const DoubleArray& X, const py::list& sets, int threads) {
        require_embedding(X);
        std::vector<IndexArray> keep;
        const ts::TrialSets TS = make_sets(sets, keep);
        py::array_t<double> out(TS.total());
        double* o = out.mutable_data();
        {
          py::gil_scoped_release release;
          ts::trials_log_prob(spec, X.data(), X.shape(0), X.shape(1), TS, o, threads);
        }
        return out;
      },
      py::arg("spec"), py::arg("X"), py::arg("sets"), py::arg("threads"),
      "log p of every trial of the sets [(rows, kind, k, r, ordered[, lapse]), ...], set after set.");
  m.def(
      "trials_loss_grad",
      [](const ts::OracleSpec& spec, const DoubleArray& X, const py::list& sets, int threads) {
        require_embedding(X);
        ts::check_call(spec, threads);
        std::vector<IndexArray> keep;
        const ts::TrialSets TS = make_sets(sets, keep);
        const py::ssize_t n = X.shape(0), d = X.shape(1);
        TS.validate(n);
        py::array_t<double> G({n, d});
        double* g = G.mutable_data();
        ts::LossGrad s;
        {
          py::gil_scoped_release release;
          ts::TrialWorkspace ws;
          ts::with_choice_model(spec, [&](const auto& model) {
            s = ts::trials_loss_grad<true>(model, X.data(), n, d, TS, g, ws, threads);
            return 0;
          });
        }
        return py::make_tuple(s.logp, G, spec.kind == ts::ModelKind::GammaCKL ? s.dlg : 0.0);
      },
      py::arg("spec"), py::arg("X"), py::arg("sets"), py::arg("threads"),
      "(sum log p, its gradient (n, d), its derivative in log gamma) over every trial.");
  m.def(
      "train_trials",
      [](const ts::OracleSpec& spec, const DoubleArray& init, const py::list& sets,
         const ts::TrainOptions& options, int threads, const py::object& callback) {
        require_embedding(init);
        std::vector<IndexArray> keep;
        const ts::TrialSets TS = make_sets(sets, keep);
        const py::ssize_t n = init.shape(0), d = init.shape(1);
        py::array_t<double> X({n, d});
        std::copy(init.data(), init.data() + n * d, X.mutable_data());
        ts::EpochCallback cb;
        if (!callback.is_none())
          cb = [callback](std::int64_t epoch, double loss, double gamma) {
            py::gil_scoped_acquire acquire;
            try {
              return callback(epoch, loss, gamma).cast<bool>();
            } catch (py::error_already_set& e) {
              e.restore();
              return false;
            }
          };
        ts::TrainResult res;
        double* x = X.mutable_data();
        {
          py::gil_scoped_release release;
          ts::Cancel cancel(signal_probe());
          res = ts::train_trials(spec, x, n, d, TS, options, threads, cb, cancel);
        }
        if (PyErr_Occurred()) throw py::error_already_set();
        return py::make_tuple(X, to_array(res.loss), to_array(res.gamma), res.epochs, res.status);
      },
      py::arg("spec"), py::arg("init"), py::arg("sets"), py::arg("options"), py::arg("threads"),
      py::arg("callback") = py::none(),
      "Fits an embedding from `init` to trial sets by L-BFGS: (embedding, loss per epoch, "
      "gamma per epoch, epochs, status).");
}
