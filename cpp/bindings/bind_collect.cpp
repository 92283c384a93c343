// Bindings of collect/: the triplet sampler's scoring of a head's candidate pairs.
#include "arrays.hpp"
#include "tripletsearch/collect/choice_information.hpp"
#include "tripletsearch/collect/information.hpp"

namespace ts = tripletsearch;

namespace {

ts::HeadGeometry geometry(const DoubleArray& X, const DoubleArray& support) {
  require_ndim(X, 2, "X");
  require_ndim(support, 2, "support");
  if (support.shape(1) != X.shape(1))
    throw std::invalid_argument("support: expected " + std::to_string(X.shape(1)) +
                                " columns (X's dimension), got " +
                                std::to_string(support.shape(1)));
  return {X.data(), X.shape(0), X.shape(1), support.data(), support.shape(0)};
}

// The rows of an (m, 2) index array.
std::int64_t pair_rows(const IndexArray& a, const char* name) {
  require_ndim(a, 2, name);
  require_cols(a, 2, name);
  return a.shape(0);
}

void require_length(const DoubleArray& a, py::ssize_t n, const char* name) {
  require_ndim(a, 1, name);
  if (a.shape(0) != n)
    throw std::invalid_argument(std::string(name) + ": expected one value per support point (" +
                                std::to_string(n) + "), got " + std::to_string(a.shape(0)));
}

py::array_t<double> log_weights(const ts::OracleSpec& spec, double lapse, const DoubleArray& X,
                                const DoubleArray& support, const IndexArray& answers,
                                const DoubleArray& log_prior, int threads) {
  const ts::HeadGeometry g = geometry(X, support);
  const std::int64_t r = pair_rows(answers, "answers");
  require_length(log_prior, support.shape(0), "log_prior");
  py::array_t<double> out(support.shape(0));
  double* o = out.mutable_data();
  py::gil_scoped_release release;
  ts::Cancel cancel(signal_probe());
  ts::head_log_weights({spec, lapse}, g, answers.data(), r, log_prior.data(), o, threads, cancel);
  return out;
}

py::array_t<double> log_odds(const ts::OracleSpec& spec, const DoubleArray& X,
                             const DoubleArray& support, const IndexArray& items, int threads) {
  const ts::HeadGeometry g = geometry(X, support);
  require_ndim(items, 1, "items");
  const py::ssize_t K = items.shape(0);
  py::array_t<double> out({K, support.shape(0)});
  double* o = out.mutable_data();
  py::gil_scoped_release release;
  ts::Cancel cancel(signal_probe());
  ts::log_odds_table(spec, g, items.data(), K, o, threads, cancel);
  return out;
}

py::array_t<double> information(double lapse, const DoubleArray& table,
                                const DoubleArray& log_weights, const IndexArray& pairs,
                                int threads) {
  require_ndim(table, 2, "log_odds");
  require_length(log_weights, table.shape(1), "log_weights");
  const std::int64_t C = pair_rows(pairs, "pairs");
  py::array_t<double> out(C);
  double* o = out.mutable_data();
  py::gil_scoped_release release;
  ts::Cancel cancel(signal_probe());
  ts::pair_information(lapse, table.data(), table.shape(0), table.shape(1), log_weights.data(),
                       pairs.data(), C, o, threads, cancel);
  return out;
}

py::array_t<double> table_log_weights(double lapse, const DoubleArray& table,
                                      const IndexArray& answers, const DoubleArray& log_prior,
                                      int threads) {
  require_ndim(table, 2, "log_odds");
  const std::int64_t r = pair_rows(answers, "answers");
  require_length(log_prior, table.shape(1), "log_prior");
  py::array_t<double> out(table.shape(1));
  double* o = out.mutable_data();
  py::gil_scoped_release release;
  ts::Cancel cancel(signal_probe());
  ts::table_log_weights(lapse, table.data(), table.shape(0), table.shape(1), answers.data(), r,
                        log_prior.data(), o, threads, cancel);
  return out;
}

// The rows of a (m, k) index array and its k.
std::int64_t choice_rows(const IndexArray& a, const char* name, std::int64_t& k) {
  require_ndim(a, 2, name);
  k = a.shape(1);
  return a.shape(0);
}

py::array_t<double> choice_log_weights(double lapse, const DoubleArray& table,
                                       const IndexArray& answers, std::int64_t picks,
                                       const DoubleArray& log_prior, int threads) {
  require_ndim(table, 2, "log_odds");
  std::int64_t k = 0;
  const std::int64_t R = choice_rows(answers, "answers", k);
  require_length(log_prior, table.shape(1), "log_prior");
  py::array_t<double> out(table.shape(1));
  double* o = out.mutable_data();
  py::gil_scoped_release release;
  ts::Cancel cancel(signal_probe());
  ts::choice_log_weights(lapse, table.data(), table.shape(0), table.shape(1), answers.data(), R, k,
                         picks, log_prior.data(), o, threads, cancel);
  return out;
}

py::array_t<double> choice_information(double lapse, const DoubleArray& table,
                                       const DoubleArray& log_weights, const IndexArray& sets,
                                       std::int64_t picks, int threads) {
  require_ndim(table, 2, "log_odds");
  require_length(log_weights, table.shape(1), "log_weights");
  std::int64_t k = 0;
  const std::int64_t C = choice_rows(sets, "sets", k);
  py::array_t<double> out(C);
  double* o = out.mutable_data();
  py::gil_scoped_release release;
  ts::Cancel cancel(signal_probe());
  ts::choice_information(lapse, table.data(), table.shape(0), table.shape(1), log_weights.data(),
                         sets.data(), C, k, picks, o, threads, cancel);
  return out;
}

}  // namespace

void register_collect(py::module_& m) {
  m.def("collect_log_weights", &log_weights, py::arg("spec"), py::arg("lapse"), py::arg("X"),
        py::arg("support"), py::arg("answers"), py::arg("log_prior"), py::arg("threads"),
        "Log weights (M,) of a head's support points: log_prior plus the log-probability of "
        "each answer (closer, farther) with the head at the point, the model mixed with a "
        "lapse.");
  m.def("collect_log_odds", &log_odds, py::arg("spec"), py::arg("X"), py::arg("support"),
        py::arg("items"), py::arg("threads"),
        "The model's log-odds terms f(||s_m - x_i||^2) of the given items for every support "
        "point, shape (len(items), M): a pair (a, b) of rows has log-odds F[b] - F[a] of 'a "
        "closer'.");
  m.def("collect_table_log_weights", &table_log_weights, py::arg("lapse"), py::arg("log_odds"),
        py::arg("answers"), py::arg("log_prior"), py::arg("threads"),
        "collect_log_weights from a log-odds table: log_prior plus the log-probability of "
        "each answer, given as rows (closer, farther) of the table, at each support point.");
  m.def("collect_pair_information", &information, py::arg("lapse"), py::arg("log_odds"),
        py::arg("log_weights"), py::arg("pairs"), py::arg("threads"),
        "Mutual information (nats) between the answer to each candidate pair and the head's "
        "position, shape (C,): pairs are (C, 2) rows of the log-odds table, log_weights the "
        "support points' (unnormalized). Lapse 0 under AVX2: float lanes, to about 1e-7 "
        "nats.");
  m.def("collect_choice_log_weights", &choice_log_weights, py::arg("lapse"),
        py::arg("log_odds"), py::arg("answers"), py::arg("picks"), py::arg("log_prior"),
        py::arg("threads"),
        "Log weights (M,) of a head's support points from ranked answers: log_prior plus the "
        "log-probability of each answer, a row of k table rows (the picks first, in order), "
        "by successive choices among those left, each pick mixed with a lapse.");
  m.def("collect_choice_information", &choice_information, py::arg("lapse"),
        py::arg("log_odds"), py::arg("log_weights"), py::arg("sets"), py::arg("picks"),
        py::arg("threads"),
        "Mutual information (nats) between the ranked answer (picks successive choices) to "
        "each set of k candidates and the head's position, shape (C,): sets are (C, k) rows "
        "of the log-odds table.");
}
