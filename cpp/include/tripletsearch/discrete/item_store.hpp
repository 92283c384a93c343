// The database of the database search: n items of dimension d in simd/block.hpp's layout
// (blocks of kLanes items, single precision), shared by every searcher of one catalogue.
//
// Before narrowing to single precision the items are centred (each coordinate on the
// midpoint of its range) and, for a scale-free user model, divided by the power of two
// that brings every coordinate into [-1, 1]: a catalogue far from the origin or at any
// magnitude keeps its distances to float precision. Power-of-two scaling and midpoints
// are exact and independent of summation order, so the NumPy twin stores the same
// floats. Distances in the store are the input's divided by scale()^2.
//
// A store can be written to a file (save) and mapped from it read-only (map): the worker
// processes of one server then share its pages instead of holding a copy each. The file: a
// header (magic, version, lanes, n, d, scale, the data's offset and size), the centre, and
// the blocks at a page boundary, in this machine's byte order.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define TS_STORE_MMAP 1
#endif

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
  ItemStore(const ItemStore&) = delete;  // data_ may point into owned_
  ItemStore& operator=(const ItemStore&) = delete;

  // Writes the store to `path` (see the top of this file); std::runtime_error on failure.
  void save(const std::string& path) const;
  // The store of a file that save() wrote, mapped read-only (read into memory where the
  // system cannot map files); std::invalid_argument naming the file when it is not one.
  static std::shared_ptr<ItemStore> map(const std::string& path);
  // Whether the items live in a mapped file.
  bool mapped() const { return mapping_ != nullptr; }

  std::int64_t n() const { return n_; }
  std::int64_t d() const { return d_; }
  std::int64_t blocks() const { return nb_; }
  const StoreFloat* block(std::int64_t b) const { return data_ + b * d_ * kLanes; }
  double coord(std::int64_t i, std::int64_t a) const { return data_[index(i, a)]; }
  void row(std::int64_t i, double* out) const {
    for (std::int64_t a = 0; a < d_; ++a) out[a] = coord(i, a);
  }
  // input = center + scale * store coordinates
  const std::vector<double>& center() const { return center_; }
  double scale() const { return scale_; }

 private:
  ItemStore() : n_(0), d_(0), nb_(0) {}
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
  std::vector<StoreFloat> owned_;        // the items, unless mapped
  std::shared_ptr<const void> mapping_;  // the mapped file (unmapped with the last owner)
  const StoreFloat* data_ = nullptr;     // owned_ or the mapped file's blocks
};

template <class T>
ItemStore::ItemStore(const T* X, std::int64_t n, std::int64_t d, bool scaled, bool distinct)
    : n_(n), d_(d), nb_((n + kLanes - 1) / kLanes) {
  require_at_least<std::int64_t>(n, 1, "X");
  require_at_least<std::int64_t>(d, 1, "X");
  require_allocation(double(nb_) * double(kLanes) * double(d) * sizeof(StoreFloat), "X");
  owned_.assign(static_cast<std::size_t>(nb_ * d * kLanes), StoreFloat(0));
  data_ = owned_.data();
  frame(X, scaled);
  const double inv = 1.0 / scale_;  // a power of two: exact
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t a = 0; a < d; ++a)
      owned_[index(i, a)] = static_cast<StoreFloat>((double(X[i * d + a]) - center_[a]) * inv);
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

namespace detail {

struct StoreHeader {
  char magic[8];  // "TSSTORE" and a zero
  std::uint32_t version, lanes;
  std::int64_t n, d;
  double scale;
  std::uint64_t data_offset, data_bytes;
};
constexpr char kStoreMagic[8] = {'T', 'S', 'S', 'T', 'O', 'R', 'E', '\0'};
constexpr std::uint32_t kStoreVersion = 1;
constexpr std::uint64_t kStorePage = 4096;

inline std::uint64_t store_data_offset(std::int64_t d) {
  const std::uint64_t head = sizeof(StoreHeader) + sizeof(double) * static_cast<std::uint64_t>(d);
  return (head + kStorePage - 1) / kStorePage * kStorePage;
}

}  // namespace detail

inline void ItemStore::save(const std::string& path) const {
  detail::StoreHeader h{};
  std::memcpy(h.magic, detail::kStoreMagic, sizeof h.magic);
  h.version = detail::kStoreVersion;
  h.lanes = static_cast<std::uint32_t>(kLanes);
  h.n = n_;
  h.d = d_;
  h.scale = scale_;
  h.data_offset = detail::store_data_offset(d_);
  h.data_bytes = static_cast<std::uint64_t>(nb_ * d_ * kLanes) * sizeof(StoreFloat);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw std::runtime_error("store: cannot write " + path);
  f.write(reinterpret_cast<const char*>(&h), sizeof h);
  f.write(reinterpret_cast<const char*>(center_.data()),
          static_cast<std::streamsize>(sizeof(double) * center_.size()));
  const std::vector<char> pad(h.data_offset - sizeof h - sizeof(double) * center_.size(), 0);
  f.write(pad.data(), static_cast<std::streamsize>(pad.size()));
  f.write(reinterpret_cast<const char*>(data_), static_cast<std::streamsize>(h.data_bytes));
  f.flush();
  if (!f) throw std::runtime_error("store: writing " + path + " failed");
}

inline std::shared_ptr<ItemStore> ItemStore::map(const std::string& path) {
  auto bad = [&](const std::string& why) {
    return std::invalid_argument("store: " + path + " is not an item store of this library (" +
                                 why + ")");
  };
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) throw std::invalid_argument("store: cannot open " + path);
  const auto size = static_cast<std::uint64_t>(f.tellg());
  detail::StoreHeader h{};
  f.seekg(0);
  if (size < sizeof h || !f.read(reinterpret_cast<char*>(&h), sizeof h)) throw bad("too short");
  if (std::memcmp(h.magic, detail::kStoreMagic, sizeof h.magic) != 0) throw bad("no header");
  if (h.version != detail::kStoreVersion || h.lanes != static_cast<std::uint32_t>(kLanes))
    throw bad("another version");
  if (h.n < 1 || h.d < 1 || h.d > (std::int64_t(1) << 20) || !(h.scale > 0.0))
    throw bad("its sizes");
  const std::int64_t nb = (h.n + kLanes - 1) / kLanes;
  const std::uint64_t bytes = static_cast<std::uint64_t>(nb * h.d * kLanes) * sizeof(StoreFloat);
  if (h.data_offset != detail::store_data_offset(h.d) || h.data_bytes != bytes ||
      size < h.data_offset + bytes)
    throw bad("truncated");
  std::shared_ptr<ItemStore> s(new ItemStore());
  s->n_ = h.n;
  s->d_ = h.d;
  s->nb_ = nb;
  s->scale_ = h.scale;
  s->center_.resize(static_cast<std::size_t>(h.d));
  if (!f.read(reinterpret_cast<char*>(s->center_.data()),
              static_cast<std::streamsize>(sizeof(double) * s->center_.size())))
    throw bad("truncated");
#ifdef TS_STORE_MMAP
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd >= 0) {
    const std::size_t len = static_cast<std::size_t>(h.data_offset + bytes);
    void* p = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    if (p != MAP_FAILED) {
      s->mapping_ = std::shared_ptr<const void>(
          p, [len](const void* q) { ::munmap(const_cast<void*>(q), len); });
      s->data_ = reinterpret_cast<const StoreFloat*>(static_cast<const char*>(p) + h.data_offset);
      return s;
    }
  }
#endif
  require_allocation(double(bytes), "store");
  s->owned_.resize(static_cast<std::size_t>(bytes / sizeof(StoreFloat)));
  f.seekg(static_cast<std::streamoff>(h.data_offset));
  if (!f.read(reinterpret_cast<char*>(s->owned_.data()), static_cast<std::streamsize>(bytes)))
    throw bad("truncated");
  s->data_ = s->owned_.data();
  return s;
}

}  // namespace tripletsearch
