// The database of the database search: n items of dimension d in simd/block.hpp's layout
// (blocks of kLanes items, single precision), shared by every searcher of one catalogue.
//
// Before narrowing to single precision the items are centred (each coordinate on the
// midpoint of its range) and, for a scale-free user model, divided by the power of two
// that brings every coordinate into [-1, 1]: a catalogue far from the origin or at any
// magnitude keeps its distances to float precision. Power-of-two scaling and midpoints
// are exact and independent of summation order, so the NumPy twin stores the same
// floats. Distances in the store are the input's divided by scale()^2.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../core/errors.hpp"
#include "../simd/block.hpp"

namespace tripletsearch {

class ItemStore {
 public:
  // With `scaled`, the power-of-two scaling too (not for an absolute user model); with
  // `distinct`, items that coincide in the store raise std::invalid_argument naming them.
  // X: n x d, double or float (read as it is: no copy of the input).
  template <class T>
  ItemStore(const T* X, std::int64_t n, std::int64_t d, bool scaled = true, bool distinct = false);

  std::int64_t n() const { return n_; }
  std::int64_t d() const { return d_; }
  std::int64_t blocks() const { return nb_; }
  const StoreFloat* block(std::int64_t b) const { return data_.data() + b * d_ * kLanes; }
  double coord(std::int64_t i, std::int64_t a) const { return data_[index(i, a)]; }
  void row(std::int64_t i, double* out) const {
    for (std::int64_t a = 0; a < d_; ++a) out[a] = coord(i, a);
  }
  // input = center + scale * store coordinates
  const std::vector<double>& center() const { return center_; }
  double scale() const { return scale_; }

 private:
  std::size_t index(std::int64_t i, std::int64_t a) const {
    return static_cast<std::size_t>((i / kLanes) * d_ * kLanes + a * kLanes + i % kLanes);
  }
  template <class T>
  void frame(const T* X, bool scaled);
  template <class T>
  void require_distinct(const T* X) const;

  std::int64_t n_, d_, nb_;
  std::vector<double> center_;
  double scale_ = 1.0;
  std::vector<StoreFloat> data_;
};

template <class T>
ItemStore::ItemStore(const T* X, std::int64_t n, std::int64_t d, bool scaled, bool distinct)
    : n_(n), d_(d), nb_((n + kLanes - 1) / kLanes) {
  require_at_least<std::int64_t>(n, 1, "X");
  require_at_least<std::int64_t>(d, 1, "X");
  require_allocation(double(nb_) * double(kLanes) * double(d) * sizeof(StoreFloat), "X");
  data_.assign(static_cast<std::size_t>(nb_ * d * kLanes), StoreFloat(0));
  frame(X, scaled);
  const double inv = 1.0 / scale_;  // a power of two: exact
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t a = 0; a < d; ++a)
      data_[index(i, a)] = static_cast<StoreFloat>((double(X[i * d + a]) - center_[a]) * inv);
  if (distinct) require_distinct(X);
}

// center = the midpoint of each coordinate's range; scale = the smallest power of two at
// least the largest half-range (1 when all items coincide, or without `scaled`).
template <class T>
void ItemStore::frame(const T* X, bool scaled) {
  std::vector<double> lo(X, X + d_), hi(X, X + d_);
  for (std::int64_t i = 1; i < n_; ++i)
    for (std::int64_t a = 0; a < d_; ++a) {
      lo[a] = std::min(lo[a], double(X[i * d_ + a]));
      hi[a] = std::max(hi[a], double(X[i * d_ + a]));
    }
  center_.resize(static_cast<std::size_t>(d_));
  double half = 0.0;
  for (std::int64_t a = 0; a < d_; ++a) {
    center_[a] = 0.5 * lo[a] + 0.5 * hi[a];  // no overflow for any finite range
    half = std::max(half, 0.5 * hi[a] - 0.5 * lo[a]);
  }
  if (scaled && half > 0.0) {
    int e;
    std::frexp(half, &e);  // half = f 2^e, f in [0.5, 1)
    scale_ = std::ldexp(1.0, e);
  }
}

// Items that coincide in single precision are indistinguishable to every search: the
// first such pair (by its first item) is reported.
template <class T>
void ItemStore::require_distinct(const T* X) const {
  std::vector<std::pair<std::uint64_t, std::int64_t>> hashed(static_cast<std::size_t>(n_));
  for (std::int64_t i = 0; i < n_; ++i) {
    std::uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (std::int64_t a = 0; a < d_; ++a) {
      const float v = data_[index(i, a)] + 0.0f;  // -0 and +0 alike
      std::uint32_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      h = (h ^ bits) * 0x100000001B3ULL;
      h ^= h >> 29;
    }
    hashed[static_cast<std::size_t>(i)] = {h, i};
  }
  std::sort(hashed.begin(), hashed.end());
  auto same = [&](std::int64_t i, std::int64_t j) {
    for (std::int64_t a = 0; a < d_; ++a)
      if (data_[index(i, a)] != data_[index(j, a)]) return false;
    return true;
  };
  std::int64_t bi = n_, bj = n_;  // the reported pair
  for (std::size_t s = 0; s < hashed.size(); ++s)
    for (std::size_t t = s + 1; t < hashed.size() && hashed[t].first == hashed[s].first; ++t) {
      const std::int64_t i = std::min(hashed[s].second, hashed[t].second);
      const std::int64_t j = std::max(hashed[s].second, hashed[t].second);
      if ((i < bi || (i == bi && j < bj)) && same(i, j)) {
        bi = i;
        bj = j;
      }
    }
  if (bi == n_) return;
  const bool exact = std::equal(X + bi * d_, X + (bi + 1) * d_, X + bj * d_);
  throw std::invalid_argument(
      "X: rows " + std::to_string(bi) + " and " + std::to_string(bj) + " are identical" +
      (exact ? "" : " in single precision (the search's storage, after centring and scaling)") +
      "; duplicate items are indistinguishable to any comparison oracle, keep one row per "
      "distinct item");
}

}  // namespace tripletsearch
