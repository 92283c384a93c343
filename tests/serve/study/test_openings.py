"""A study's first screens (issue 40): every method opens by one rule from the session's seed.

40 pictures in two dimensions, 4 a screen, both methods: through the API, each search's
first screen is the uniform rule's for its seed (the library's twin says which), whatever
its method; a participant's searches open on screens of their own; the two methods' first
screens come from one distribution. One screen per search (``max_queries = 1``): fast.
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import combinations

import numpy as np
import pytest
from scipy import stats

from serve.helpers import in_process, take_part
from tripletsearch._reference.discrete import uniform_opening
from tripletsearch._validation import seed_from
from tripletsearch.serve import create_app
from tripletsearch.serve.modes.base import Settings
from tripletsearch.serve.modes.find import FindMode, opening_of
from tripletsearch.serve.store import Store
from tripletsearch.serve.study import load_study

N, K = 40, 4


def study_file(tmp_path, methods, seed=1, targets=2):
    """A study of 40 pictures (d = 2), one screen per search."""
    root = tmp_path / "pictures"
    if not root.exists():
        root.mkdir()
        np.save(root / "embedding.npy", np.random.default_rng(4).normal(size=(N, 2)))
        names = "\n".join(f"picture {i}" for i in range(N))
        (root / "items.csv").write_text("name\n" + names + "\n")
    path = tmp_path / f"study-{'-'.join(methods)}.toml"
    path.write_text(
        f'catalogue = "pictures"\nmethods = {list(methods)!r}\ntargets = {targets}\n'
        f"n_choices = {K}\nseed = {seed}\nmax_queries = 1\n".replace("'", '"')
    )
    return load_study(path)


def found_if_shown(reply: dict) -> dict:
    """The target when the screen shows it ("found"), else the first item."""
    ids = [int(it["id"]) for it in reply["screen"]["items"]]
    target = int(reply["target"]["id"])
    found = target in ids
    choice = ids.index(target) if found else 0
    return {"screen": 0, "choice": choice, "found": found, "slot": reply["slot"]}


def run(tmp_path, study, people, name):
    """``people`` participants each open every search and answer its one screen; the
    sessions' rows (participant, slot, method, seed, first screen) as stored."""
    db = f"sqlite:///{tmp_path / (name + '.sqlite')}"
    with in_process(create_app(study.catalogue, db, study=study)) as c:
        for _ in range(people):
            seen: list = []
            take_part(c, body=found_if_shown, seen=seen)
            assert [reply["screen"]["number"] for reply, _, _ in seen] == [0] * len(study.targets)
    store = Store(db)
    rows = []
    for s in store.iter_sessions():
        if s.participant is None:
            continue
        shown = store.screen(s.id, 0)[1]["shown"]
        rows.append((s.participant, s.slot, s.params, int(s.seed), tuple(shown)))
    return rows


@pytest.fixture(scope="module")
def searches(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("openings")
    study = study_file(tmp, ["gamma-ckl", "gauss"])
    return run(tmp, study, 60, "both")


def test_every_first_screen_is_the_rule_for_its_seed(searches):
    """The first screen of each of the 120 searches is the shared rule's for the session's
    seed (the library's twin), gamma-CKLSearch's as GaussSearch's; recorded as "uniform"."""
    assert len(searches) == 120
    assert Counter(p["method"] for _, _, p, _, _ in searches) == {"gamma-ckl": 60, "gauss": 60}
    for _, _, params, seed, shown in searches:
        assert params["opening"] == "uniform"
        # the session's searcher is seeded by its stored seed as random_state
        assert list(shown) == uniform_opening(seed_from(seed), N, K).tolist()


def test_a_participants_searches_open_on_screens_of_their_own(searches):
    """No two searches of a participant open alike (the rule's chance: 1 in C(40, 4) =
    91,390 per pair), and every method's first screens are nearly all distinct: at least
    58 of its 60 (the chance of 3 coincidences or more among 1,770 pairs: below 1e-6)."""
    by_person: dict[str, list[frozenset]] = {}
    for person, _, _, _, shown in searches:
        by_person.setdefault(person, []).append(frozenset(shown))
    for screens in by_person.values():
        assert all(a != b for a, b in combinations(screens, 2))
    assert math.comb(N, K) == 91390
    for method in ("gamma-ckl", "gauss"):
        firsts = {frozenset(s) for _, _, p, _, s in searches if p["method"] == method}
        assert len(firsts) >= 58


def test_both_methods_first_screens_come_from_one_distribution(searches):
    """How often each picture is on a first screen: the same for both methods and uniform
    (chi-square tests, each at a false-alarm rate of 1e-4; 240 pictures a method)."""
    counts = {
        m: np.bincount(
            [i for _, _, p, _, s in searches if p["method"] == m for i in s], minlength=N
        )
        for m in ("gamma-ckl", "gauss")
    }
    table = np.array([counts["gamma-ckl"], counts["gauss"]])
    assert stats.chi2_contingency(table)[1] > 1e-4
    for c in counts.values():  # exchangeable counts of fixed sum: chi-square, N - 1 df
        p = K / N
        stat = float(((c - 60 * p) ** 2).sum() / (60 * p * (1 - p) * N / (N - 1)))
        assert stats.chi2.sf(stat, N - 1) > 1e-4, c


def test_one_seed_opens_either_method_on_one_screen(tmp_path):
    """Two studies of one seed, the methods' places swapped: participant p's search s has
    the same seed and target in both, the other method, and the same first screen."""
    a = run(tmp_path, study_file(tmp_path, ["gamma-ckl", "gauss"], seed=5), 6, "a")
    b = run(tmp_path, study_file(tmp_path, ["gauss", "gamma-ckl"], seed=5), 6, "b")
    first = {}
    for _, _, params, seed, shown in a:
        first[seed] = (params["method"], shown)
    assert len(first) == 12
    for _, _, params, seed, shown in b:
        method, other = first[seed]
        assert method != params["method"] and shown == other


def test_a_stored_session_keeps_its_opening(tmp_path):
    """A session's params record its opening; params stored before they did (with the
    selection the library chose, without an opening) replay 0.3.0's "random"."""
    study = study_file(tmp_path, ["gamma-ckl", "gauss"])
    assert opening_of({"method": "gauss"}) == "uniform"  # new: a mode's or a study's
    assert opening_of({"method": "gauss", "selection": "weighted"}) == "random"
    assert opening_of({"method": "gauss", "selection": "weighted", "opening": "uniform"}) == (
        "uniform"
    )
    mode = FindMode(study.catalogue, Settings(gamma=study.gamma))
    new = mode.searcher(K, study.params("gauss"), 3)
    assert new.settings.opening == "uniform"
    assert mode.started(new, study.params("gauss"))["opening"] == "uniform"
    old = {**study.params("gamma-ckl"), "selection": "infogain"}
    assert mode.searcher(K, old, 3).settings.opening == "random"
    assert mode.searcher(K, {**old, "opening": "principal"}, 3).settings.opening == "principal"
