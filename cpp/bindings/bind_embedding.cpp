// Bindings of embedding/: one native call per fit; the optional per-epoch callback
// re-acquires the GIL (progress bars, verbose logs, Ctrl-C).
#include <Python.h>

#include <optional>

#include "arrays.hpp"
#include "tripletsearch/embedding/first_order.hpp"
#include "tripletsearch/embedding/train.hpp"

namespace ts = tripletsearch;

namespace {

// The trainer's result: the fitted embedding with the per-epoch records.
struct FitResult {
  py::array_t<double> embedding;
  ts::TrainResult result;
};

ts::EpochCallback wrap_callback(const py::object& callback) {
  if (callback.is_none()) return {};
  return [callback](std::int64_t epoch, double loss, double gamma) {
    py::gil_scoped_acquire acquire;
    try {
      return callback(epoch, loss, gamma).cast<bool>();
    } catch (py::error_already_set& e) {
      e.restore();  // re-raised once the fit has stopped
      return false;
    }
  };
}

template <class I>
using RowsArray = py::array_t<I, py::array::c_style | kAligned>;

// One fit; the rows (and validation rows) as int64 or int32.
template <class I>
FitResult train_rows(const ts::OracleSpec& spec, const DoubleArray& init, const py::array& triplets,
                     const ts::TrainOptions& options, std::uint64_t seed, int threads,
                     const py::object& callback, const py::object& validation) {
  // no copy when the rows already are of type I, C order and aligned
  const auto T = py::cast<RowsArray<I>>(triplets);
  require_ndim(init, 2, "init");
  require_ndim(T, 2, "triplets");
  require_cols(T, 3, "triplets");
  const I* V = nullptr;
  std::int64_t mv = 0;
  RowsArray<I> Varr;
  if (!validation.is_none()) {
    Varr = py::cast<RowsArray<I>>(validation);
    require_ndim(Varr, 2, "validation");
    require_cols(Varr, 3, "validation");
    V = Varr.data();
    mv = Varr.shape(0);
  }
  const py::ssize_t n = init.shape(0), d = init.shape(1);
  FitResult out{py::array_t<double>({n, d}), {}};
  std::copy(init.data(), init.data() + n * d, out.embedding.mutable_data());
  const ts::EpochCallback cb = wrap_callback(callback);
  double* x = out.embedding.mutable_data();
  {
    py::gil_scoped_release release;
    ts::Cancel cancel(signal_probe());
    out.result =
        ts::train(spec, x, n, d, T.data(), T.shape(0), options, seed, threads, cb, cancel, V, mv);
  }
  if (PyErr_Occurred()) throw py::error_already_set();
  return out;
}

void register_options(py::module_& m) {
  py::enum_<ts::Optimizer>(m, "Optimizer", "The embedding trainer's optimizers.")
      .value("SGD", ts::Optimizer::SGD)
      .value("Adam", ts::Optimizer::Adam)
      .value("LBFGS", ts::Optimizer::LBFGS);
  py::enum_<ts::TrainStatus>(m, "TrainStatus", "How a fit ended.")
      .value("Converged", ts::TrainStatus::Converged)
      .value("MaxEpochs", ts::TrainStatus::MaxEpochs)
      .value("Diverged", ts::TrainStatus::Diverged)
      .value("Stopped", ts::TrainStatus::Stopped)
      .value("EarlyStopped", ts::TrainStatus::EarlyStopped);

  const ts::TrainOptions dflt;
  auto make = [](ts::Optimizer optimizer, double lr, std::int64_t batch_size,
                 std::int64_t max_epochs, double tol, std::int64_t n_iter_no_change, double l2,
                 bool learn_gamma, int lbfgs_history, std::int64_t n_fixed) {
    ts::TrainOptions o;
    o.optimizer = optimizer;
    o.lr = lr;
    o.batch_size = batch_size;
    o.max_epochs = max_epochs;
    o.tol = tol;
    o.n_iter_no_change = n_iter_no_change;
    o.l2 = l2;
    o.learn_gamma = learn_gamma;
    o.lbfgs_history = lbfgs_history;
    o.n_fixed = n_fixed;
    o.validate();
    return o;
  };
  py::class_<ts::TrainOptions> cls(
      m, "TrainOptions",
      "Options of the trainer; validated on construction, pickled and compared by value.");
  cls.def(py::init(make), py::kw_only(), py::arg("optimizer") = dflt.optimizer,
          py::arg("lr") = dflt.lr, py::arg("batch_size") = dflt.batch_size,
          py::arg("max_epochs") = dflt.max_epochs, py::arg("tol") = dflt.tol,
          py::arg("n_iter_no_change") = dflt.n_iter_no_change, py::arg("l2") = dflt.l2,
          py::arg("learn_gamma") = dflt.learn_gamma, py::arg("lbfgs_history") = dflt.lbfgs_history,
          py::arg("n_fixed") = dflt.n_fixed)
      .def_readonly("optimizer", &ts::TrainOptions::optimizer)
      .def_readonly("lr", &ts::TrainOptions::lr)
      .def_readonly("batch_size", &ts::TrainOptions::batch_size)
      .def_readonly("max_epochs", &ts::TrainOptions::max_epochs)
      .def_readonly("tol", &ts::TrainOptions::tol)
      .def_readonly("n_iter_no_change", &ts::TrainOptions::n_iter_no_change)
      .def_readonly("l2", &ts::TrainOptions::l2)
      .def_readonly("learn_gamma", &ts::TrainOptions::learn_gamma)
      .def_readonly("lbfgs_history", &ts::TrainOptions::lbfgs_history)
      .def_readonly("n_fixed", &ts::TrainOptions::n_fixed);
  def_state(
      cls,
      [](const ts::TrainOptions& o) {
        return py::make_tuple(o.optimizer, o.lr, o.batch_size, o.max_epochs, o.tol,
                              o.n_iter_no_change, o.l2, o.learn_gamma, o.lbfgs_history, o.n_fixed);
      },
      [make](const py::tuple& t) {
        if (t.size() != 10) throw std::invalid_argument("TrainOptions: malformed state");
        return make(t[0].cast<ts::Optimizer>(), t[1].cast<double>(), t[2].cast<std::int64_t>(),
                    t[3].cast<std::int64_t>(), t[4].cast<double>(), t[5].cast<std::int64_t>(),
                    t[6].cast<double>(), t[7].cast<bool>(), t[8].cast<int>(),
                    t[9].cast<std::int64_t>());
      });
}

void register_train(py::module_& m) {
  py::class_<FitResult>(m, "FitResult", "The result of train().")
      .def_readonly("embedding", &FitResult::embedding, "The fitted embedding (n, d).")
      .def_property_readonly(
          "loss", [](const FitResult& r) { return to_array(r.result.loss); },
          "The objective after every epoch.")
      .def_property_readonly(
          "gamma", [](const FitResult& r) { return to_array(r.result.gamma); },
          "gamma after every epoch.")
      .def_property_readonly(
          "val_loss", [](const FitResult& r) { return to_array(r.result.val_loss); },
          "With validation rows: their mean negative log-likelihood after every epoch.")
      .def_property_readonly(
          "best_epoch", [](const FitResult& r) { return r.result.best_epoch; },
          "With validation rows: the epoch whose parameters were kept (0: the start).")
      .def_property_readonly("epochs", [](const FitResult& r) { return r.result.epochs; })
      .def_property_readonly("status", [](const FitResult& r) { return r.result.status; });

  m.def(
      "train",
      [](const ts::OracleSpec& spec, const DoubleArray& init, const py::array& triplets,
         const ts::TrainOptions& options, std::uint64_t seed, int threads,
         const py::object& callback, const py::object& validation) {
        // int32 rows stay int32 (memory-mapped or read-only alike: no copy); others int64
        if (py::dtype::of<std::int32_t>().is(triplets.dtype()) ||
            triplets.dtype().equal(py::dtype::of<std::int32_t>()))
          return train_rows<std::int32_t>(spec, init, triplets, options, seed, threads, callback,
                                          validation);
        return train_rows<std::int64_t>(spec, init, triplets, options, seed, threads, callback,
                                        validation);
      },
      py::arg("spec"), py::arg("init"), py::arg("triplets"), py::arg("options"), py::arg("seed"),
      py::arg("threads"), py::arg("callback") = py::none(), py::arg("validation") = py::none(),
      "Fits an embedding from `init` (n, d) to triplet rows (int32 rows are read as they are, "
      "other integer rows as int64; the validation rows are read as the rows); "
      "callback(epoch, loss, gamma) -> bool after every epoch (False stops the fit). With "
      "`validation` rows the fit stops early on their loss and ends at its best epoch.");

  m.def(
      "epoch_permutation",
      [](std::uint64_t seed, std::int64_t epoch, std::int64_t m) {
        std::vector<std::int64_t> perm(static_cast<std::size_t>(std::max<std::int64_t>(0, m)));
        ts::epoch_permutation(seed, epoch, perm);
        return to_array(perm);
      },
      py::arg("seed"), py::arg("epoch"), py::arg("m"),
      "The trainer's minibatch order of one epoch.");
}

}  // namespace

void register_embedding(py::module_& m) {
  register_options(m);
  register_train(m);
}
