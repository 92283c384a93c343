// Bindings of oracle.hpp: prob, log_prob, log_likelihood, grad, choice_prob.
#include "arrays.hpp"
#include "tripletsearch/oracle.hpp"

namespace ts = tripletsearch;

namespace {

ts::Problem make_problem(const DoubleArray& X, const IndexArray& T) {
  require_ndim(X, 2, "X");
  require_ndim(T, 2, "triplets");
  require_cols(T, 3, "triplets");
  return {X.data(), X.shape(0), X.shape(1), T.data(), T.shape(0)};
}

ts::OracleSpec make_spec(int kind, double param) {
  if (kind < 0 || kind > 4) throw std::invalid_argument("unknown oracle model");
  return {static_cast<ts::ModelKind>(kind), param};
}

py::array_t<double> rows_out(const ts::Problem& P, int kind, double param, int threads,
                             bool log_space) {
  const ts::OracleSpec spec = make_spec(kind, param);
  require_threads(threads);
  py::array_t<double> out(P.m);
  double* o = out.mutable_data();
  {
    py::gil_scoped_release release;
    if (log_space)
      ts::log_prob(spec, P, o, threads);
    else
      ts::prob(spec, P, o, threads);
  }
  return out;
}

}  // namespace

void register_oracle(py::module_& m) {
  m.def(
      "oracle_prob",
      [](int kind, double param, const DoubleArray& X, const IndexArray& T, int threads) {
        return rows_out(make_problem(X, T), kind, param, threads, false);
      },
      py::arg("kind"), py::arg("param"), py::arg("X"), py::arg("triplets"), py::arg("threads"));

  m.def(
      "oracle_log_prob",
      [](int kind, double param, const DoubleArray& X, const IndexArray& T, int threads) {
        return rows_out(make_problem(X, T), kind, param, threads, true);
      },
      py::arg("kind"), py::arg("param"), py::arg("X"), py::arg("triplets"), py::arg("threads"));

  m.def(
      "oracle_log_likelihood",
      [](int kind, double param, const DoubleArray& X, const IndexArray& T, int threads) {
        const ts::Problem P = make_problem(X, T);
        const ts::OracleSpec spec = make_spec(kind, param);
        require_threads(threads);
        py::gil_scoped_release release;
        return ts::log_likelihood(spec, P, threads);
      },
      py::arg("kind"), py::arg("param"), py::arg("X"), py::arg("triplets"), py::arg("threads"));

  m.def(
      "oracle_grad",
      [](int kind, double param, const DoubleArray& X, const IndexArray& T, int threads) {
        const ts::Problem P = make_problem(X, T);
        const ts::OracleSpec spec = make_spec(kind, param);
        require_threads(threads);
        py::array_t<double> G({P.n, P.d});
        double* g = G.mutable_data();
        {
          py::gil_scoped_release release;
          ts::grad(spec, P, g, threads);
        }
        return G;
      },
      py::arg("kind"), py::arg("param"), py::arg("X"), py::arg("triplets"), py::arg("threads"));

  m.def(
      "oracle_choice_prob",
      [](int kind, double param, const DoubleArray& X, const IndexArray& heads,
         const IndexArray& cands, int threads) {
        require_ndim(X, 2, "X");
        require_ndim(heads, 1, "heads");
        require_ndim(cands, 2, "candidates");
        if (cands.shape(0) != heads.shape(0))
          throw std::invalid_argument("candidates: must have one row per head");
        const ts::OracleSpec spec = make_spec(kind, param);
        require_threads(threads);
        const py::ssize_t m = heads.shape(0), k = cands.shape(1);
        py::array_t<double> out({m, k});
        double* o = out.mutable_data();
        {
          py::gil_scoped_release release;
          ts::choice_prob(spec, X.data(), X.shape(0), X.shape(1), heads.data(), cands.data(), m, k,
                          o, threads);
        }
        return out;
      },
      py::arg("kind"), py::arg("param"), py::arg("X"), py::arg("heads"), py::arg("candidates"),
      py::arg("threads"));
}
