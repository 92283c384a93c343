"""Pure-Python twin of the core's random streams, bit for bit.

Twin of ``cpp/include/tripletsearch/core/rng.hpp`` (splitmix64 seeding, xoshiro256**, Lemire's
unbiased bounded integers) and ``core/seeding.hpp`` (the purposes of the streams).
"""

from __future__ import annotations

import enum
import math

__all__ = ["Rng", "epoch_permutation", "child_seed", "Purpose"]

_MASK = (1 << 64) - 1


def _splitmix64(state: int) -> tuple[int, int]:
    state = (state + 0x9E3779B97F4A7C15) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return state, z ^ (z >> 31)


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & _MASK


class Rng:
    """Stream ``stream`` of the generator family seeded by ``seed``."""

    def __init__(self, seed: int, stream: int):
        sm = (seed ^ ((0xD1B54A32D192ED03 * (stream + 1)) & _MASK)) & _MASK
        sm, _ = _splitmix64(sm)
        self.s = []
        for _ in range(4):
            sm, z = _splitmix64(sm)
            self.s.append(z)
        self._spare: float | None = None  # the polar method's cached second variate

    def next_u64(self) -> int:
        s = self.s
        result = (_rotl((s[1] * 5) & _MASK, 7) * 9) & _MASK
        t = (s[1] << 17) & _MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return result

    def uniform(self) -> float:
        """Uniform on [0, 1) with 53 random bits."""
        return (self.next_u64() >> 11) * 2.0**-53

    def normal(self) -> float:
        """Standard normal by the Marsaglia polar method (caches the second variate)."""
        if self._spare is not None:
            v, self._spare = self._spare, None
            return v
        while True:
            u = 2.0 * self.uniform() - 1.0
            v = 2.0 * self.uniform() - 1.0
            s = u * u + v * v
            if 0.0 < s < 1.0:
                break
        f = math.sqrt(-2.0 * math.log(s) / s)
        self._spare = v * f
        return u * f

    def below(self, n: int) -> int:
        """Uniform integer in [0, n)."""
        m = self.next_u64() * n
        low = m & _MASK
        if low < n:
            threshold = ((1 << 64) - n) % n
            while low < threshold:
                m = self.next_u64() * n
                low = m & _MASK
        return m >> 64


def epoch_permutation(seed: int, epoch: int, m: int) -> list[int]:
    """The trainer's Fisher-Yates order of rows [0, m) for one epoch."""
    perm = list(range(m))
    rng = Rng(seed, epoch)
    for k in range(m - 1, 0, -1):
        j = rng.below(k + 1)
        perm[k], perm[j] = perm[j], perm[k]
    return perm


class Purpose(enum.IntEnum):
    """The salts of the core's random streams (``seeding.hpp``)."""

    SearchQuery = 0
    PosteriorDraws = 0x9E3779B97F4A7C15
    SimDiscreteRun = 0x5851F42D4C957F2D
    SimContinuousRun = 0x2545F4914F6CDD1D
    SimUser = 0x3C6EF372FE94F82B
    ParticleInit = 0xD2B74407B1CE6E93
    ResampleMove = 0x632BE59BD9B4E019
    QueryDraws = 0x94D049BB133111EB
    HyptestStage = 0xA24BAED4963EE407
    Opening = 0xBF58476D1CE4E5B9


def stream(seed: int, purpose: Purpose, index: int) -> Rng:
    """Stream ``index`` of ``purpose`` under ``seed``."""
    return Rng(seed ^ int(purpose), index)


def child_seed(seed: int, purpose: Purpose, index: int) -> int:
    """A child seed per index: splitmix64(seed ^ salt) + index (mod 2^64)."""
    _, z = _splitmix64(seed ^ int(purpose))
    return (z + index) & _MASK
