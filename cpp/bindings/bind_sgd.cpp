// Bindings of sgd.hpp: one native call per fit; the optional per-epoch callback
// re-acquires the GIL (progress bars, verbose logs, Ctrl-C).
#include <Python.h>

#include "arrays.hpp"
#include "tripletsearch/sgd.hpp"

namespace ts = tripletsearch;

void register_sgd(py::module_& m) {
  m.def(
      "train",
      [](int kind, double param, const DoubleArray& X0, const IndexArray& T, int optimizer,
         double lr, std::int64_t batch_size, std::int64_t max_epochs, double tol,
         std::int64_t n_iter_no_change, double l2, bool learn_gamma, std::uint64_t seed,
         int threads, py::object callback) {
        require_ndim(X0, 2, "init");
        require_ndim(T, 2, "triplets");
        require_cols(T, 3, "triplets");
        require_threads(threads);
        if (kind < 0 || kind > 4) throw std::invalid_argument("unknown oracle model");
        if (optimizer < 0 || optimizer > 2) throw std::invalid_argument("optimizer: unknown");
        const ts::OracleSpec spec{static_cast<ts::ModelKind>(kind), param};
        ts::TrainOptions opt;
        opt.optimizer = static_cast<ts::Optimizer>(optimizer);
        opt.lr = lr;
        opt.batch_size = batch_size;
        opt.max_epochs = max_epochs;
        opt.tol = tol;
        opt.n_iter_no_change = n_iter_no_change;
        opt.l2 = l2;
        opt.learn_gamma = learn_gamma;
        opt.seed = seed;
        opt.threads = threads;
        const py::ssize_t n = X0.shape(0), d = X0.shape(1);
        py::array_t<double> X({n, d});
        std::copy(X0.data(), X0.data() + n * d, X.mutable_data());
        ts::EpochCallback cb;
        if (!callback.is_none()) {
          cb = [&callback](std::int64_t epoch, double loss, double gamma) {
            py::gil_scoped_acquire acquire;
            try {
              return callback(epoch, loss, gamma).cast<bool>();
            } catch (py::error_already_set& e) {
              e.restore();  // re-raised below, once the fit has stopped
              return false;
            }
          };
        }
        ts::TrainResult res;
        double* x = X.mutable_data();
        {
          py::gil_scoped_release release;
          res = ts::train(spec, x, n, d, T.data(), T.shape(0), opt, cb);
        }
        if (PyErr_Occurred()) throw py::error_already_set();
        return py::make_tuple(X, py::array_t<double>(res.loss.size(), res.loss.data()),
                              py::array_t<double>(res.gamma.size(), res.gamma.data()), res.epochs,
                              static_cast<int>(res.status));
      },
      py::arg("kind"), py::arg("param"), py::arg("init"), py::arg("triplets"), py::arg("optimizer"),
      py::arg("lr"), py::arg("batch_size"), py::arg("max_epochs"), py::arg("tol"),
      py::arg("n_iter_no_change"), py::arg("l2"), py::arg("learn_gamma"), py::arg("seed"),
      py::arg("threads"), py::arg("callback") = py::none());

  m.def(
      "rng_u64",
      [](std::uint64_t seed, std::uint64_t stream, std::int64_t count) {
        ts::Rng rng(seed, stream);
        py::array_t<std::uint64_t> out(count);
        auto* o = out.mutable_data();
        for (std::int64_t k = 0; k < count; ++k) o[k] = rng.next_u64();
        return out;
      },
      "First `count` outputs of the native generator stream (for the NumPy twin's tests).");

  m.def(
      "epoch_permutation",
      [](std::uint64_t seed, std::int64_t epoch, std::int64_t m) {
        std::vector<std::int64_t> perm(static_cast<std::size_t>(m));
        ts::detail::epoch_permutation(seed, epoch, perm);
        return py::array_t<std::int64_t>(perm.size(), perm.data());
      },
      "The trainer's minibatch order of one epoch.");
}
