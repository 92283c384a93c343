// Seeding: every random stream of the core derives from (seed, purpose, index).
//
// A searcher or a simulation gets one 64-bit seed. Each thing it draws at random (a
// simulated run's searcher, the posterior draws of a query, a particle's moves, ...) has
// its own Purpose salt, and within a purpose one stream per index (run, query, particle):
// no two purposes share a stream, and no stream depends on the thread count.
// python/tripletsearch/_reference/rng.py mirrors these salts by name.
#pragma once

#include <cstdint>

#include "rng.hpp"

namespace tripletsearch {

enum class Purpose : std::uint64_t {
  SearchQuery = 0,                           // discrete: random and SampleMirror queries
  PosteriorDraws = 0x9E3779B97F4A7C15ULL,    // discrete info gain: draws from the posterior
  SimDiscreteRun = 0x5851F42D4C957F2DULL,    // simulate_discrete: each run's searcher seed
  SimContinuousRun = 0x2545F4914F6CDD1DULL,  // simulate_continuous: each run's searcher seed
  SimUser = 0x3C6EF372FE94F82BULL,           // both simulators: each run's target and answers
  ParticleInit = 0xD2B74407B1CE6E93ULL,      // continuous: a stage's initial particles
  ResampleMove = 0x632BE59BD9B4E019ULL,      // continuous: resample-move of a refresh
  QueryDraws = 0x94D049BB133111EBULL,        // continuous: candidate and evaluation draws
  HyptestStage = 0xA24BAED4963EE407ULL,      // continuous: simulated cell outcomes per stage
  Opening = 0xBF58476D1CE4E5B9ULL,           // discrete: 0 axes rotation, 1 uniform first screen
};

// Stream `index` of `purpose` under `seed`: Rng(seed ^ salt, index).
inline Rng stream(std::uint64_t seed, Purpose purpose, std::uint64_t index) {
  return Rng(seed ^ static_cast<std::uint64_t>(purpose), index);
}

// A child seed, one per index (a simulated run's searcher, a refresh's particle streams):
// splitmix64(seed ^ salt) + index.
inline std::uint64_t child_seed(std::uint64_t seed, Purpose purpose, std::uint64_t index) {
  std::uint64_t s = seed ^ static_cast<std::uint64_t>(purpose);
  return splitmix64(s) + index;
}

}  // namespace tripletsearch
