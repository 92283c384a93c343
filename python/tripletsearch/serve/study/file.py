"""The study file: the paper's user study as a ready experiment.

A study file (TOML) names the catalogue, the search methods to compare, the targets, the
items per screen and the seed::

    name = "colour-study"            # the experiment's name in the database (default: from
                                     # the title at its first start)
    title = "Find the colour"
    catalogue = "colours"            # a bundled demo, or a catalogue folder / CSV file
    methods = ["gamma-ckl", "gauss"] # DiscreteSearch methods, compared blindly
    targets = 10                     # how many (drawn once with the seed), or item ids
    n_choices = 4                    # items per screen (before 0.2.0: k)
    seed = 0                         # targets, orders and every searcher's seed
    max_queries = 60                 # screens before a search gives up
    attention = [5, 20]              # optional: attention screens, by number within each
                                     # search (1 to max_queries): the target among the
                                     # candidates ("found" expected); counted in no query
    guesses = 0                      # best guesses under each screen, every method alike
                                     # (0: none, the paper's protocol; 1 to 8: a strip)
    gamma = 3.0                      # gamma-ckl's user model ("auto": inferred per person)
    sigma = "auto"                   # gauss's probit noise ("auto": 0.1 of the items' RMS
                                     # distance to their mean, the paper's 0.1 at its scale)
    consent = "..."                  # shown before anything is recorded
    show_names = true                # names under the items (false: pictures only)
    platform = "prolific"            # optional: the link's ids kept (crowd/platforms.py), one
    require_platform_id = false      # participation each; true: none without the id
    strict_ids = true                # a Prolific or MTurk id checked to have its form
    exclude = ["..."]                # item names left out of the study (targets and
                                     # screens); on the colour demo by default the survey's
                                     # offensive names (catalogue.DEMO_EXCLUDE); [] keeps all

    [embeddings]                     # optional: a method's own embedding of the same items
    gauss = "embeddings/probit.npy"  # (.npy, .csv or Embedding.save's .npz; relative to
                                     # the file); the others search the catalogue's
    [completion.finished]            # optional: the code and link back at the end, per
    code = "C0DE42"                  # outcome (finished, withdrawn: crowd/completion.py; before
    redirect = "https://..."         # 0.4.0 the top-level completion_code and redirect)

Once people took part, the keys that make the design (catalogue, exclude, methods,
targets, n_choices, seed, gamma, sigma, embeddings, guesses) cannot change (:mod:`..experiment`:
undo the change, or give the file a new ``name``); the others apply to the searches that
start afterwards (``max_queries`` only upward).

The paper fitted an embedding per method from the same triplets (Probit for GaussSearch,
gamma-CKL for gamma-CKLSearch): ``tripletsearch export --collect`` writes such a study.

Each person who opens ``/study`` and consents becomes a pseudonymous participant (a random
id, never a name) who searches every target once. Target orders are counterbalanced: the
orders are the rows of a Williams design over the targets (relabelled once by the seed), one
row per participant in enrolment order, so over each block of T participants (2T for an odd
number T of targets) every target comes equally often in every position and right after
every other target. The method of each search is assigned blindly and balanced in every
position: with W Williams rows and M methods, participant p (their enrolment number) takes
Williams row ``p mod W`` and does the search in position j with method
``methods[(p div W + j) mod M]``. Over each block of M x W participants every method is
used equally often in every position (so practice and fatigue weigh on every method
alike), every target is searched equally often with every method, and the target orders
stay Williams-balanced. Within a person the methods take turns (with two methods: one,
the other, one, ...). With one target the study is between-subjects: each participant
searches once, the methods in turn over participants. The method is stored with the session
on the server and appears in nothing the participant's browser receives.

The plan is versioned (:data:`PLAN_VERSION`): a study's participants all follow the plan its
first participant was enrolled under, so a study started under an older plan keeps it after
an upgrade (plan 1: a seeded shuffle of targets per participant; plan 2: the Williams orders
with ``methods[(p + t) mod M]`` for the t-th target, which balanced targets but not methods
over positions). Plans go by enrolment number: a participant who withdraws leaves their
row of the design unfilled, a hole that the report shows. A participant may stop at any
time (``withdraw``): their searches end, and their answers are left out of report and
export and deleted by ``tripletsearch prune``.
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from ...discrete import METHODS
from ...utils import derived_seed
from ..catalogue import DEMO_EXCLUDE, Catalogue
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
from ..modes.find import N_CHOICES
from ..participation import platforms
from ..participation.completion import completion
from ..participation.platforms import Platform
from .keys import check_attention, check_guesses_key, embeddings_key, gamma_sigma

__all__ = [
    "Study",
    "load_study",
    "running_study",
    "PLAN_VERSION",
    "PLAN_VERSIONS",
    "williams_orders",
]

# the version of the plan for new studies: 1 a seeded shuffle per participant (before
# 0.3.0), 2 a Williams design of targets (methods balanced per target only), 3 the
# Williams design with methods balanced in every position (see the module docstring)
PLAN_VERSION = 3
PLAN_VERSIONS = (1, 2, 3)

_KEYS = {
    "title",
    "catalogue",
    "methods",
    "targets",
    "n_choices",
    "seed",
    "max_queries",
    "gamma",
    "sigma",
    "consent",
    "completion_code",
    "redirect",
    "completion",
    "platform",
    "require_platform_id",
    "strict_ids",
    "exclude",
    "embeddings",
    "name",
    "show_names",
    "guesses",
    "attention",
}
# the keys that make the design (cannot change once people took part) and the others
DESIGN_KEYS = (
    "catalogue", "exclude", "methods", "targets", "n_choices", "seed", "gamma", "sigma",
    "embeddings", "guesses",
)  # fmt: skip
SETTING_KEYS = (
    "title", "consent", "max_queries", "completion_code", "redirect", "show_names", "attention",
)  # fmt: skip
DEFAULT_CONSENT = (
    "This is a study of how people search by comparisons. You will be shown a target and "
    "will look for it by picking, on each screen, the item closest to it.\n\n"
    "We record your clicks and their timing under a random participant id; we do not record "
    "your name or anything that identifies you. You can stop at any time."
)


@dataclass(frozen=True)
class Study(Experiment):
    """A study's configuration (see the module docstring)."""

    NEWER_SETTINGS: ClassVar[tuple[str, ...]] = ("attention",)  # (issue 49's checks)

    kind = "study"
    DESIGN_KEYS = DESIGN_KEYS
    SETTING_KEYS = SETTING_KEYS
    CLOSED = "this server runs a study: open /study"

    title: str
    catalogue: Catalogue
    catalogue_source: str
    methods: tuple[str, ...]
    targets: tuple[int, ...]
    n_choices: int
    seed: int
    max_queries: int
    gamma: float | str
    sigma: float
    consent: str
    completion_code: str | None = None  # the finished outcome's (either spelling)
    redirect: str | None = None
    # codes and redirects per outcome: {"finished": {"code", "redirect"}, "withdrawn": ...}
    completion: dict = field(default_factory=dict, compare=False)
    # the platform whose link parameters the page sends (platform, require_platform_id: a
    # setting, not design); None: none read
    platform: Platform | None = field(default=None, compare=False)
    excluded: tuple[str, ...] = ()
    # a method's own embedding of the catalogue's items (rows as the catalogue's), if given
    embeddings: dict[str, np.ndarray] = field(default_factory=dict, compare=False)
    # the study as 0.2.0 read the same file (the demo's default exclusion not applied), for
    # a study under way before it (see running_study); None when the same
    legacy: Study | None = field(default=None, compare=False, repr=False)
    show_names: bool = True
    source_fingerprint: str = ""  # the catalogue's before exclude
    name: str = ""  # the file's, or derived from the title (see experiment.resolve)
    named: bool = False  # the file gives it
    key: str = ""  # the key its participants are kept under, once resolved in a database
    path: str = field(default="", compare=False)
    spelled: tuple[tuple[str, str], ...] = ()  # design keys the file writes otherwise
    guesses: int = 0  # best guesses with each screen, for every method (0: the paper's)
    # attention screens by number within each search (1-based; checks.py); () none
    attention: tuple[int, ...] = ()

    def design_value(self, key: str) -> Any:
        """A design key as stored: the catalogue's before ``exclude``, the embeddings' hashes.

        ``guesses`` is left out without a strip (as stored before there was one).
        """
        if key == "catalogue":
            return self.source_fingerprint or self.catalogue.fingerprint
        if key == "exclude":
            return list(self.excluded)
        if key == "embeddings":
            return self._embedding_hashes()
        if key == "guesses" and not self.guesses:
            return self.OMIT
        return getattr(self, key)

    def legacy_keys(self) -> tuple[str, ...]:
        """Its design's hash, then its 0.2.0 reading's (:func:`running_study`)."""
        older = [self.legacy.design_fingerprint] if self.legacy is not None else []
        return tuple(dict.fromkeys([self.design_fingerprint, *older]))

    def running(self, store: Any) -> Study:
        """The study, or its 0.2.0 reading when ``store``'s participants took part in that."""
        return running_study(self, store)

    def mode_settings(self) -> dict[str, Any]:
        """Find mode searches a method's own embedding where the file gives one."""
        return {"embeddings": self.embeddings}

    def server_settings(self, config: Any) -> Any:
        """``config`` with the study's ``max_queries`` (its searches' screens at most)."""
        return config.replace(max_queries=self.max_queries)

    def _guesses(self) -> dict[str, int]:
        """``{"guesses": m}`` with a strip (none: the paper's protocol, as stored before)."""
        return {"guesses": self.guesses} if self.guesses else {}

    def _embedding_hashes(self) -> dict[str, str]:
        return {
            m: hashlib.sha256(np.ascontiguousarray(X).tobytes()).hexdigest()[:16]
            for m, X in sorted(self.embeddings.items())
        }

    @property
    def design_fingerprint(self) -> str:
        """The design's identity before names: a hash of its keys, the title's too.

        A new study's key, and where an older version kept its participants. (The keys of
        the first version, ``k`` included: a study under way kept it across upgrades.)
        """
        design = {
            "title": self.title,
            "catalogue": self.catalogue.fingerprint,
            "methods": self.methods,
            "targets": self.targets,
            "n_choices": self.n_choices,
            "seed": self.seed,
        }
        if self.embeddings:  # (absent before: a study without keeps its fingerprint)
            design["embeddings"] = self._embedding_hashes()
        design.update(self._guesses())  # (likewise)
        return legacy_hash(design)

    def plan(self, number: int, version: int = PLAN_VERSION) -> list[tuple[int, str]]:
        """Participant ``number``'s searches: (target, method) in the order they do them.

        Under plan ``version`` (see the module docstring).
        """
        if version not in PLAN_VERSIONS:
            raise ValueError(f"version: no target plan {version!r} (this library: 1, 2, 3)")
        if not _integer(number) or number < 0:
            raise ValueError(f"number: an enrolment number (an integer >= 0), got {number!r}")
        n, m = len(self.targets), len(self.methods)
        if version == 1:
            order = [int(t) for t in np.random.default_rng([self.seed, number]).permutation(n)]
            return [(self.targets[t], self.methods[(number + t) % m]) for t in order]
        labels = np.random.default_rng([self.seed, 2]).permutation(n)
        rows = williams_orders(n)
        order = [int(labels[x]) for x in rows[number % len(rows)]]
        if version == 2:
            return [(self.targets[t], self.methods[(number + t) % m]) for t in order]
        turn = number // len(rows)
        return [(self.targets[t], self.methods[(turn + j) % m]) for j, t in enumerate(order)]

    def block(self, version: int = PLAN_VERSION) -> int:
        """Participants per balanced block of plan ``version``.

        Over enrolments ``b * block`` to ``(b + 1) * block - 1`` plan 3 balances methods
        over positions and targets; plan 2 its targets over positions (M x W and W
        participants, W the Williams rows); plan 1 balances nothing (1).
        """
        w = len(williams_orders(len(self.targets)))
        return {1: 1, 2: w, 3: len(self.methods) * w}[version]

    def session_seed(self, number: int, slot: int) -> int:
        """The searcher's seed for participant ``number``'s search ``slot``.

        From the study's seed, so a study replays (same answers, same screens).
        """
        return derived_seed(self.seed, number, slot)

    def params(self, method: str) -> dict:
        """The searcher parameters for ``method``: the method, the study's gamma and sigma.

        And its ``guesses`` when it has some: the same for every method.
        """
        checks = {"attention": list(self.attention)} if self.attention else {}
        return {
            "method": method, "gamma": self.gamma, "sigma": self.sigma, **self._guesses(),
            **checks,
        }  # fmt: skip

    @property
    def search_screens(self) -> int:
        """A search's screens at most: ``max_queries`` and its attention screens."""
        return self.max_queries + len(self.attention)


def williams_orders(n: int) -> list[list[int]]:
    """The rows of a Williams design for ``n`` treatments.

    Orders of 0..n-1 in which every treatment comes equally often in every position and
    right after every other one: n rows for an even n, 2n for an odd one (the n rows and
    their reverses), one for n = 1. Row i is the first row 0, 1, n-1, 2, n-2, ... plus i
    (mod n).
    """
    if n < 1:
        raise ValueError(f"n: at least 1, got {n}")
    first, lo, hi = [0], 1, n - 1
    while len(first) < n:
        if len(first) % 2:
            first.append(lo)
            lo += 1
        else:
            first.append(hi)
            hi -= 1
    rows = [[(x + i) % n for x in first] for i in range(n)]
    return rows + [r[::-1] for r in rows] if n % 2 and n > 1 else rows


def _read(name: str) -> dict:
    """The study file's table, its keys checked, old key names moved (warning)."""
    cfg = read_toml(name)
    cfg["_spelled"] = renamed_keys(name, cfg)
    unknown = set(cfg) - _KEYS - {"_spelled"}
    if unknown:
        raise _fail(name, f"unknown key(s) {sorted(unknown)} (known: {sorted(_KEYS)})")
    return cfg


def _methods(name: str, methods: Any) -> tuple[str, ...]:
    if (
        not isinstance(methods, list)
        or not methods
        or any(m not in METHODS for m in methods)
        or len(set(methods)) != len(methods)
    ):
        raise _fail(name, f"methods: a list of distinct names from {sorted(METHODS)}")
    return tuple(methods)


def _targets(
    name: str, targets: Any, cat: Catalogue, seed: int, full: Catalogue, new_id: np.ndarray
) -> tuple[int, ...]:
    """The targets as ids of ``cat``: a count drawn with the seed, or given ids.

    Given ids are of the full catalogue (``new_id``: their ids in ``cat``, -1 for an
    excluded item).
    """
    if _integer(targets):
        if not 1 <= targets <= cat.n_items:
            raise _fail(name, f"targets: 1 to {cat.n_items}")
        chosen = np.random.default_rng(seed).choice(cat.n_items, size=targets, replace=False)
        return tuple(int(t) for t in chosen)
    if isinstance(targets, list) and targets:
        if not all(_integer(t) for t in targets):
            raise _fail(name, "targets: item ids (integers)")
        if any(not 0 <= t < full.n_items for t in targets) or len(set(targets)) != len(targets):
            raise _fail(name, f"targets: distinct item ids in 0..{full.n_items - 1}")
        out = [int(new_id[t]) for t in targets]
        if min(out) < 0:
            left = [full.names[t] for t in targets if new_id[t] < 0]
            raise _fail(name, f"targets: excluded by exclude: {', '.join(map(repr, left))}")
        return tuple(out)
    raise _fail(name, "targets: a count or a list of item ids")


def load_study(path: Any) -> Study:
    """Read and check a study file (a ``k`` key warns: renamed ``n_choices``)."""
    name = os.fspath(path)
    cfg = _read(name)
    full = file_catalogue(name, cfg.get("catalogue"))
    default = DEMO_EXCLUDE.get(cfg["catalogue"], ())
    exclude = cfg.get("exclude", list(default))
    if not isinstance(exclude, list) or not all(isinstance(x, str) for x in exclude):
        raise _fail(name, "exclude: a list of item names")
    study = _study(name, cfg, full, tuple(exclude))
    if "exclude" not in cfg and default:  # what 0.2.0 read: for a study under way
        return replace(study, legacy=_study(name, cfg, full, ()))
    return study


def running_study(study: Study, store: Any) -> Study:
    """``study``, or its 0.2.0 reading when participants enrolled under that one already.

    A study on the colour demo started before the default ``exclude`` keeps its catalogue,
    targets and fingerprint (its participants continue); ``store``: the database.
    """
    if study.legacy is not None and store.has_participants(study.legacy.fingerprint):
        print(
            f"study: participants enrolled before 0.3.0 excluded names by default: this "
            f"study keeps every name ({len(study.excluded)} would be left out; write "
            "exclude = [] in its file to say so)",
            file=sys.stderr,
        )
        return study.legacy
    return study


def _study(name: str, cfg: dict, full: Catalogue, exclude: tuple[str, ...]) -> Study:
    """The study of file ``name`` (read as ``cfg``) over ``full`` less ``exclude``."""
    cat, new_id = full, np.arange(full.n_items)
    if exclude:
        try:
            cat, new_id = full.without(exclude)
        except ValueError as exc:
            raise _fail(name, str(exc)) from None
    n_choices = cfg.get("n_choices", N_CHOICES.default)
    if not _integer(n_choices) or not N_CHOICES.min <= n_choices <= N_CHOICES.max:
        raise _fail(name, f"n_choices: an integer from {N_CHOICES.min} to {N_CHOICES.max}")
    seed = cfg.get("seed", 0)
    if not _integer(seed) or seed < 0:
        raise _fail(name, "seed: an integer >= 0")
    max_queries = cfg.get("max_queries", 60)
    if not _integer(max_queries) or max_queries < 1:
        raise _fail(name, "max_queries: an integer >= 1")
    said = texts(name, cfg, {"title": "A search study", "consent": DEFAULT_CONSENT})
    methods = _methods(name, cfg.get("methods", ["gamma-ckl", "gauss"]))
    embeddings = embeddings_key(name, cfg.get("embeddings", {}), methods, cat, new_id)
    gamma, sigma = gamma_sigma(name, cfg, embeddings.get("gauss", cat.embedding))
    ends = completion(name, cfg)
    code, redirect = ends.get("finished", {}).get("code"), ends.get("finished", {}).get("redirect")
    show_names = cfg.get("show_names", True)
    if not isinstance(show_names, bool):
        raise _fail(name, "show_names: true or false")
    named = "name" in cfg
    attention = check_attention(name, cfg.get("attention", []), max_queries)
    guesses = check_guesses_key(name, cfg.get("guesses", 0), methods, n_choices, cat.n_items)
    return Study(
        title=said["title"],
        catalogue=cat,
        catalogue_source=cfg["catalogue"],
        methods=methods,
        targets=_targets(name, cfg.get("targets", 10), cat, seed, full, new_id),
        n_choices=n_choices,
        seed=seed,
        max_queries=max_queries,
        gamma=gamma,
        sigma=sigma,
        consent=said["consent"],
        completion_code=code,
        redirect=redirect,
        completion=ends,
        platform=platforms.file_platform(name, cfg),
        excluded=exclude,
        embeddings=embeddings,
        show_names=show_names,
        source_fingerprint=full.fingerprint,
        name=check_name(name, cfg["name"]) if named else "",
        named=named,
        path=name,
        spelled=tuple(cfg.get("_spelled", {}).items()),
        guesses=guesses,
        attention=attention,
    )
