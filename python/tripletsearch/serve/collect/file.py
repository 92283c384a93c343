"""The collect file and its identity: what ``tripletsearch serve --collect`` asks people.

A collect file (TOML) names the catalogue (which may have no embedding yet: the triplets
are collected to learn it), the query samplers that run side by side, and what each
participant sees::

    title = "Which looks more alike?"
    catalogue = "pictures/"          # a catalogue folder or CSV file, or a demo name
    samplers = ["active", "random"]  # TripletSampler methods; people assigned at random
    test_share = 0.1                 # queries drawn at random and kept apart (a test set)
    k = 2                            # candidates per query (2: "which of the two")
    dim = 2                          # the embeddings' dimension
    models = ["gamma-ckl", "t-ste"]  # fitted for export
    max_queries = 100                # queries per participant, then the debrief
    burn_in = 20                     # random queries before the adaptive ones
    attention = [10, 40]             # positions of checks with a known answer
    repeats = [25, 60]               # positions of repeated queries (agreement)
    instructions = "..."             # shown before the first query
    debrief = "..."                  # shown after the last
    completion_code = "C0DE42"       # optional (crowdsourcing platforms)
    redirect = "https://..."         # optional: a link back there
    seed = 0
    consent = "..."

:func:`load_collect` checks every key and names the file and the key of a problem.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ...collect._methods import METHODS
from ...embedding._train import MODEL_ALIASES, MODELS
from ..catalogue import Catalogue
from ..configfile import ending, file_catalogue, read_toml
from ..configfile import fail as _fail
from ..configfile import is_integer as _integer

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
    "k": 2,
    "dim": 2,
    "models": ["gamma-ckl"],
    "max_queries": 100,
    "burn_in": 20,
    "attention": [],
    "repeats": [],
    "instructions": "Pick the item most similar to the one on top.",
    "debrief": "Thank you: your answers help us learn how people see these items.",
    "completion_code": None,
    "redirect": None,
    "seed": 0,
    "consent": DEFAULT_COLLECT_CONSENT,
}
MAX_K = 8  # candidates per query at most (a screen's worth)


@dataclass(frozen=True)
class CollectConfig:
    """A collect file, checked (see the module docstring)."""

    title: str
    catalogue: Catalogue
    samplers: tuple[str, ...]
    test_share: float
    k: int
    dim: int
    models: tuple[str, ...]
    max_queries: int
    burn_in: int
    attention: tuple[int, ...]
    repeats: tuple[int, ...]
    instructions: str
    debrief: str
    completion_code: str | None
    redirect: str | None
    seed: int
    consent: str

    @cached_property
    def fingerprint(self) -> str:
        """Identifies the collect design in the database.

        Its participants, queries and embedding versions are kept under it: a hash of the
        keys that make the design.
        """
        design = {
            "catalogue": self.catalogue.fingerprint,
            "samplers": self.samplers,
            "k": self.k,
            "dim": self.dim,
            "seed": self.seed,
            "test_share": self.test_share,
            "burn_in": self.burn_in,
            "attention": self.attention,
            "repeats": self.repeats,
            "max_queries": self.max_queries,
        }
        return hashlib.sha256(json.dumps(design, sort_keys=True).encode()).hexdigest()[:16]


def _read(name: str) -> dict:
    cfg = read_toml(name)
    unknown = set(cfg) - set(_DEFAULTS) - {"catalogue"}
    if unknown:
        known = sorted([*_DEFAULTS, "catalogue"])
        raise _fail(name, f"unknown key(s) {sorted(unknown)} (known: {known})")
    return {**_DEFAULTS, **cfg}


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


def _positions(name: str, key: str, value: Any, max_queries: int) -> tuple[int, ...]:
    """Distinct query positions (0-based) within the participant's queries."""
    if not isinstance(value, list) or not all(_integer(v) for v in value):
        raise _fail(name, f"{key}: a list of query positions (integers)")
    if any(not 0 <= v < max_queries for v in value) or len(set(value)) != len(value):
        raise _fail(name, f"{key}: distinct positions in 0..{max_queries - 1}")
    return tuple(sorted(value))


def load_collect(path: Any) -> CollectConfig:
    """Read and check a collect file; a ``ValueError`` names the file and the key."""
    name = os.fspath(path)
    cfg = _read(name)
    if "catalogue" not in cfg:
        raise _fail(name, "catalogue: required (a demo name or a catalogue path)")
    cat = file_catalogue(name, cfg["catalogue"], embedding=False)
    if cat.n_items < 3:
        raise _fail(name, f"catalogue: a triplet needs 3 items, it has {cat.n_items}")
    ints = {key: cfg[key] for key in ("k", "dim", "max_queries", "burn_in", "seed")}
    for key, v in ints.items():
        if not _integer(v) or v < (0 if key in ("burn_in", "seed") else 1):
            raise _fail(name, f"{key}: an integer >= {0 if key in ('burn_in', 'seed') else 1}")
    if not 2 <= cfg["k"] <= min(MAX_K, cat.n_items - 1):
        raise _fail(name, f"k: candidates per query, 2 to {min(MAX_K, cat.n_items - 1)}")
    share = cfg["test_share"]
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share < 1:
        raise _fail(name, "test_share: a number in [0, 1)")
    attention = _positions(name, "attention", cfg["attention"], cfg["max_queries"])
    repeats = _positions(name, "repeats", cfg["repeats"], cfg["max_queries"])
    if set(attention) & set(repeats):
        raise _fail(name, "attention and repeats: a position can hold one check only")
    if any(r == 0 for r in repeats):
        raise _fail(name, "repeats: a repeat needs an earlier query (position >= 1)")
    for key in ("title", "instructions", "debrief", "consent"):
        if not isinstance(cfg[key], str):
            raise _fail(name, f"{key}: a string")
    code, redirect = ending(name, cfg)
    return CollectConfig(
        title=cfg["title"],
        catalogue=cat,
        samplers=_names(name, "samplers", cfg["samplers"], METHODS),
        test_share=float(share),
        k=cfg["k"],
        dim=cfg["dim"],
        models=_names(name, "models", cfg["models"], MODELS),
        max_queries=cfg["max_queries"],
        burn_in=cfg["burn_in"],
        attention=attention,
        repeats=repeats,
        instructions=cfg["instructions"],
        debrief=cfg["debrief"],
        completion_code=code,
        redirect=redirect,
        seed=cfg["seed"],
        consent=cfg["consent"],
    )
