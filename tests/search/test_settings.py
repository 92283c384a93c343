"""One settings object per search family: checked and normalized once, the source of the
native configuration, of a session's state and of a simulation's chunks."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest

import tripletsearch as ts
from tripletsearch.continuous import ContinuousSettings
from tripletsearch.discrete import DiscreteSettings


def test_discrete_settings_normalize_round_trip_and_give_one_native_config():
    d = DiscreteSettings(method="gauss", gamma="auto", lapse="auto", n_choices=4).resolve(10)
    # gamma and lapse are gamma-CKLSearch's: "auto" stands for the unused defaults
    assert (d.gamma, d.lapse, d.selection) == (3.0, 0.0, "weighted")
    assert DiscreteSettings.from_dict(d.to_dict()) == d
    assert d.to_native() == DiscreteSettings(**d.to_dict()).to_native()
    assert DiscreteSettings(n_choices=np.int64(3)).n_choices == 3  # plain Python values
    assert type(DiscreteSettings(r=2).r) is float
    assert DiscreteSettings().resolve(100_000).selection == "infogain"
    assert DiscreteSettings().resolve(100_001).selection == "weighted"
    with pytest.raises(ValueError, match="selection: 'auto' is decided by resolve"):
        DiscreteSettings().to_native()
    # a state written before the lapse rate: none
    state = {k: v for k, v in d.to_dict().items() if k != "lapse"}
    assert DiscreteSettings.from_dict(state).lapse == 0.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.gamma = 2.0  # type: ignore[misc]


def test_continuous_settings_resolve_the_cores_defaults():
    c = ContinuousSettings(2, "auto", bounds=([0, 0], [2, 1]), lapse="auto")
    assert c.bounds == ((0.0, 0.0), (2.0, 1.0))
    assert ContinuousSettings.from_dict(c.to_dict()) == c
    assert c.to_dict()["bounds"] == [[0.0, 0.0], [2.0, 1.0]]
    assert ContinuousSettings(3, 2.0).to_dict()["bounds"] == [-1.0, 1.0]  # a cube
    r = c.resolve()
    assert (r.n_particles, r.stage_cap) == (1024, 60)
    assert ContinuousSettings(4, 3.0, method="posterior").resolve().n_particles == 4096
    hyp = ContinuousSettings(2, 3.0, method="hypothesis-test").resolve()
    assert hyp.n_particles is None  # the hypothesis test has none
    assert hyp.to_native().n_obs > 0 and ContinuousSettings(2, 3.0).to_native().n_obs == 0


@pytest.mark.parametrize(
    "make",
    [
        lambda X: ts.DiscreteSearch(X, gamma="auto", lapse=0.1, n_choices=3, random_state=2),
        lambda X: ts.DiscreteSearch(X, method="gauss", sigma=0.3, random_state=2),
        lambda X: ts.ContinuousSearch(2, 3.0, bounds=([0, 0], [4, 2]), random_state=2),
        lambda X: ts.ContinuousSearch(2, 3.0, method="hypothesis-test", random_state=2),
    ],
)
def test_a_session_is_its_settings(make):
    """A session's native configuration is its settings'; its state holds them; a session
    restored from the state has equal settings and an equal native configuration, both of
    which pickle (what a worker or another process receives)."""
    X = np.random.default_rng(0).uniform(-1, 1, size=(60, 2))
    s = make(X)
    assert s.settings.to_native() == s._config
    state = s.to_dict()
    assert {k: state[k] for k in s.settings.to_dict()} == s.settings.to_dict()
    back = (
        type(s).from_dict(state, X)
        if isinstance(s, ts.DiscreteSearch)
        else type(s).from_dict(state)
    )
    assert back.settings == s.settings and back._config == s._config
    assert pickle.loads(pickle.dumps(s.settings)) == s.settings
    assert pickle.loads(pickle.dumps(s._config)) == s._config
