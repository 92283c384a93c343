"""The collect's query mix: what each screen of a participant asks.

A participant's queries form one session of the collect mode (its adapter to the service,
:class:`~..modes.collect.CollectMode`). Each screen shows a head and ``k`` candidates;
the answer is the position of the candidate picked (or a skip). What screen ``number``
asks is decided by the collect file (:class:`QueryMix`):

* an **attention check** at the file's ``attention`` positions: the head itself is among
  the candidates (its position is the expected answer): a check for inattention, which a
  script can recognise (the head's id is among the candidates);
* a **gold** query, one per triplet ``(head, closer, farther)`` of the file's ``gold``, at
  positions drawn per participant: a known answer shown like any query (a pair), which a
  script cannot tell from the others;
* a **repeat** at the ``repeats`` positions: an earlier query of the participant again,
  its candidates in a new order (the agreement check); since the check rules of version 2,
  of a query asked at least 5 screens before that an embedding predicts clearly, and
  gold rows drawn from the file's as a pool per participant (:func:`gold_positions`;
  since version 3, from a pool at least :data:`GOLD_POOL_RATIO` times what one sees);
* a **burn-in** query (random) before ``burn_in``;
* a **test** query (random, kept apart: the held-out set) with probability
  ``test_share`` (of the collect's screen for one pick, else a random triplet: the
  held-out triplets of a collect of ranked picks or odd-one-out);
* else the participant's sampler's next query from its buffer in the database
  (``ts_collect_queries``, refilled by the refitter, never in a request); when the buffer
  is empty, a random one recorded as a **fallback** (fitted like a random query, counted
  per sampler: never silent).

No participant sees a query (head and candidate set) twice, but for the planned repeats;
on a catalogue so small that a participant has seen every query, the queries they have
seen least often come next, never the one just shown. The draws of screen ``number`` come
from the session's seed and ``number``, so a rebuilt session asks what the first one would
have. Every screen reads the sampler's buffer and claims a query the same way, a check,
test or burn-in screen leaving it free (:meth:`QueryMix._from_buffer`), and the
embedding that chooses repeats is kept between screens: check screens are served along the
adaptive screens' path, in their time.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Container
from typing import Any

import numpy as np

from ...collect import embedding_from_state
from .trial import CollectTrial, first_pick_probs, query_key

__all__ = [
    "MODE",
    "QueryMix",
    "Participant",
    "ANSWER_KINDS",
    "BUFFER_KINDS",
    "CHECK_RULES",
    "GOLD_SHOWN",
    "GOLD_POOL_RATIO",
    "gold_shown",
    "gold_positions",
]

#: The collect mode's name (:class:`~..modes.collect.CollectMode` is its adapter).
MODE = "collect"
# the kinds of query whose answers a sampler fits (attention checks, gold queries, repeats
# and the held-out test queries are kept apart): the participant's burn-in, a sampler's
# random query or its method's own ("active", "arr"), a fallback (the buffer empty);
# "adaptive": any sampler's query before 0.4.0; "random" also a fallback before 0.3.0
ANSWER_KINDS = ("burn-in", "random", "active", "arr", "fallback", "adaptive")
#: The kinds of a query a sampler's buffer gave (what its method asked).
BUFFER_KINDS = ("random", "active", "arr")
GOLD_SEED = 0x601D  # purpose of the draws of a participant's gold positions
# The version of the check rules on people, written here once (a participant's session
# keeps the one they enrolled under, ``params["checks"]``; flags are recomputed under the
# current one for collects under way, for analysis: a code shown stays shown):
#   1 (0.3.0): every repeat judged, no agreement rule, every gold row shown to everyone;
#   2: repeats of clear queries only, the agreement rule, GOLD_SHOWN gold rows drawn per
#      participant (POOLED_RULES);
#   3: a skip on any screen counts in the agreement rule as a pick that does not agree;
#      the gold pool at least GOLD_POOL_RATIO times what one participant sees (the file's
#      rows or ``gold_drawn`` clear queries of the embedding; GOLD_POOL_RULES); check
#      screens served along the adaptive screens' path;
#   4: the gold queries' answers no longer count in the agreement rule (a script that knew
#      leaked gold rows gained there what the gold rule takes from it: on 8-rank-2 grids,
#      whose random picks weigh little, it passed 5 times in 16); a skip of a screen of r
#      ranked picks counts r picks that do not agree.
CHECK_RULES = 4
POOLED_RULES, GOLD_POOL_RULES = 2, 3
# each participant meets GOLD_SHOWN gold rows at most, drawn per participant from a pool
# GOLD_POOL_RATIO times that (fewer from a smaller pool), and a repeat asks again a query
# asked at least REPEAT_GAP screens before whose majority answer an embedding predicts with
# at least REPEAT_CLEAR: the newest of the sampler with the most answers, once it has
# REPEAT_ROWS_PER_ITEM triplets per item
GOLD_SHOWN, GOLD_POOL_RATIO, REPEAT_GAP, REPEAT_CLEAR = 4, 4, 5, 0.95
REPEAT_ROWS_PER_ITEM = 10
# a catalogue with at most this many distinct queries has them listed when random draws
# keep finding queries the participant was asked (the least asked of them come next)
LISTED_QUERIES = 1 << 15


def gold_shown(pool: int) -> int:
    """The gold rows one participant meets (check rules 3) of a pool of ``pool`` rows.

    :data:`GOLD_SHOWN`, fewer when the pool is not :data:`GOLD_POOL_RATIO` times that.
    """
    return min(GOLD_SHOWN, pool // GOLD_POOL_RATIO)


def gold_positions(
    cfg: Any, seed: int, most: int, rules: int = 1
) -> dict[int, tuple[int, int, int]]:
    """Where a participant of seed ``seed`` meets the gold queries: position -> row.

    Drawn among their ``most`` positions that hold no attention check or repeat, each gold
    row once. By the check rules ``rules`` the participant enrolled under: 1, every row of
    the file's; from :data:`POOLED_RULES`, :data:`GOLD_SHOWN` of them drawn per participant
    (all of them when it has no more); from :data:`GOLD_POOL_RULES`, :func:`gold_shown` of
    the pool (``cfg.gold_pool``: the file's rows or those drawn from the embedding), so that
    enrolling again meets other rows, each as often as the pool's size says.
    """
    gold = tuple(getattr(cfg, "gold", ()))
    if rules >= GOLD_POOL_RULES:
        gold = tuple(getattr(cfg, "gold_pool", gold))
    if not gold:
        return {}
    free = [p for p in range(most) if p not in cfg.attention and p not in cfg.repeats]
    rng = np.random.default_rng([seed, GOLD_SEED])
    shown = gold_shown(len(gold)) if rules >= GOLD_POOL_RULES else GOLD_SHOWN
    if rules >= POOLED_RULES and len(gold) > shown:
        gold = tuple(gold[int(j)] for j in rng.choice(len(gold), size=shown, replace=False))
    picks = rng.choice(len(free), size=min(len(gold), len(free)), replace=False)
    return {int(free[int(i)]): tuple(gold[j]) for j, i in enumerate(picks)}


class Participant:
    """One participant's collect session: their sampler and the queries shown so far."""

    def __init__(self, sampler: str, participant: str, seed: int) -> None:
        self.sampler, self.participant, self.seed = sampler, participant, int(seed)
        self.shown: list[dict] = []  # the answered screens' queries, in order
        self.seen: set[tuple[int, frozenset]] = set()
        self.times: Counter = Counter()  # how often each (head, candidate set) was shown
        self.gold: dict[int, tuple[int, int, int]] = {}  # position -> gold row
        self.rules = 1  # the check rules' version the participant enrolled under
        self.preview = False  # the owner's preview: takes no query from the buffers

    def remember(self, query: dict) -> None:
        """One more query shown (answered), in order."""
        key = _key(query)
        self.shown.append(query)
        self.seen.add(key)
        self.times[key] += 1

    def refused(self, distinct: int) -> Container:
        """The queries (head, candidate set) not to ask next, of ``distinct`` in all.

        Those seen; once every query is seen (a small catalogue), those seen more often
        than the least seen, and the last one shown.
        """
        if len(self.seen) < distinct:
            return self.seen
        least = min(self.times.values())
        out = {q for q, t in self.times.items() if t > least}
        out.add(_key(self.shown[-1]))
        return out


_key = query_key
# the held-out test screens of a collect of ranked picks or odd-one-out: random triplets
# (one pick among the collect's k candidates stays as before)
TEST_TRIPLET = CollectTrial("rank", 2, 1)


class QueryMix:
    """The queries of a collect's screens: checks, tests, burn-in and the samplers' own.

    One per process and collect file (``config``), over ``catalogue`` and ``store`` (None:
    no buffers, every query random); see the module docstring.
    """

    def __init__(self, catalogue: Any, config: Any, store: Any) -> None:
        self.catalogue, self.config, self.store = catalogue, config, store
        self.fingerprint = str(config.fingerprint)
        self.screen: CollectTrial = config.screen
        # the held-out test screens: the collect's own for one pick, else random triplets
        self.test = self.screen if self.screen.is_choice else TEST_TRIPLET
        n = catalogue.n_items
        # queries (head, candidate set; odd-one-out: sets of three)
        self.distinct = math.comb(n, 3) if self.screen.odd else n * math.comb(n - 1, self.screen.k)
        self._embeddings: dict = {}  # the judging embedding, kept between screens

    def query(self, searcher: Participant, number: int) -> tuple[dict, Any]:
        """Screen ``number``'s query and the claim on it (see the module docstring).

        The claim (None but for a query taken from the buffer) is given back by
        :meth:`release` when the screen is never shown.
        """
        cfg = self.config
        rng = np.random.default_rng([searcher.seed, number])
        query: dict | None = None
        claim = None
        consulted = False  # (the buffer read for this screen)
        judge = self._judging_embedding()  # (every screen: a repeat costs what others cost)
        if number in searcher.gold:
            query = self._gold(searcher.gold[number], rng)
        elif number in cfg.attention:
            query = self._attention(rng, judge)
        elif number in cfg.repeats and (query := self._repeat(searcher, rng, number, judge)):
            pass  # (no earlier query clear enough: an ordinary query instead)
        elif number >= cfg.burn_in and rng.random() < cfg.test_share:
            query = {**self._random(searcher, rng, self.test), "kind": "test", "sampler": "test"}
        elif number >= cfg.burn_in:
            query, claim = self._from_buffer(searcher, number)
            consulted = True
            if query is not None:  # (a sampler's order may say the answer: shown shuffled)
                query["candidates"] = [int(c) for c in rng.permutation(query["candidates"])]
        if query is None:  # before the burn-in's end, or no query in the buffer: random
            kind = "burn-in" if number < cfg.burn_in else "fallback"
            query = {**self._random(searcher, rng), "kind": kind}
        if not consulted:  # (the work of a screen from the buffer, on every other screen)
            self._from_buffer(searcher, number, keep=False)
        query.setdefault("sampler", searcher.sampler)
        return query, claim

    def _random(
        self, searcher: Participant, rng: np.random.Generator, screen: CollectTrial | None = None
    ) -> dict:
        """A uniform query of ``screen`` (default: the collect's) the participant has not seen.

        After a few draws: on a small catalogue one of those seen least often but the last
        shown (:meth:`Participant.refused`), else any.
        """
        screen = screen or self.screen
        n, k = self.catalogue.n_items, screen.k
        refused = searcher.refused(self.distinct)
        for _ in range(20):
            if screen.odd:
                head, cands = None, [int(c) for c in rng.choice(n, size=3, replace=False)]
            else:
                head = int(rng.integers(n))
                others = np.delete(np.arange(n), head)
                cands = [int(c) for c in rng.choice(others, size=k, replace=False)]
            query = screen.query(head, cands)
            if _key(query) not in refused:
                return query
        if self.distinct > LISTED_QUERIES:
            return query
        return self._least_asked(searcher, refused, rng, screen)

    def _least_asked(
        self,
        searcher: Participant,
        refused: Container,
        rng: np.random.Generator,
        screen: CollectTrial,
    ) -> dict:
        """Of every query, one not ``refused`` (or not the last shown) asked least often."""
        n, k = self.catalogue.n_items, screen.k
        if screen.odd:
            every = [screen.query(None, c) for c in itertools.combinations(range(n), 3)]
        else:
            every = [
                screen.query(h, c)
                for h in range(n)
                for c in itertools.combinations([i for i in range(n) if i != h], k)
            ]
        allowed = [q for q in every if _key(q) not in refused]
        if not allowed:  # the least asked is the last shown: any other
            last = _key(searcher.shown[-1]) if searcher.shown else None
            allowed = [q for q in every if _key(q) != last] or every
        times = [searcher.times[_key(q)] for q in allowed]
        least = [q for q, t in zip(allowed, times) if t == min(times)]
        got = least[int(rng.integers(len(least)))]
        return {**got, "candidates": [int(c) for c in rng.permutation(got["candidates"])]}

    def _gold(self, row: tuple[int, ...], rng: np.random.Generator) -> dict:
        """A known answer of the trial's form, its candidates in a random order, as any query.

        ``row``: ``(head, first pick, the others)`` (a pair: head, closer, farther, in the
        draws of before) or odd-one-out ``(a, b, odd)``; ``expected``: the first pick's
        position (the odd one's).
        """
        items = [int(v) for v in row]
        if self.screen.odd:
            cands, known = [items[int(i)] for i in rng.permutation(3)], items[2]
            query = self.screen.query(None, cands)
        else:
            head, known, rest = items[0], items[1], items[2:]
            if len(rest) == 1:  # (a pair: the draw of before)
                cands = [known, rest[0]] if rng.random() < 0.5 else [rest[0], known]
            else:
                cands = [items[1 + int(i)] for i in rng.permutation(len(items) - 1)]
            query = self.screen.query(head, cands)
        expected = cands.index(known)
        return {**query, "kind": "gold", "expected": expected, "sampler": "check"}

    def _attention(self, rng: np.random.Generator, judge: Any) -> dict:
        """A check for inattention: its expected pick is plain to anyone looking.

        A head and candidates: the head among its own candidates (its position is the
        expected first pick). Odd-one-out: two copies of one item beside another, the
        odd one (the farthest of three drawn from the item by ``judge``, the judging
        embedding, when there is one).
        """
        n, k = self.catalogue.n_items, self.screen.k
        if self.screen.odd:
            same, *others = (int(i) for i in rng.choice(n, size=4, replace=False))
            odd = _farthest(judge, same, others)
            expected = int(rng.integers(3))
            cands = [same, same]
            cands.insert(expected, odd)
            query = self.screen.query(None, cands)
        else:
            items = [int(i) for i in rng.choice(n, size=k, replace=False)]
            expected = int(rng.integers(k))
            query = self.screen.query(items[expected], items)
        return {**query, "kind": "attention", "expected": expected, "sampler": "check"}

    def _repeat(
        self, searcher: Participant, rng: np.random.Generator, number: int, judge: Any
    ) -> dict | None:
        """An earlier query (not a check) again, its candidates reordered.

        From the rules of :data:`POOLED_RULES` on, one asked at least :data:`REPEAT_GAP`
        screens before whose majority answer an embedding predicts with at least
        :data:`REPEAT_CLEAR` (``clear``: that probability; a repeat of a near-tie is a coin
        flip for anyone) by ``judge`` (:meth:`_judging_embedding`); None when there is none
        (or no embedding fitted to :data:`REPEAT_ROWS_PER_ITEM` triplets per item yet).
        """
        earlier = [
            (i, q) for i, q in enumerate(searcher.shown) if q["kind"] in (*ANSWER_KINDS, "test")
        ]
        clear: list[float] = []
        if searcher.rules >= POOLED_RULES:
            earlier = [(i, q) for i, q in earlier if i <= number - REPEAT_GAP]
            sure = _predicted(judge, [q for _, q in earlier])
            earlier = [e for e, p in zip(earlier, sure) if p >= REPEAT_CLEAR]
            clear = [p for p in sure if p >= REPEAT_CLEAR]
        if not earlier:
            return None
        pick = int(rng.integers(len(earlier)))
        i, q = earlier[pick]
        order = [int(c) for c in rng.permutation(q["candidates"])]
        form = {k: q[k] for k in ("head", "picks", "trial") if k in q}  # (its own form)
        out = {**form, "candidates": order, "kind": "repeat", "of": i}
        if clear:
            out["clear"] = round(clear[pick], 4)
        return {**out, "sampler": "check"}

    def _judging_embedding(self) -> Any:
        """The embedding that judges which queries are clear, or None (none fitted enough).

        The newest version of the sampler with the most answers, once it has
        :data:`REPEAT_ROWS_PER_ITEM` triplets per item. Looked up on every screen (one
        indexed read; a new version loaded on whichever screen first sees it), so that a
        repeat's reply takes what any other's does.
        """
        if self.store is None:
            return None
        n = self.catalogue.n_items
        newest = self.store.newest_embeddings(self.fingerprint)
        per_row = self.screen.triplets_per_row  # (a trial sampler's rows are trials)
        enough = [v for v in newest if v[2] * per_row >= REPEAT_ROWS_PER_ITEM * n]
        if not enough:
            return None
        sampler, version, _ = max(enough, key=lambda v: (v[2], v[1]))
        key = (self.fingerprint, sampler, version)
        kept = self._embeddings
        if key not in kept:  # (one kept)
            got = self.store.latest_embedding(self.fingerprint, sampler)
            if got is None or got["version"] != version:  # (a newer one since: next screen)
                return next(iter(kept.values()), None)
            kept = {key: embedding_from_state(got["embedding"], n)}
            self._embeddings = kept
        return kept[key]

    def _from_buffer(
        self, searcher: Participant, number: int, keep: bool = True
    ) -> tuple[dict | None, Any]:
        """The sampler's next query from its buffer and the claim on it (None: empty).

        None for the owner's preview (``params["preview"]``): the queries are the real
        participants'; the preview shows a fallback (random) query instead. ``keep`` False
        (a check or test screen from the burn-in's end on): the same reads and claim, the
        query left free (the store's ``take_query(keep=False)``), so that every screen is
        served along one path in one time (a script cannot tell a check by its reply time).
        """
        if self.store is None or searcher.preview:
            return None, None
        taker = f"{searcher.participant}:{number}"
        refuse = searcher.refused(self.distinct)
        got = self.store.take_query(
            self.fingerprint, searcher.sampler, taker, refuse=refuse, keep=keep
        )
        if not keep:
            return None, None
        if got is None:
            return None, None
        query_id, head, cands, version = got
        # the kind of query the sampler asked: random (the random sampler's, or another's
        # before its burn-in's end), or its method's own ("active", "arr")
        kind = "random" if version == 0 else searcher.sampler
        return {**self.screen.from_buffer(head, cands), "kind": kind}, (query_id, taker)

    def release(self, claim: Any) -> None:
        """A query taken from the buffer (its ``claim``) for a screen never shown: free again."""
        if claim is not None and self.store is not None:
            self.store.release_query(*claim)


def _farthest(judge: Any, item: int, others: list[int]) -> int:
    """Of ``others``, the farthest from ``item`` by the embedding ``judge`` (None: the first)."""
    if judge is None:
        return others[0]
    X = np.asarray(judge.embedding_)
    return max(others, key=lambda o: float(np.sum((X[o] - X[item]) ** 2)))


def _predicted(emb: Any, queries: list[dict]) -> list[float]:
    """Per query, the probability of its likeliest answer by ``emb`` (zeros: None)."""
    if emb is None or not queries:
        return [0.0] * len(queries)
    return [float(p.max()) for p in first_pick_probs(emb, queries)]
