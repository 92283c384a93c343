// The update of the user hypotheses' weights (discrete/hypotheses.hpp), one entry point that
// runs the version of the active ISA (dispatch.hpp).
#pragma once

#include "dispatch.hpp"
#include "hypotheses_avx2.hpp"
#include "hypotheses_portable.hpp"

namespace tripletsearch {
namespace simd {

// One block's answer: wh *= (eps / k + (1 - eps) P(choice | item, gamma_g)) * scale for
// every hypothesis h = (gamma grid index g, lapse value eps), the item weights w = their
// sums over h (in order), and each hypothesis' block mass added to hacc. D: the squared
// distances of the k shown items to the block's items (k x kLanes); `choice`: the shown
// position picked (0..k-1). Every grid power from three square roots per item and shown
// item (for pairs: of the farther item's ratio only, the closer one's being 1).
inline void hypothesis_update(const HypothesisBlock& hb, const double* D, int k, int choice,
                              double scale) {
  TS_SIMD_DISPATCH(hypothesis_update(hb, D, k, choice, scale));
}

}  // namespace simd
}  // namespace tripletsearch
