"""Helpers of the sampler's tests (simulated people: tripletsearch.people.TripletPeople)."""

import numpy as np


def in_step(s, twin, people, steps):
    """Ask both samplers ``steps`` times: the same queries; both told the same answers."""
    for _ in range(steps):
        q = s.ask()
        np.testing.assert_array_equal(twin.ask(), q)
        rows = people.answer(q)
        s.tell(rows)
        twin.tell(rows)
