"""A collect design exported: its triplets, the embeddings fitted to them, a catalogue, a study.

``tripletsearch export --collect collect.toml --out DIR`` adds to the export of
:mod:`~..commands.export_folder` (whose ``collect_triplets.csv`` holds the collected
triplets, with their details in ``collect_triplets_info.csv``):

``collect.toml``
    the collect file, as it was.
``embeddings/<model>.npy`` and ``embeddings/<model>.json``
    per model of the file's ``models``, and of the models the exported study's methods
    search (gamma-CKL and Probit): the embedding fitted to every triplet that counts (the
    samplers' and the held-out test queries' answers; participants flagged by their checks
    or withdrawn left out), and what it was fitted from (triplets, seed, gamma).
``catalogue/``
    a catalogue folder that ``tripletsearch serve --catalogue`` takes as it is: the items'
    names, colours and pictures (copied), ``embedding.npy`` the first model's, and
    ``embeddings/`` the others'; with pictures, ``stimuli.csv`` (its columns declared in
    :data:`~..export.TABLES`):
    each copied picture's path in the served catalogue, its bytes and SHA-256 as recorded at
    the experiment's first start (:mod:`~..catalogue.stimuli`): a catalogue file changed or
    missing since refuses the export (one line naming the item and the file; exit 2).
``collect_participants.csv``
    one row per participant of the collect, withdrawn ones too: their sampler, answers,
    the check rules' version, whether they are flagged and by which rules
    (``flagged_by``), the numbers of every check (attention, gold, repeats and those of
    clear queries, agreement with everyone else's answers: picks as predicted, answers
    scored, z and p-value; the median times per screen) and ``why``, a sentence per flag.
``study.toml``
    a study on that catalogue, each method searching the embedding of its own model (the
    paper's pairing: gamma-CKL for gamma-CKLSearch, Probit for GaussSearch, both fitted
    whether or not the collect file lists them), ready for ``tripletsearch serve --study``:
    the search task's title (:func:`study_title`; ``export --title``: another) and consent
    text (participants search; they no longer compare), the collect's ``show_names`` and
    its platform, id rule and completion codes (:data:`CARRIED_KEYS`, as the file wrote
    them).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from ...embedding import Embedding
from ...utils import derived_seed
from .. import clock
from ..catalogue import Catalogue
from ..catalogue.stimuli import StimuliChanged, check_recorded
from ..experiment import read_toml
from ..export import TABLES, write_table
from ..store import Store
from .file import CollectConfig
from .quality import (
    EXPORT_KINDS,
    Counted,
    answered_trials,
    checks,
    counted_sessions,
    read_agreement,
    triplet_rows,
)
from .rules import collect_sessions, counted_answers, participant_sampler
from .trial import implied

__all__ = [
    "collect_triplets",
    "collect_trials",
    "participant_checks",
    "write_collect_export",
    "METHOD_MODELS",
    "EXPORT_KINDS",
    "STIMULI_FILE",
]

#: The manifest of the pictures copied into the export's ``catalogue/`` (beside them; its
#: columns: ``TABLES["catalogue/stimuli.csv"]``).
STIMULI_FILE = "stimuli.csv"

# the model each search method's embedding is fitted with in the exported study
METHOD_MODELS = {"gamma-ckl": "gamma-ckl", "gauss": "probit"}
FIT_SEED = 11  # purpose of the export fits' seeds


def collect_triplets(
    store: Store,
    answered: dict | None = None,
    fingerprint: str | None = None,
    *,
    fast_server_ms: float | None = None,
    counted: Counted | None = None,
) -> list[dict[str, Any]]:
    """Every collected triplet that counts, with where it came from.

    Of the collect of key ``fingerprint`` (None: of every collect in the database), the
    sessions of :func:`~.quality.counted_sessions` (``fast_server_ms``: the server's
    clock check).

    Records ``{"row": (head, closer, farther), "collect", "session", "participant",
    "screen", "sampler", "kind", "response_ms"}``, by session and screen. Answers to
    burn-in, adaptive, random and test queries; skips give none, a pick among k candidates
    k - 1; participants withdrawn or flagged by their checks are left out (their answers
    stay in ``answers.csv``). ``counted``: those sessions as the caller read them already.
    """
    out: list[dict[str, Any]] = []
    if counted is None:  # (given: the caller's one reading, for both files)
        counted = counted_sessions(store, fingerprint, answered, fast_server_ms=fast_server_ms)
    for s, history in counted:
        for h in history:
            rows, _ = triplet_rows([h], EXPORT_KINDS)
            for row in rows:
                out.append(
                    {
                        "row": row,
                        "collect": s.experiment,
                        "session": s.id,
                        "participant": s.participant,
                        "screen": h["number"],
                        "sampler": h["query"].get("sampler"),
                        "kind": h["query"].get("kind"),
                        "response_ms": h.get("response_ms"),
                    }
                )
    return out


def collect_trials(
    store: Store,
    answered: dict | None = None,
    fingerprint: str | None = None,
    *,
    fast_server_ms: float | None = None,
    counted: Counted | None = None,
) -> list[dict[str, Any]]:
    """Every collected answer that counts as one trial (``collect_trials.csv``'s rows).

    The answers :func:`collect_triplets` cuts into triplets, one record each: ``collect``,
    ``session``, ``participant``, ``screen``, ``trial`` (``rank`` or ``odd-one-out``),
    ``head`` (None: odd-one-out), ``candidates`` (as shown), ``picks`` (item ids, in
    order), ``n_triplets`` (what it implies), ``sampler``, ``kind``, ``response_ms``.
    ``counted``: as :func:`collect_triplets`'s.
    """
    out: list[dict[str, Any]] = []
    if counted is None:  # (given: the caller's one reading, for both files)
        counted = counted_sessions(store, fingerprint, answered, fast_server_ms=fast_server_ms)
    for s, history in counted:
        for h, picks in answered_trials(history, EXPORT_KINDS):
            q = h["query"]
            out.append(
                {
                    "collect": s.experiment,
                    "session": s.id,
                    "participant": s.participant,
                    "screen": h["number"],
                    "trial": q.get("trial", "rank"),
                    "head": q.get("head"),
                    "candidates": [int(c) for c in q["candidates"]],
                    "picks": [int(q["candidates"][p]) for p in picks],
                    "n_triplets": len(implied(q, picks)),
                    "sampler": q.get("sampler"),
                    "kind": q.get("kind"),
                    "response_ms": h.get("response_ms"),
                }
            )
    return out


def _picks(history: list[dict]) -> list[dict]:
    """The answers that count: picks (not skips) on the samplers' and test queries.

    Not undone; each gives k - 1 triplets; checks and repeats give none.
    """
    return [
        h for h in counted_answers(history)
        if h["query"].get("kind") in EXPORT_KINDS and h["choice"] is not None
    ]  # fmt: skip


def _ms(value: float | None, digits: int) -> float | None:
    """A median time in ms to the digits its clock carries.

    The server's: microseconds; the page's: a tenth of a millisecond at best.
    """
    return None if value is None else round(value, digits)


def participant_checks(
    store: Store, config: CollectConfig, *, fast_server_ms: float | None = None
) -> list[dict[str, Any]]:
    """Per participant of the collect: their checks and flags (``collect_participants.csv``).

    As the dashboard shows them (:func:`~.quality.checks`, with the agreement the refitter
    last scored and ``fast_server_ms``), withdrawn participants too.
    """
    fp = config.fingerprint
    answered, scores = store.all_answers(), read_agreement(store, fp)
    fast_server_ms = clock.bound(store, fp, fast_server_ms)  # (None: as recorded)
    sessions = {s.participant: s for s in collect_sessions(store, fp, withdrawn=True)}
    out = []
    for row in store.iter_participants():
        if row.study != fp:
            continue
        s = sessions.get(row.id)
        history = [] if s is None else answered.get(s.id, [])
        agreement = None if s is None else scores.get(s.id)
        got = checks(history, agreement, fast_server_ms=fast_server_ms)
        a = got["agreement"] or {}
        out.append(
            {
                "participant": row.id, "number": int(row.number),
                "session": None if s is None else s.id,
                "sampler": participant_sampler(config, row, s),
                "answers": len(_picks(history)),
                "withdrawn": row.withdrawn is not None, "rules": got["rules"],
                "flagged": got["flagged"], "flagged_by": " ".join(f["rule"] for f in got["flags"]),
                "attention_passed": got["attention"][0], "attention_of": got["attention"][1],
                "gold_passed": got["gold"][0], "gold_of": got["gold"][1],
                "repeats_agreed": got["repeats"][0], "repeats_of": got["repeats"][1],
                "clear_repeats_agreed": got["clear_repeats"][0],
                "clear_repeats_of": got["clear_repeats"][1],
                "agreement_agreed": a.get("agreed"), "agreement_answers": a.get("answers"),
                "agreement_z": a.get("z"), "agreement_p": a.get("p_value"),
                "server_ms_median": _ms(got["server_ms"], 3),
                "response_ms_median": _ms(got["response_ms"], 1),
                "why": "; ".join(f["why"] for f in got["flags"]),
            }
        )  # fmt: skip
    return out


def _write_participants(
    store: Store, config: CollectConfig, folder: Path, fast_server_ms: float | None
) -> None:
    """``collect_participants.csv``: :func:`participant_checks`, one row each (declared)."""
    rows = participant_checks(store, config, fast_server_ms=fast_server_ms)
    write_table(folder, TABLES["collect_participants.csv"], rows)


def _fit(config: CollectConfig, model: str, triplets: np.ndarray) -> tuple[np.ndarray, dict]:

    seed = derived_seed(config.seed, FIT_SEED, len(triplets))
    emb = Embedding(model, config.dim, n_items=config.catalogue.n_items, random_state=seed)
    emb.fit(triplets)
    gamma = float(emb.gamma_)
    info = {
        "model": model,
        "dim": config.dim,
        "n_items": config.catalogue.n_items,
        "n_triplets": int(len(triplets)),
        "random_state": seed,
        "gamma_": None if np.isnan(gamma) else gamma,
        "status_": str(emb.status_),
    }
    return np.asarray(emb.embedding_, dtype=np.float64), info


def _catalogue_folder(
    cat: Catalogue, out: Path, embeddings: dict[str, np.ndarray], recorded: dict | None = None
) -> None:
    """``out`` as a catalogue folder: items.csv, the pictures, the embeddings.

    ``out``: the export folder's ``catalogue/``. With pictures: :data:`STIMULI_FILE`, the
    manifest of the copied pictures (the bytes and SHA-256 of the copy, which are the
    original's). Both CSVs from their declarations (:data:`~..export.TABLES`).
    ``recorded``: the manifest recorded at the experiment's first start
    (:func:`~..catalogue.stimuli.check_recorded`); a copied picture whose bytes are not
    the recorded ones raises :class:`~..catalogue.stimuli.StimuliChanged`.
    """
    out.mkdir(parents=True, exist_ok=True)
    rows, stimuli = [], []
    for i in range(cat.n_items):
        row = {"name": cat.names[i], "hex": None if cat.hex is None else cat.hex[i]}
        if cat.images is not None:
            src = cat.image_path(i)
            row["image"] = rel = f"images/{i}{'' if src is None else src.suffix}"
            if src is not None:
                (out / "images").mkdir(exist_ok=True)
                data = src.read_bytes()  # the bytes copied are the bytes hashed
                (out / rel).write_bytes(data)
                digest = hashlib.sha256(data).hexdigest()
                want = (recorded or {}).get(cat.images[i])
                if want is not None and (want.get("bytes"), want.get("sha256")) != (
                    len(data),
                    digest,
                ):
                    raise StimuliChanged(
                        f"item {cat.names[i]!r}: file {src} changed since the experiment was "
                        "first started (while exporting); put the recorded file back"
                    )
                stimuli.append(
                    {"item": i, "name": cat.names[i], "file": rel, "source": cat.images[i]}
                    | {"bytes": len(data), "sha256": digest}
                )
        rows.append(row)
    # (the declarations' paths are the export folder's: catalogue/items.csv, ...)
    held = ["name"] + ["hex"] * (cat.hex is not None) + ["image"] * (cat.images is not None)
    write_table(out.parent, TABLES["catalogue/items.csv"], rows, columns=held)
    if cat.images is not None:
        write_table(out.parent, TABLES["catalogue/stimuli.csv"], stimuli)
    first, *_ = embeddings
    np.save(out / "embedding.npy", embeddings[first])
    (out / "embeddings").mkdir(exist_ok=True)
    for model, X in embeddings.items():
        np.save(out / "embeddings" / f"{model}.npy", X)


#: The collect file's keys its study keeps as they are: how participants arrive and leave
#: (the platform and its id rule, the completion codes and redirects per outcome).
CARRIED_KEYS = (
    "platform", "require_platform_id", "strict_ids", "completion_code", "redirect",
    "completion",
)  # fmt: skip


def _toml_value(value: Any) -> str:
    """``value`` (a string, boolean, number, list or table of them) as TOML spells it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):  # JSON's strings and numbers are TOML's
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    raise TypeError(f"no TOML spelling for {type(value).__name__}")


def study_title(cat: Catalogue) -> str:
    """The title of the study ``export --collect`` writes.

    The search task's, not the collect's (which asks which items look alike).
    """
    return "Find the picture" if cat.images is not None else "Find the item"


def _study_file(
    config: CollectConfig,
    embeddings: dict[str, np.ndarray],
    title: str | None = None,
    carried: dict[str, Any] | None = None,
) -> str:
    """A study of gamma-CKLSearch against GaussSearch on the exported catalogue.

    Participants see what the collect's saw of the items (``show_names``: pictures only
    stay pictures only), under the search task's title (:func:`study_title`; or
    ``title``, the owner's); the texts of the search task are the study's own (the
    collect's title, instructions and consent describe another task). ``carried``: the
    collect file's :data:`CARRIED_KEYS` it gives, written as they are (its platform, id
    rule and completion codes: people arrive from and return to the same platform).
    """
    carried = carried or {}
    lines = [
        f"title = {json.dumps(study_title(config.catalogue) if title is None else title)}",
        'catalogue = "catalogue"',
        'methods = ["gamma-ckl", "gauss"]',
        f"targets = {min(10, config.catalogue.n_items)}",
        f"n_choices = {min(4, config.catalogue.n_items)}",
        f"seed = {config.seed}",
        f"show_names = {'true' if config.show_names else 'false'}",
        "# title and consent: the search task's own (the collect's were of another task);",
        '# write title = "..." or consent = "..." to give others',
    ]
    flat = [k for k in CARRIED_KEYS if k in carried and k != "completion"]
    if flat or "completion" in carried:
        lines += ["", "# the collect's platform, id rule and completion codes, kept: on a platform"]
        lines += ["# where the study is a study of its own, give it its own codes"]
    lines += [f"{k} = {_toml_value(carried[k])}" for k in flat]
    lines += [
        "",
        "# each method searches the embedding of its own model, fitted to the collected",
        "# triplets (the paper's pairing): gamma-ckl the gamma-CKL fit, gauss the Probit fit",
        "[embeddings]",
    ]
    for method, model in METHOD_MODELS.items():
        assert model in embeddings  # write_collect_export fits every study method's model
        lines.append(f'{method} = "catalogue/embeddings/{model}.npy"')
    ends = carried.get("completion")
    for outcome, given in ends.items() if isinstance(ends, dict) else ():
        lines += ["", f"[completion.{outcome}]"]
        lines += [f"{k} = {_toml_value(v)}" for k, v in given.items()]
    return "\n".join(lines) + "\n"


def write_collect_export(
    store: Store,
    config: CollectConfig,
    collect_file: Any,
    out: Any,
    rows: Any = None,
    *,
    title: str | None = None,
    fast_server_ms: float | None = None,
) -> dict[str, Any]:
    """Write the collect design's part of the export into ``out``; what was fitted.

    See the module docstring. ``rows``: the collected triplets as the rest of the export
    read them (one snapshot: the triplets written are the triplets fitted; None: read them
    now). ``title``: the study's (None: the collect's). ``fast_server_ms``: the server's
    clock check (:func:`~.quality.checks`). Returns ``{"triplets": n, "models": [...]}``.
    :class:`~..catalogue.stimuli.StimuliChanged` (a ValueError, one line naming the item
    and the file) when a catalogue file is not the one recorded at the first start.
    """
    # the stimuli as recorded at the first start, or refused (before anything is fitted)
    recorded = check_recorded(store, config)
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(collect_file, d / "collect.toml")
    _write_participants(store, config, d, fast_server_ms)  # (at its Psych-DS place)
    if rows is None:
        got = collect_triplets(store, fingerprint=config.fingerprint, fast_server_ms=fast_server_ms)
        rows = [t["row"] for t in got]
    mine = [tuple(int(v) for v in r) for r in rows]
    if not mine:
        raise ValueError(f"{collect_file}: no triplets collected yet; nothing to fit")
    triplets = np.array(mine, dtype=np.int64)
    (d / "embeddings").mkdir(exist_ok=True)
    embeddings: dict[str, np.ndarray] = {}
    # the file's models first (the catalogue's embedding is the first's), then the
    # study's methods' models it did not list
    models = list(dict.fromkeys([*config.models, *METHOD_MODELS.values()]))
    for model in models:
        X, info = _fit(config, model, triplets)
        embeddings[model] = X
        np.save(d / "embeddings" / f"{model}.npy", X)
        text = json.dumps(info, indent=2) + "\n"
        (d / "embeddings" / f"{model}.json").write_text(text, encoding="utf-8")
    _catalogue_folder(config.catalogue, d / "catalogue", embeddings, recorded)

    carried = {k: v for k, v in read_toml(str(collect_file)).items() if k in CARRIED_KEYS}
    text = _study_file(config, embeddings, title, carried)
    (d / "study.toml").write_text(text, encoding="utf-8")
    return {"triplets": len(triplets), "models": models}
