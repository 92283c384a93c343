"""The collect file and its identity: what ``tripletsearch serve --collect`` asks people.

A collect file (TOML) names the catalogue (which may have no embedding yet: the triplets
are collected to learn it), the query samplers that run side by side, and what each
participant sees::

    name = "pictures-alike"          # the experiment's name in the database (default: from
                                     # the title at its first start)
    title = "Which looks more alike?"
    catalogue = "pictures/"          # a catalogue folder or CSV file, or a demo name
    samplers = ["active", "random"]  # TripletSampler methods; people assigned at random
    test_share = 0.1                 # queries drawn at random and kept apart (a test set)
    n_choices = 2                    # candidates per query (2: "which of the two"; up to
                                     # 16; before 0.3.0: k)
    picks = 1                        # candidates picked, most similar first (1 to
                                     # n_choices - 1; 8 and 2: PsiZ's "8-rank-2" grids)
    trial = "rank"                   # or "odd-one-out": three items, no head, the odd one
                                     # picked (THINGS' task; n_choices and picks left out)
    dim = 2                          # the embeddings' dimension (below the items' number)
    models = ["gamma-ckl", "t-ste"]  # fitted for export
    max_queries = 100                # queries per participant, then the debrief (at most
                                     # 10,000)
    burn_in = 20                     # random queries before the adaptive ones (below
                                     # max_queries; default: 20, at most max_queries)
    attention = [10, 40]             # positions of checks with a known answer
    repeats = [25, 60]               # positions of repeated queries (agreement)
    gold = [[3, 7, 12], [5, 2, 9]]   # known answers (head, closer, farther), shown as any
                                     # query at positions drawn per participant: a pool, each
                                     # participant meeting a quarter of it at most (4 of 16
                                     # or more; at least 4 rows). A screen of k candidates:
                                     # rows [head, the first pick, the k - 1 others]; odd-
                                     # one-out: [a, b, the odd one]
    gold_drawn = 64                  # and/or: so many clear known answers drawn from the
                                     # catalogue's embedding (the nearest candidate at most
                                     # half as far as the next; the odd one twice as far
                                     # from the others as they are apart), in the same pool
    agreement = false                # only for a collect too short for the agreement rule
                                     # (max_queries less its check screens under 40): said
                                     # so, its participants judged by the other checks
    instructions = "..."             # shown before the first query
    debrief = "..."                  # shown after the last
    completion_code = "C0DE42"       # optional (crowdsourcing platforms): a finished
    redirect = "https://..."         # participant's code, and a link back there
    show_names = true                # names under the items (false: pictures only)
    platform = "prolific"            # optional: the link's parameters read and kept
                                     # ("mturk", "cloudresearch", "sona", or a table
                                     # {id, params}: see crowd/platforms.py); one participation
                                     # per platform id
    require_platform_id = false      # true: a link without the id cannot take part
    strict_ids = true                # a Prolific or MTurk id checked to have its form
    seed = 0
    consent = "..."
    [completion.finished]            # or per outcome (not with the two keys above): a
    code = "C0DE42"                  # finished participant's code and link back, shown
    redirect = "https://app.prolific.com/submissions/complete?cc=C0DE42"
    [completion.withdrawn]           # and one who stopped taking part's
    code = "STOPPED7"
    redirect = "https://app.prolific.com/submissions/complete?cc=STOPPED7"

:func:`load_collect` checks every key and names the file and the key of a problem. Once
people took part, the keys that make the design (catalogue, samplers, n_choices, picks,
trial, dim, seed, test_share, burn_in, attention, repeats, gold, gold_drawn) cannot change
(:mod:`..experiment`); the others apply to the queries that follow (``max_queries`` only
upward). A new collect whose checks cannot work (:meth:`CollectConfig.check_problems`: the
agreement rule unable to judge anyone, a gold pool too small to draw from) is refused when
its server registers it; one people took part in already is served with a warning.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ...collect import METHODS
from ...embedding import MODEL_ALIASES, MODELS
from ..catalogue import Catalogue
from ..experiment import (
    Experiment,
    check_name,
    file_catalogue,
    legacy_hash,
    read_toml,
    renamed_keys,
    texts,
)
from ..experiment import fail as _fail
from ..experiment import is_integer as _integer
from ..participation import platforms
from ..participation.completion import completion
from ..participation.platforms import Platform
from .rules import AGREEMENT_AFTER
from .screens import GOLD_POOL_RATIO, GOLD_SHOWN, gold_shown
from .trial import ODD, TRIALS, CollectTrial
from .trial.gold import drawn_gold, file_gold

__all__ = ["CollectConfig", "load_collect", "DEFAULT_COLLECT_CONSENT"]

DEFAULT_COLLECT_CONSENT = (
    "This is a study of how people judge similarity. You will be shown an item and others "
    "beside it, and asked which of them is most similar to it.\n\n"
    "We record your clicks and their timing under a random participant id; we do not record "
    "your name or anything that identifies you. You can stop at any time."
)
_DEFAULTS: dict[str, Any] = {
    "title": "Which looks more alike?",
    "samplers": ["active"],
    "test_share": 0.1,
    "n_choices": None,  # 2 (an odd-one-out's 3)
    "picks": 1,
    "trial": "rank",
    "dim": 2,
    "models": ["gamma-ckl"],
    "max_queries": 100,
    "burn_in": None,  # 20, at most max_queries
    "attention": [],
    "repeats": [],
    "gold": [],
    "gold_drawn": None,  # clear known answers drawn from the catalogue's embedding
    "agreement": True,  # false: a collect too short for the agreement rule, said so
    "instructions": "Pick the item most similar to the one on top.",
    "debrief": "Thank you: your answers help us learn how people see these items.",
    "completion_code": None,
    "redirect": None,
    "completion": None,
    "platform": None,  # a crowd platform whose link parameters are read (crowd/platforms.py)
    "require_platform_id": False,
    "strict_ids": True,  # a known platform's ids checked to have its form
    "seed": 0,
    "consent": DEFAULT_COLLECT_CONSENT,
    "show_names": True,
    "name": None,
}
MAX_K = 16  # candidates per query at most (a grid's worth: Wilber's 16)
MAX_QUERIES = 10_000  # queries per participant at most
MAX_DIM = 64  # the embeddings' dimension at most (and below the items' number)
BURN_IN = 20  # the default burn-in (at most max_queries)
# the keys that make the design: cannot change once people took part
DESIGN_KEYS = (
    "catalogue", "samplers", "n_choices", "dim", "seed", "test_share", "burn_in",
    "attention", "repeats", "gold", "gold_drawn", "picks", "trial",
)  # fmt: skip
# the design keys that came later, stored only when not at their default (a collect of
# before keeps its identity): their defaults
LATER_KEYS: dict[str, Any] = {"gold_drawn": None, "picks": 1, "trial": "rank"}
SETTING_KEYS = (
    "title", "instructions", "debrief", "consent", "completion_code", "redirect",
    "show_names", "models", "max_queries",
)  # fmt: skip
TEXT_KEYS = ("title", "instructions", "debrief", "consent")  # what people read


@dataclass(frozen=True)
class CollectConfig(Experiment):
    """A collect file, checked (see the module docstring)."""

    kind = "collect"
    DESIGN_KEYS = DESIGN_KEYS
    SETTING_KEYS = SETTING_KEYS
    CLOSED = "this server collects triplets: open /collect"

    title: str
    catalogue: Catalogue
    samplers: tuple[str, ...]
    test_share: float
    n_choices: int
    dim: int
    models: tuple[str, ...]
    max_queries: int
    burn_in: int
    attention: tuple[int, ...]
    repeats: tuple[int, ...]
    instructions: str
    debrief: str
    completion_code: str | None  # the finished outcome's (either spelling)
    redirect: str | None
    seed: int
    consent: str
    show_names: bool = True
    gold: tuple[tuple[int, int, int], ...] = ()  # known answers: (head, closer, farther)
    gold_drawn: int | None = None  # clear known answers drawn from the embedding (or None)
    agreement: bool = True  # False: too short for the agreement rule, and said so
    picks: int = 1  # candidates picked, in order (the design's, like n_choices)
    trial: str = "rank"  # "rank" or "odd-one-out" (.trial)
    # the gold pool participants' rows are drawn from (check rules 3): the file's rows, or
    # ``gold_drawn`` rows drawn from the catalogue's embedding
    gold_pool: tuple[tuple[int, int, int], ...] = field(default=(), compare=False)
    name: str = ""  # the file's, or derived from the title (see experiment.resolve)
    named: bool = False  # the file gives it
    key: str = ""  # the key its rows are kept under, once resolved in a database
    path: str = field(default="", compare=False)
    spelled: tuple[tuple[str, str], ...] = ()  # design keys the file writes otherwise
    # codes and redirects per outcome: {"finished": {"code", "redirect"}, "withdrawn": ...}
    completion: dict = field(default_factory=dict, compare=False)
    # the platform whose link parameters the page sends (platform, require_platform_id: a
    # setting, not design); None: none read
    platform: Platform | None = field(default=None, compare=False)

    @property
    def k(self) -> int:
        """The candidates per query (``n_choices``; a collect file's ``k`` before 0.3.0)."""
        return self.n_choices

    @cached_property
    def design_fingerprint(self) -> str:
        """The design's identity before names: a hash of its first keys, ``max_queries`` too.

        A new collect's key, and where an older version kept its rows.
        """
        keys = [k for k in DESIGN_KEYS if k not in ("gold", "gold_drawn")]  # (came later)
        values = {k: self.design_value(k) for k in keys}
        kept = {k: v for k, v in values.items() if v is not self.OMIT}
        return legacy_hash({**kept, "max_queries": self.max_queries})

    @property
    def screen(self) -> CollectTrial:
        """What its screens ask (:class:`~.trial.CollectTrial`)."""
        return CollectTrial(self.trial, self.n_choices, self.picks)

    def mode_settings(self) -> dict[str, Any]:
        """The collect mode serves this file."""
        return {"collect": self}

    def design_value(self, key: str) -> Any:
        """As stored; the later keys left out at their defaults (as before they were keys)."""
        if key in LATER_KEYS and getattr(self, key) == LATER_KEYS[key]:
            return self.OMIT
        return super().design_value(key)

    @property
    def judged_picks(self) -> int:
        """The most picks the agreement rule can judge a participant by.

        ``max_queries`` less the check screens (attention checks and repeats).
        """
        return self.max_queries - len(self.attention) - len(self.repeats)

    def check_problems(self) -> list[str]:
        """Why this collect's checks cannot work as the rules mean them (none: []).

        ``max_queries`` less the check screens under :data:`~.rules.AGREEMENT_AFTER`
        (unless the file says ``agreement = false``), a gold pool under
        :data:`~.screens.GOLD_POOL_RATIO` rows.
        """
        out = []
        left = self.judged_picks
        if left < AGREEMENT_AFTER and self.agreement:
            out.append(
                f"max_queries = {self.max_queries} less its {self.max_queries - left} check "
                f"screens (attention, repeats) leaves {left} picks, and the agreement rule "
                f"judges a participant from {AGREEMENT_AFTER}: give max_queries = "
                f"{self.max_queries + AGREEMENT_AFTER - left} or more, or write agreement = "
                "false (its participants then judged by the other checks only)"
            )
        pool = len(self.gold_pool)
        if pool and gold_shown(pool) == 0:
            out.append(
                f"gold: a pool of {pool} rows, and each participant meets at most a "
                f"quarter of it: give at least {GOLD_POOL_RATIO} rows (16 for the "
                f"{GOLD_SHOWN} a participant meets), or gold_drawn = N"
            )
        return out

    def registered(self, store: Any) -> None:
        """Its server registers it: refused when its checks cannot work and nobody took part.

        A ValueError naming the numbers (:meth:`check_problems`); a warning when people
        took part already (served as it is).
        """
        said = self.check_problems()
        if not said:
            return
        people = store.participant_count(self.fingerprint)
        text = f"{self.path or 'collect'}: " + "; ".join(said)
        if not people:
            raise ValueError(text)
        warnings.warn(f"{text} ({people} took part already: served as it is)", stacklevel=2)


def _read(name: str) -> tuple[dict, dict]:
    """The file's keys with the defaults, old key names moved (warning).

    And how the file spells a design key otherwise (``{"n_choices": "k"}``).
    """
    cfg = read_toml(name)
    spelled = renamed_keys(name, cfg)
    unknown = set(cfg) - set(_DEFAULTS) - {"catalogue"}
    if unknown:
        known = sorted([*_DEFAULTS, "catalogue"])
        raise _fail(name, f"unknown key(s) {sorted(unknown)} (known: {known})")
    return {**_DEFAULTS, **cfg}, spelled


def _names(name: str, key: str, value: Any, known: Any) -> tuple[str, ...]:
    """A non-empty list of distinct names, each one of ``known`` (aliases resolved)."""
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise _fail(name, f"{key}: a non-empty list of names")
    out = tuple(str(MODEL_ALIASES.get(v, v)) if key == "models" else v for v in value)
    bad = [v for v in out if v not in known]
    if bad:
        raise _fail(name, f"{key}: unknown {bad} (known: {sorted(known)})")
    if len(set(out)) != len(out):
        raise _fail(name, f"{key}: a name given twice")
    return out


def _samplers(name: str, cfg: dict) -> tuple[str, ...]:
    """The samplers, each able to ask the trial's screens (``arr``: one pick only)."""
    out = _names(name, "samplers", cfg["samplers"], METHODS)
    screen = CollectTrial(cfg["trial"], cfg["n_choices"], cfg["picks"])
    if "arr" in out and not screen.is_choice:
        raise _fail(
            name,
            "samplers: 'arr' (salmon's) asks one pick among a head's candidates; a collect "
            "of ranked picks or odd-one-out takes 'active' and 'random'",
        )
    return out


def _positions(name: str, key: str, value: Any, max_queries: int) -> tuple[int, ...]:
    """Distinct query positions (0-based) within the participant's queries."""
    if not isinstance(value, list) or not all(_integer(v) for v in value):
        raise _fail(name, f"{key}: a list of query positions (integers)")
    if any(not 0 <= v < max_queries for v in value) or len(set(value)) != len(value):
        raise _fail(name, f"{key}: distinct positions in 0..{max_queries - 1}")
    return tuple(sorted(value))


def _integers(name: str, cfg: dict, n_items: int) -> None:
    """The integer keys, each within its bounds (the message names the key and the bounds)."""
    _trial(name, cfg)
    most_k = 3 if cfg["trial"] == ODD else min(MAX_K, n_items - 1)  # (a head and k others)
    bounds = {
        "n_choices": (2, most_k, "candidates per query"),
        "dim": (1, min(MAX_DIM, n_items - 1), "the embeddings' dimension, below the items' number"),
        "max_queries": (1, MAX_QUERIES, "queries per participant"),
        "seed": (0, 2**63 - 1, "the seed"),
    }
    for key, (lo, hi, what) in bounds.items():
        v = cfg[key]
        if not _integer(v) or not lo <= v <= hi:
            raise _fail(name, f"{key}: {what}, an integer from {lo} to {hi} (got {v!r})")
    _picks(name, cfg)
    burn_in, most = cfg["burn_in"], cfg["max_queries"]
    if burn_in is None:  # the default: 20, never above the queries
        cfg["burn_in"] = min(BURN_IN, most)
    elif not _integer(burn_in) or not 0 <= burn_in < most:
        raise _fail(
            name,
            f"burn_in: random queries before the adaptive ones, an integer from 0 to "
            f"max_queries - 1 = {most - 1} (got {burn_in!r})",
        )


def _trial(name: str, cfg: dict) -> None:
    """``trial`` checked, ``n_choices`` resolved: 2 by default, an odd-one-out's 3.

    ``"odd-one-out"`` shows three items and takes one pick (n_choices 3 or left out, picks
    1); ``"rank"``'s picks are checked with the other integers (:func:`_picks`).
    """
    trial, k, r = cfg["trial"], cfg["n_choices"], cfg["picks"]
    if trial not in TRIALS:
        raise _fail(name, f"trial: one of {list(TRIALS)} (got {trial!r})")
    if trial == ODD and (k not in (None, 3) or r != 1):
        raise _fail(
            name,
            'trial = "odd-one-out" shows three items and takes one pick: leave n_choices '
            f"and picks out (got n_choices = {k!r}, picks = {r!r})",
        )
    cfg["n_choices"] = 3 if trial == ODD else 2 if k is None else k


def _picks(name: str, cfg: dict) -> None:
    """``picks``: an integer from 1 to n_choices - 1 (n_choices checked)."""
    r, k = cfg["picks"], cfg["n_choices"]
    if not _integer(r) or not 1 <= r < k:
        raise _fail(
            name,
            f"picks: the candidates picked, an integer from 1 to n_choices - 1 = {k - 1} "
            f"(got {r!r})",
        )


def _agreement(name: str, cfg: dict) -> bool:
    """``agreement``: true, or false for a collect too short for the agreement rule only."""
    value = cfg["agreement"]
    if not isinstance(value, bool):
        raise _fail(name, "agreement: true or false")
    left = cfg["max_queries"] - len(cfg["attention"]) - len(cfg["repeats"])
    if not value and left >= AGREEMENT_AFTER:
        raise _fail(
            name,
            f"agreement = false is for a collect too short for the agreement rule; this one "
            f"leaves {left} picks (it judges from {AGREEMENT_AFTER}): leave the key out",
        )
    return value


def load_collect(path: Any) -> CollectConfig:
    """Read and check a collect file; a ``ValueError`` names the file and the key.

    A ``k`` key (the candidates per query before 0.3.0) warns: renamed ``n_choices``.
    """
    name = os.fspath(path)
    cfg, spelled = _read(name)
    if "catalogue" not in cfg:
        raise _fail(name, "catalogue: required (a demo name or a catalogue path)")
    cat = file_catalogue(name, cfg["catalogue"], embedding=False)
    if cat.n_items < 3:
        raise _fail(name, f"catalogue: a triplet needs 3 items, it has {cat.n_items}")
    _integers(name, cfg, cat.n_items)
    share = cfg["test_share"]
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share < 1:
        raise _fail(name, "test_share: a number in [0, 1)")
    attention = _positions(name, "attention", cfg["attention"], cfg["max_queries"])
    repeats = _positions(name, "repeats", cfg["repeats"], cfg["max_queries"])
    if set(attention) & set(repeats):
        raise _fail(name, "attention and repeats: a position can hold one check only")
    if any(r == 0 for r in repeats):
        raise _fail(name, "repeats: a repeat needs an earlier query (position >= 1)")
    gold = file_gold(name, cfg["gold"], cfg, cat.n_items, len(attention) + len(repeats))
    cfg["attention"], cfg["repeats"] = attention, repeats
    drawn, agreement = drawn_gold(name, cfg, cat.n_items), _agreement(name, cfg)
    said = texts(name, cfg, {k: _DEFAULTS[k] for k in TEXT_KEYS})
    if not isinstance(cfg["show_names"], bool):
        raise _fail(name, "show_names: true or false")
    ends = completion(name, cfg)
    code, redirect = ends.get("finished", {}).get("code"), ends.get("finished", {}).get("redirect")
    named = cfg["name"] is not None
    return CollectConfig(
        title=said["title"],
        catalogue=cat,
        samplers=_samplers(name, cfg),
        test_share=float(share),
        n_choices=cfg["n_choices"],
        dim=cfg["dim"],
        models=_names(name, "models", cfg["models"], MODELS),
        max_queries=cfg["max_queries"],
        burn_in=cfg["burn_in"],
        attention=attention,
        repeats=repeats,
        instructions=said["instructions"],
        debrief=said["debrief"],
        completion_code=code,
        redirect=redirect,
        seed=cfg["seed"],
        consent=said["consent"],
        show_names=cfg["show_names"],
        gold=gold,
        gold_drawn=cfg["gold_drawn"],
        agreement=agreement,
        picks=int(cfg["picks"]),
        trial=str(cfg["trial"]),
        gold_pool=tuple(dict.fromkeys(gold + drawn)),
        name=check_name(name, cfg["name"]) if named else "",
        named=named,
        path=name,
        spelled=tuple(spelled.items()),
        completion=ends,
        platform=platforms.file_platform(name, cfg),
    )
