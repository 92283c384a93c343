// The database of the database search: n items of dimension d in simd/block.hpp's layout
// (blocks of kLanes items, single precision), shared by every searcher of one catalogue.
#pragma once

#include <cstdint>
#include <vector>

#include "../simd/block.hpp"

namespace tripletsearch {

class ItemStore {
 public:
  ItemStore(const double* X, std::int64_t n, std::int64_t d)
      : n_(n),
        d_(d),
        nb_((n + kLanes - 1) / kLanes),
        data_(static_cast<std::size_t>(nb_ * d * kLanes), StoreFloat(0)) {
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t a = 0; a < d; ++a)
        data_[index(i, a)] = static_cast<StoreFloat>(X[i * d + a]);
  }
  std::int64_t n() const { return n_; }
  std::int64_t d() const { return d_; }
  std::int64_t blocks() const { return nb_; }
  const StoreFloat* block(std::int64_t b) const { return data_.data() + b * d_ * kLanes; }
  double coord(std::int64_t i, std::int64_t a) const { return data_[index(i, a)]; }
  void row(std::int64_t i, double* out) const {
    for (std::int64_t a = 0; a < d_; ++a) out[a] = coord(i, a);
  }

 private:
  std::size_t index(std::int64_t i, std::int64_t a) const {
    return static_cast<std::size_t>((i / kLanes) * d_ * kLanes + a * kLanes + i % kLanes);
  }
  std::int64_t n_, d_, nb_;
  std::vector<StoreFloat> data_;
};

}  // namespace tripletsearch
