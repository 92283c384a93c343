"""Simulated people for the sampler's tests (a module with a unique name: tests/conftest.py
is the suite's one conftest)."""

import numpy as np

import tripletsearch as ts


class People:
    """Simulated people answering queries from a ground-truth embedding (gamma-CKL)."""

    def __init__(self, n, dim, gamma=4.0, seed=0):
        self.X = np.random.default_rng(seed).normal(size=(n, dim))
        self.oracle = ts.GammaCKL(gamma)
        self.rng = np.random.default_rng(seed + 1)

    def answer(self, queries):
        """Rows (head, closer, farther) for pair queries (head, a, b)."""
        return self.oracle.sample(self.X, queries, random_state=self.rng)

    def run(self, sampler, steps, n=1):
        """steps rounds of ask(n) + tell; returns the queries asked, (steps * n, 3)."""
        asked = []
        for _ in range(steps):
            q = sampler.ask(n)
            asked.append(q)
            sampler.tell(self.answer(q))
        return np.concatenate(asked) if asked else np.empty((0, 3), dtype=np.int64)


def in_step(s, twin, people, steps):
    """Ask both samplers ``steps`` times: the same queries; both told the same answers."""
    for _ in range(steps):
        q = s.ask()
        np.testing.assert_array_equal(twin.ask(), q)
        rows = people.answer(q)
        s.tell(rows)
        twin.tell(rows)
