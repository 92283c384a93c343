// Bindings of core/rng.hpp and core/seeding.hpp: the native streams, exposed so that the
// NumPy twin's tests can check that they replay them bit for bit.
#include "arrays.hpp"
#include "tripletsearch/core/rng.hpp"
#include "tripletsearch/core/seeding.hpp"

namespace ts = tripletsearch;

void register_rng(py::module_& m) {
  py::enum_<ts::Purpose>(m, "Purpose", "The salts of the core's random streams (seeding.hpp).")
      .value("SearchQuery", ts::Purpose::SearchQuery)
      .value("PosteriorDraws", ts::Purpose::PosteriorDraws)
      .value("SimDiscreteRun", ts::Purpose::SimDiscreteRun)
      .value("SimContinuousRun", ts::Purpose::SimContinuousRun)
      .value("SimUser", ts::Purpose::SimUser)
      .value("ParticleInit", ts::Purpose::ParticleInit)
      .value("ResampleMove", ts::Purpose::ResampleMove)
      .value("QueryDraws", ts::Purpose::QueryDraws)
      .value("HyptestStage", ts::Purpose::HyptestStage)
      .value("Opening", ts::Purpose::Opening);

  m.def(
      "rng_u64",
      [](std::uint64_t seed, std::uint64_t stream, std::int64_t count) {
        ts::Rng rng(seed, stream);
        std::vector<std::uint64_t> out(static_cast<std::size_t>(std::max<std::int64_t>(0, count)));
        for (auto& v : out) v = rng.next_u64();
        return to_array(out);
      },
      py::arg("seed"), py::arg("stream"), py::arg("count"),
      "The first `count` outputs of the generator's stream (seed, stream).");

  m.def(
      "child_seed",
      [](std::uint64_t seed, ts::Purpose purpose, std::uint64_t index) {
        return ts::child_seed(seed, purpose, index);
      },
      py::arg("seed"), py::arg("purpose"), py::arg("index"), "seeding.hpp's child_seed.");
}
