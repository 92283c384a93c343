// Bindings of oracle/: the model specification and the kernels over triplet rows.
#include "arrays.hpp"
#include "tripletsearch/oracle/gradient.hpp"
#include "tripletsearch/oracle/models.hpp"
#include "tripletsearch/oracle/rows.hpp"

namespace ts = tripletsearch;

namespace {

ts::Problem make_problem(const DoubleArray& X, const IndexArray& T) {
  require_ndim(X, 2, "X");
  require_ndim(T, 2, "triplets");
  require_cols(T, 3, "triplets");
  return {X.data(), X.shape(0), X.shape(1), T.data(), T.shape(0)};
}

// out = kernel(spec, problem, out, threads) over the rows, GIL released.
template <class Kernel>
py::array_t<double> rows_out(const ts::OracleSpec& spec, const DoubleArray& X, const IndexArray& T,
                             int threads, Kernel kernel) {
  const ts::Problem P = make_problem(X, T);
  py::array_t<double> out(P.m);
  double* o = out.mutable_data();
  {
    py::gil_scoped_release release;
    kernel(spec, P, o, threads);
  }
  return out;
}

void register_spec(py::module_& m) {
  py::enum_<ts::ModelKind>(m, "ModelKind", "The oracle models.")
      .value("GammaCKL", ts::ModelKind::GammaCKL)
      .value("CKL", ts::ModelKind::CKL)
      .value("TSTE", ts::ModelKind::TSTE)
      .value("STE", ts::ModelKind::STE)
      .value("Probit", ts::ModelKind::Probit);

  auto make = [](ts::ModelKind kind, double param) {
    const ts::OracleSpec spec{kind, param};
    spec.validate();
    return spec;
  };
  py::class_<ts::OracleSpec> cls(m, "OracleSpec",
                                 "A model and its parameter (gamma, mu, alpha, unused, sigma); "
                                 "validated on construction, pickled and compared by value.");
  cls.def(py::init(make), py::arg("kind"), py::arg("param"))
      .def_readonly("kind", &ts::OracleSpec::kind)
      .def_readonly("param", &ts::OracleSpec::param);
  def_state(
      cls, [](const ts::OracleSpec& s) { return py::make_tuple(s.kind, s.param); },
      [make](const py::tuple& t) {
        if (t.size() != 2) throw std::invalid_argument("OracleSpec: malformed state");
        return make(t[0].cast<ts::ModelKind>(), t[1].cast<double>());
      });
}

void register_row_kernels(py::module_& m) {
  m.def(
      "oracle_prob",
      [](const ts::OracleSpec& spec, const DoubleArray& X, const IndexArray& T, int threads) {
        return rows_out(spec, X, T, threads, ts::prob);
      },
      py::arg("spec"), py::arg("X"), py::arg("triplets"), py::arg("threads"),
      "Probability of each row's stated outcome, shape (m,).");

  m.def(
      "oracle_log_prob",
      [](const ts::OracleSpec& spec, const DoubleArray& X, const IndexArray& T, int threads) {
        return rows_out(spec, X, T, threads, ts::log_prob);
      },
      py::arg("spec"), py::arg("X"), py::arg("triplets"), py::arg("threads"),
      "log of oracle_prob, shape (m,).");

  m.def(
      "oracle_log_likelihood",
      [](const ts::OracleSpec& spec, const DoubleArray& X, const IndexArray& T, int threads) {
        const ts::Problem P = make_problem(X, T);
        py::gil_scoped_release release;
        return ts::log_likelihood(spec, P, threads);
      },
      py::arg("spec"), py::arg("X"), py::arg("triplets"), py::arg("threads"),
      "Sum of the rows' log-probabilities.");
}

void register_gradients(py::module_& m) {
  m.def(
      "oracle_grad",
      [](const ts::OracleSpec& spec, const DoubleArray& X, const IndexArray& T, int threads) {
        const ts::Problem P = make_problem(X, T);
        py::array_t<double> G({P.n, P.d});
        double* g = G.mutable_data();
        {
          py::gil_scoped_release release;
          ts::Cancel cancel(signal_probe());
          ts::grad(spec, P, g, threads, cancel);
        }
        return G;
      },
      py::arg("spec"), py::arg("X"), py::arg("triplets"), py::arg("threads"),
      "Gradient of oracle_log_likelihood with respect to X, shape (n, d).");

  m.def(
      "oracle_choice_prob",
      [](const ts::OracleSpec& spec, const DoubleArray& X, const IndexArray& heads,
         const IndexArray& cands, int threads) {
        require_ndim(X, 2, "X");
        require_ndim(heads, 1, "heads");
        require_ndim(cands, 2, "candidates");
        if (cands.shape(0) != heads.shape(0))
          throw std::invalid_argument("candidates: must have one row per head");
        const py::ssize_t rows = heads.shape(0), k = cands.shape(1);
        py::array_t<double> out({rows, k});
        double* o = out.mutable_data();
        {
          py::gil_scoped_release release;
          ts::choice_prob(spec, X.data(), X.shape(0), X.shape(1), heads.data(), cands.data(), rows,
                          k, o, threads);
        }
        return out;
      },
      py::arg("spec"), py::arg("X"), py::arg("heads"), py::arg("candidates"), py::arg("threads"),
      "P(candidate c named closest to the head), shape (m, k).");
}

}  // namespace

void register_oracle(py::module_& m) {
  register_spec(m);
  register_row_kernels(m);
  register_gradients(m);
}
