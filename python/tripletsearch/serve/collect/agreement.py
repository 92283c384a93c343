"""The agreement rule: whether a participant's picks agree with everyone else's.

:func:`score_agreement` fits an embedding without each fold of participants and scores
their picks against it (a one-sided test against chance, each pick weighed by how sure the
embedding is); the refitter runs it at each round (:func:`refresh_agreement`) and keeps the
scores in the database (:func:`read_agreement`). :func:`collect_flags` is every
participant's flags: their checks (:func:`~.quality.checks`) with these scores.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ...collect import refit_due
from ...embedding import Embedding
from ...utils import derived_seed
from .. import clock
from ..store import Store
from .quality import (
    AGREEMENT_FOLDS,
    AGREEMENT_ROWS_PER_ITEM,
    AGREEMENT_SEED,
    EXPORT_KINDS,
    MAX_WEIGHT,
    agreement_flag,
    agreement_key,
    checks,
    read_agreement,
    triplet_rows,
)
from .rules import collect_sessions, is_counted
from .screens import CHECK_RULES
from .trial import answer_picks, first_pick_probs, pick_steps

__all__ = ["score_agreement", "agreement_scores", "refresh_agreement", "collect_flags"]


def _picks(history: list[dict]) -> list[tuple[dict, int]]:
    """The picks the agreement rule scores: (the choice's query, position picked; -1: a skip).

    The counted answers (:data:`EXPORT_KINDS`); not the attention checks answered (which a
    script recognises), the repeats answered (a second pick of the same query) nor, since
    the check rules 4, the gold queries answered (known answers a script may have leaked:
    the gold rule judges them). Ranked picks are each a choice among the candidates left
    (:func:`~.trial.pick_steps`). A skip on any screen is a pick that does not agree (check
    rules 3; a skip of r ranked picks, r of them since rules 4): a script cannot stay under
    :data:`AGREEMENT_AFTER` picks, nor skip what it cannot fake.
    """
    out = []
    for h in history:
        q = h["query"]
        if not is_counted(h):
            continue
        if h["choice"] is None:
            out.extend(pick_steps(q, None))
        elif q.get("kind") in EXPORT_KINDS:
            out.extend(pick_steps(q, answer_picks(h)))
    return out


def _agree(emb: Any, picks: list[tuple[dict, int]]) -> dict[str, Any]:
    """How ``picks`` agree with the fitted embedding ``emb``: counts and the weighted test.

    Each pick agrees when it is the alternative the embedding makes likeliest (ties: the
    first); its weight is how sure the embedding is, the log-odds of that alternative
    against the average other, ``w = log(p_max (s - 1) / (1 - p_max))`` among ``s``
    alternatives, capped at :data:`MAX_WEIGHT` (a near-tie weighs nearly nothing; the most
    powerful weights against a person who answers as the embedding predicts). A pick at
    random agrees with probability 1/s whatever the weights, so ``S = sum w (agreed -
    1/s)`` has mean 0 and variance ``sum w^2 (1/s)(1 - 1/s)`` under chance; ``p_value``
    is the one-sided normal tail of ``S`` over its standard deviation. ``chance``: the
    mean of 1/s.
    """
    if not picks:
        return {"agreed": 0, "answers": 0, "chance": 0.5, "z": None, "p_value": None}
    probs = first_pick_probs(emb, [q for q, _ in picks])
    s = np.array([len(p) for p in probs], dtype=np.float64)
    best = np.array([int(np.argmax(p)) for p in probs])
    agreed = (best == np.array([c for _, c in picks])).astype(np.float64)
    # (a skipped attention check: the head among its candidates, as sure as can be)
    top = np.array([p.max() for p in probs])
    top = np.clip(np.nan_to_num(top, nan=1.0), 1.0 / s, 1.0 - 1e-12)
    w = np.minimum(np.log(top * (s - 1) / (1.0 - top)), MAX_WEIGHT)
    chance = 1.0 / s
    var = float(np.sum(w**2 * chance * (1.0 - chance)))
    z = float(np.sum(w * (agreed - chance)) / math.sqrt(var)) if var > 0 else None
    p = None if z is None else 0.5 * math.erfc(z / math.sqrt(2.0))
    return {
        "agreed": int(agreed.sum()), "answers": len(picks), "chance": float(chance.mean()),
        "z": None if z is None else round(z, 4), "p_value": p,
    }  # fmt: skip


def score_agreement(
    train: list[tuple[str, list[dict]]],
    judged: list[tuple[str, list[dict]]],
    n_items: int,
    dim: int,
    seed: int = 0,
    model: str = "gamma-ckl",
) -> dict[str, dict]:
    """How each ``judged`` participant's picks agree with everyone else's answers.

    ``train`` and ``judged``: (participant or session id, answered screens). The
    participants of both are split into :data:`AGREEMENT_FOLDS` folds (one per
    participant when fewer), in a seeded order; per fold an embedding (``model``, ``dim``)
    is fitted to the counted answers (:data:`EXPORT_KINDS`) of the ``train`` participants
    of the other folds, and each ``judged`` participant of the fold is scored by it: their
    picks of the candidate it makes likeliest, and a one-sided test against chance (1/k)
    that weighs each pick by how sure the embedding is (:func:`_agree`: a script cannot
    gain by the near-ties, an honest person is judged mostly by the clear queries). A fold
    whose others give fewer than :data:`AGREEMENT_ROWS_PER_ITEM` triplets per item scores
    no one (``p_value`` None).

    Returns ``{id: {"agreed", "answers", "chance", "z", "p_value", "rows"}}`` (``rows``:
    the triplets the participant's embedding was fitted to).
    """
    ids = sorted({i for i, _ in train} | {i for i, _ in judged})
    if not ids:
        return {}
    order = np.random.default_rng(derived_seed(seed, AGREEMENT_SEED)).permutation(len(ids))
    folds = min(AGREEMENT_FOLDS, len(ids))
    fold_of = {ids[int(j)]: r % folds for r, j in enumerate(order)}
    rows_of = {i: triplet_rows(h, EXPORT_KINDS)[0] for i, h in train}
    out: dict[str, dict] = {}
    for f in range(folds):
        mine = [(i, h) for i, h in judged if fold_of[i] == f]
        if not mine:
            continue
        rows = [r for i, got in rows_of.items() if fold_of[i] != f for r in got]
        emb = None
        if len(rows) >= AGREEMENT_ROWS_PER_ITEM * n_items:
            T = np.array(rows, dtype=np.int64)
            fit_seed = derived_seed(seed, AGREEMENT_SEED, f, len(T))
            emb = Embedding(model, dim, n_items=n_items, random_state=fit_seed, n_jobs=1)
            emb.fit(T)
        for i, h in mine:
            picks = _picks(h)
            if emb is None:
                chance = float(np.mean([1 / len(q["candidates"]) for q, _ in picks or []] or 0.5))
                rec = {
                    "agreed": None, "answers": len(picks), "chance": chance, "z": None,
                    "p_value": None,
                }  # fmt: skip
            else:
                rec = _agree(emb, picks)
            out[i] = {**rec, "rows": len(rows)}
    return out


def agreement_scores(
    pool: list[tuple[str, list[dict]]],
    n_items: int,
    dim: int,
    seed: int = 0,
    judged: list[tuple[str, list[dict]]] | None = None,
) -> dict[str, dict]:
    """:func:`score_agreement` in two passes: the second trained without those the first flags.

    ``pool``: the participants to score (``judged``: other histories of them to score,
    e.g. cut short), each scored first by embeddings fitted to the others of ``pool``,
    then by embeddings fitted to the others the first pass did not flag (a script's random
    answers blur the embedding that judges everyone else); where those are too few to fit
    (:data:`AGREEMENT_ROWS_PER_ITEM`), the first pass's score stands.
    """
    first = score_agreement(pool, pool, n_items, dim, seed)
    keep = [(i, h) for i, h in pool if agreement_flag(first.get(i)) is None]
    if len(keep) == len(pool) and judged is None:
        return first
    second = score_agreement(keep, pool if judged is None else judged, n_items, dim, seed)
    if judged is not None:  # (cut short: the first pass's scores are of the whole)
        first = score_agreement(pool, judged, n_items, dim, seed)
    # where the second pass's others are too few to fit, the first pass's score stands
    return {
        i: rec if rec["p_value"] is not None else first.get(i, rec) for i, rec in second.items()
    }


def refresh_agreement(
    store: Store,
    config: Any,
    answered: dict | None = None,
    *,
    force: bool = False,
    fast_server_ms: float | None = None,
) -> bool:
    """Score every participant's agreement again when the answers grew; whether it did.

    Run by the refitter at each round (:func:`~.refitter.refit_once`): when the counted
    triplets grew by the samplers' refit rule since the last scores (10 % and 50), or the
    rules' version changed, every participant not flagged by another rule is scored by
    :func:`agreement_scores`, on embeddings fitted to those participants' answers (the
    folds but their own; in a second pass, without those the first pass flagged: scores
    computed afresh at each round from the same answers, never from an earlier round's
    flags), and the scores are kept in ``ts_meta`` (:func:`agreement_key`) with the
    rules' version, the triplets and when. ``fast_server_ms``: the server's clock check
    (:func:`checks`; None: as the server recorded it, :func:`~..clock.fast_server_ms`).
    """
    fp = config.fingerprint
    fast_server_ms = clock.bound(store, fp, fast_server_ms)
    by_session = store.all_answers() if answered is None else answered
    last = store.get_meta(agreement_key(fp)) or {}
    judged = [
        (s.id, h)
        for s in collect_sessions(store, fp)
        for h in [by_session.get(s.id, [])]
        if not checks(h, fast_server_ms=fast_server_ms)["flagged"]
    ]
    n_rows = sum(len(triplet_rows(h, EXPORT_KINDS)[0]) for _, h in judged)
    stale = last.get("rules") != CHECK_RULES
    if not (force or stale or refit_due(n_rows, int(last.get("triplets", 0)), 0)):
        return False
    scores = agreement_scores(judged, config.catalogue.n_items, config.dim, config.seed)
    store.put_meta(
        agreement_key(fp),
        {"rules": CHECK_RULES, "triplets": n_rows, "created": time.time(), "sessions": scores},
    )
    return True


def collect_flags(
    store: Store, key: str, fast_server_ms: float | None = None
) -> dict[str, list[dict]]:
    """The flags of every participant of the collect of key ``key``, by participant id.

    ``fast_server_ms`` None: as its server recorded it (:func:`~..clock.fast_server_ms`).
    """
    answered, scores = store.all_answers(), read_agreement(store, key)
    fast_server_ms = clock.bound(store, key, fast_server_ms)
    out = {}
    for s in collect_sessions(store, key, withdrawn=True):
        history = answered.get(s.id, [])
        got = checks(history, scores.get(s.id), fast_server_ms=fast_server_ms)
        out[str(s.participant)] = got["flags"]
    return out
