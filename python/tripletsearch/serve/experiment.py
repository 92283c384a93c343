"""What the study and collect files share: their reading, their base, and their identity.

Reading the TOML, naming the file in every error, the renamed keys (``k``: ``n_choices``,
:func:`renamed_keys`), the catalogue they name, the texts people read (:func:`texts`), the
end of a participant's part (the completion code or the link back to a crowdsourcing
platform), the base of both files (:class:`Experiment`: its name, key and identity from one
list of design keys) and the experiment a file is (:class:`Identity`, :func:`resolve`).

An experiment has a ``name`` (given in its file, or derived from its title at its first
start) that the database keeps with the key its rows are kept under and the design it began
with: the keys that change what people are asked or how their answers count. Once people
took part, a file whose design differs from the stored one is refused
(:class:`ExperimentChanged`: the keys that changed, as the file writes them, and the two
ways on); the other keys (texts, ``max_queries`` upward, the completion code, ...) apply.
A database written before names (schema 4) keeps its rows under the old identity of the
design (a hash of its keys): an unchanged file adopts them on its first start.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ..utils import warn_renamed
from .catalogue import DEMOS, Catalogue, demo_catalogue, load_catalogue
from .catalogue.stimuli import record_or_check
from .modes import mode_class

__all__ = [
    "fail",
    "is_integer",
    "renamed_keys",
    "legacy_hash",
    "texts",
    "Experiment",
    "read_toml",
    "file_catalogue",
    "check_name",
    "derive_name",
    "Identity",
    "ExperimentChanged",
    "resolve",
    "bind",
    "experiment_files",
    "MAX_NAME",
]

MAX_NAME = 64  # characters of an experiment's name
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


def fail(path: str, message: str) -> ValueError:
    """The error of file ``path``: ``"<path>: <message>"``."""
    return ValueError(f"{path}: {message}")


def is_integer(value: Any) -> bool:
    """An int that is not a bool (TOML's true is not 1)."""
    return isinstance(value, int) and not isinstance(value, bool)


def read_toml(name: str) -> dict:
    """The file's table; a ValueError naming it when it is not valid TOML."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - the serve extra installs tomli there
        import tomli as tomllib
    try:
        with open(name, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise fail(name, f"not valid TOML ({exc})") from None


#: Keys an experiment file took under another name: old -> new (the old one warns).
RENAMED_KEYS = {"k": "n_choices"}
#: When they were renamed (the vocabulary of 0.2.0), and the release that drops the old.
RENAMED_IN, REMOVED_IN = "0.2.0", "0.4.0"


def renamed_keys(path: str, cfg: dict, *, stacklevel: int = 5) -> dict[str, str]:
    """Move the old keys of file ``path``'s table ``cfg`` to their new names, in place.

    Each old key warns once (a DeprecationWarning naming the new one); both at once is a
    ValueError. Returns how the file spells a renamed key (``{"n_choices": "k"}``).
    """
    spelled = {}
    for old, new in RENAMED_KEYS.items():
        if old in cfg:
            if new in cfg:
                raise fail(path, f"{old}: renamed {new}; give {new} only")
            warn_renamed(path, old, new, stacklevel, renamed_in=RENAMED_IN, removed_in=REMOVED_IN)
            cfg[new] = cfg.pop(old)
            spelled[new] = old
    return spelled


def texts(path: str, cfg: dict, defaults: dict[str, str]) -> dict[str, str]:
    """The texts people read (title, consent, instructions, ...): ``defaults``' keys.

    Each the file's or its default, a string (the message names the key).
    """
    out = {}
    for key, default in defaults.items():
        value = cfg.get(key, default)
        if not isinstance(value, str):
            raise fail(path, f"{key}: a string")
        out[key] = value
    return out


def file_catalogue(name: str, source: Any, *, embedding: bool = True) -> Catalogue:
    """The catalogue the file names: a demo, or a path relative to the file."""
    if not isinstance(source, str) or not source:
        raise fail(name, "catalogue: give a demo name ('colours') or a catalogue path")
    if source in DEMOS:
        return demo_catalogue(source)
    p = Path(source)
    return load_catalogue(p if p.is_absolute() else Path(name).parent / p, embedding=embedding)


def check_name(path: str, value: Any) -> str:
    """An experiment's ``name`` as its file gives it: letters, digits, ``.``, ``_``, ``-``."""
    if not isinstance(value, str) or not value or len(value) > MAX_NAME:
        raise fail(path, f"name: a string of 1 to {MAX_NAME} characters")
    if not _NAME.match(value):
        raise fail(
            path,
            f"name: lower-case letters, digits, '.', '_' and '-', beginning with a letter or "
            f"a digit (got {value!r})",
        )
    return value


def derive_name(title: str, kind: str) -> str:
    """A name from a title: ``"Find the colour!"`` -> ``"find-the-colour"`` (else ``kind``)."""
    folded = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode().lower()
    slug = re.sub(r"[^a-z0-9]+", "-", folded).strip("-")[:MAX_NAME].strip("-")
    return slug or kind


@dataclass(frozen=True)
class Identity:
    """What makes an experiment file the experiment it is.

    ``kind``: "study" or "collect"; ``name``: the file's, or derived from its title
    (``named`` False); ``design``: the keys that cannot change once people took part
    (values comparable as JSON); ``settings``: the others; ``spelled``: how the file
    writes a design key when not by its own name (``{"n_choices": "k"}``); ``legacy``: the
    keys its rows were kept under before names (the design's hash, first the current one);
    ``grows``: settings that may only grow (``max_queries``).
    """

    path: str
    kind: str
    name: str
    named: bool
    design: dict
    settings: dict
    spelled: dict
    legacy: tuple[str, ...]
    grows: tuple[str, ...] = ("max_queries",)

    def changed(self, design: dict, settings: dict) -> list[str]:
        """The keys of the file that differ from a stored design, as the file writes them.

        A setting that may only grow (``max_queries``) is a change when it shrinks.
        """
        keys = sorted(set(design) | set(self.design))
        # a key the stored design lacks (added by a later version) is no change when empty
        stored = {**{k: v for k, v in self.design.items() if v in ([], {}, None)}, **design}
        out = [k for k in keys if _json(stored.get(k)) != _json(self.design.get(k))]
        for k in self.grows:
            old, new = settings.get(k), self.settings.get(k)
            if isinstance(old, int) and isinstance(new, int) and new < old:
                out.append(k)
        return [self.spelled.get(k, k) for k in out]


class Experiment:
    """The base of the study and collect files (frozen dataclasses): name, key, identity.

    A subclass declares its ``kind``, its :attr:`DESIGN_KEYS` (the keys that cannot change
    once people took part: its identity's design, listed once) and :attr:`SETTING_KEYS`
    (the others it keeps), and has the fields ``title``, ``catalogue``, ``name`` (the
    file's, or "" to derive it from the title), ``named``, ``key`` (once resolved in a
    database), ``path`` and ``spelled`` (:func:`renamed_keys`). It may say how a design
    key is stored (:meth:`design_value`), the keys its rows had before names
    (:attr:`design_fingerprint`, :meth:`legacy_keys`), which of its readings a database
    runs (:meth:`running`), what the service's modes take from it (:meth:`mode_settings`)
    and what it sets of its server's settings (:meth:`server_settings`, :attr:`CLOSED`).
    """

    kind: ClassVar[str]
    DESIGN_KEYS: ClassVar[tuple[str, ...]]
    SETTING_KEYS: ClassVar[tuple[str, ...]]
    #: Why a server of it refuses free sessions (where its participants go instead).
    CLOSED: ClassVar[str] = "this server runs an experiment"
    #: :meth:`design_value`'s answer for a key left out of the design (as stored before)
    OMIT: ClassVar[object] = object()

    @property
    def fingerprint(self) -> str:
        """The key its rows are kept under: the stored one once resolved (:func:`resolve`).

        Before: :attr:`design_fingerprint`.
        """
        return self.key or self.design_fingerprint  # type: ignore[attr-defined]

    @property
    def design_fingerprint(self) -> str:
        """The design's identity before names (a hash), where an older version kept rows."""
        raise NotImplementedError

    def design_value(self, key: str) -> Any:
        """Design key ``key`` as stored (default: the attribute; :attr:`OMIT`: left out)."""
        if key == "catalogue":
            return self.catalogue.fingerprint  # type: ignore[attr-defined]
        return getattr(self, key)

    def legacy_keys(self) -> tuple[str, ...]:
        """The keys its rows were kept under before names, the current one first."""
        return (self.design_fingerprint,)

    def running(self, store: Any) -> Experiment:
        """The reading of the file that ``store``'s participants took part in (default: this)."""
        return self

    def mode_settings(self) -> dict[str, Any]:
        """What the service's modes take from it (:class:`~.modes.Settings` fields)."""
        return {}

    def server_settings(self, config: Any) -> Any:
        """The settings of a server of it: ``config`` (a ServeConfig) with its own, if any."""
        return config

    NEWER_SETTINGS: ClassVar[tuple[str, ...]] = ()  # added later: left out while unset

    def identity(self) -> Identity:
        """What makes this file the experiment it is (:func:`resolve`)."""
        values = {k: self.design_value(k) for k in self.DESIGN_KEYS}
        kept = {k: v for k, v in values.items() if v is not self.OMIT}
        design = json.loads(json.dumps(kept))  # tuples as lists: as stored
        values = {k: getattr(self, k) for k in self.SETTING_KEYS}  # (a newer one if set)
        settings = json.loads(
            json.dumps({k: v for k, v in values.items() if v or k not in self.NEWER_SETTINGS})
        )
        me: Any = self
        return Identity(
            me.path, self.kind, me.name or derive_name(me.title, self.kind), me.named,
            design, settings, dict(me.spelled), self.legacy_keys(),
        )  # fmt: skip


class ExperimentChanged(ValueError):
    """A file that would change an experiment people took part in (the message says how)."""


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def design_hash(design: dict) -> str:
    """A design's identity before names: 16 hex digits of its keys' SHA-256."""
    return hashlib.sha256(_json(design).encode()).hexdigest()[:16]


def legacy_hash(design: dict) -> str:
    """:func:`design_hash` of a design as the first versions spelled it (``n_choices``: ``k``).

    The key an experiment's rows had before names (:attr:`Experiment.design_fingerprint`).
    """
    old = {new: was for was, new in RENAMED_KEYS.items()}
    return design_hash({old.get(k, k): v for k, v in design.items()})


def _refuse(ident: Identity, row: Any, changed: list[str], people: int) -> ExperimentChanged:
    """The refusal of a file that changes ``changed`` of ``row``, which ``people`` took part in.

    A setting that may only grow and that the file lowers (``max_queries``: the stored value
    is the highest a start gave) says so, with the value to write: the file may be the one
    people began with, before a start raised it.
    """
    noun = "participant" if people == 1 else "participants"
    lowered = [
        k
        for k in ident.grows
        if isinstance(row.settings.get(k), int)
        and isinstance(ident.settings.get(k), int)
        and ident.settings[k] < row.settings[k]
    ]
    design = [k for k in changed if k not in lowered]
    new = f'give the file a new name (name = "...") to start a new {ident.kind} in the same '
    new += "database."
    if design:
        text = (
            f"{ident.path}: {people} {noun} took part in {ident.kind} {row.name!r} as it was "
            f"first started; this file changes {', '.join(design)}. Undo the change to go on "
            f"with it, or {new}"
        )
        for k in lowered:
            text += (
                f" It also lowers {k} from {row.settings[k]} to {ident.settings[k]}: write "
                f"{k} = {row.settings[k]} or more."
            )
        return ExperimentChanged(text)
    said = ", ".join(f"{k} = {row.settings[k]}" for k in lowered)
    wrote = ", ".join(f"{k} = {ident.settings[k]}" for k in lowered)
    return ExperimentChanged(
        f"{ident.path}: {people} {noun} took part in {ident.kind} {row.name!r} with {said} "
        f"(the highest a start gave it); this file says {wrote}, and {' and '.join(lowered)} "
        f"may be raised, never lowered. Write {said} (or more) in the file to go on with it, "
        f"or {new}"
    )


def _match(store: Any, ident: Identity) -> Any:
    """The stored experiment ``ident`` is, or None (a new one).

    ExperimentChanged when a file without a name could be any of several.
    """
    if ident.named:
        row = store.experiment(ident.name)
        if row is not None and row.kind != ident.kind:
            raise ExperimentChanged(
                f"{ident.path}: name {ident.name!r} is a {row.kind} of this database; give "
                f"the {ident.kind} another name"
            )
        return row
    mine = store.experiments(ident.kind)
    by_name = [r for r in mine if r.name == ident.name]
    if by_name:
        return by_name[0]
    same = [r for r in mine if not ident.changed(r.design, r.settings)]
    if len(same) == 1:
        return same[0]
    if len(mine) == 1:
        return mine[0]  # the database's one experiment of this kind, its file edited
    if len(mine) > 1:
        names = ", ".join(repr(r.name) for r in mine)
        raise ExperimentChanged(
            f"{ident.path}: this database holds the {ident.kind} experiments {names}; name "
            f'one of them in the file (name = "..."), or a new name for a new {ident.kind}'
        )
    return None


def resolve(store: Any, ident: Identity, *, register: bool = True) -> tuple[str, str]:
    """The (name, key) of the experiment file ``ident`` is, in ``store``.

    ``register``: a server starting: a new experiment is stored; one nobody took part in
    yet takes the file's design; one people took part in takes its settings, or refuses a
    file that changes its design (:class:`ExperimentChanged`). Without it (a worker, the
    refitter, a report, an export): read only; an experiment not stored yet is found by its
    rows of an older version (its legacy key), else it is new (its key: what it would get).
    """
    row = _match(store, ident)
    if row is not None:
        changed = ident.changed(row.design, row.settings)
        people = store.participant_count(row.key)
        if changed and people:
            raise _refuse(ident, row, changed, people)
        if register:
            store.update_experiment(row.name, ident.design, _with_file(ident, row.settings))
        return row.name, row.key
    taken = {r.key for r in store.experiments()}
    key = next((k for k in ident.legacy if k not in taken and store.key_in_use(k)), None)
    if key is None:  # new: the design's hash, unless another experiment has it
        first = ident.legacy[0]
        key = first if first not in taken else design_hash({"name": ident.name, "of": first})
    name = ident.name
    if not ident.named and store.experiment(name) is not None:  # another kind's name
        name = f"{name}-{ident.kind}"
    if register:
        store.add_experiment(name, ident.kind, key, ident.design, _with_file(ident, {}))
    return name, key


def _with_file(ident: Identity, stored: dict) -> dict:
    """The settings to store: the file's, and every file the experiment was started from.

    ``files``: absolute paths, kept across starts (``tripletsearch export`` refuses an
    ``--out`` that holds one: :func:`~.export.check_out`).
    """
    files = [f for f in stored.get("files", []) if isinstance(f, str)]
    if ident.path:
        files.append(os.path.abspath(ident.path))
    kept = {k: stored[k] for k in ("stimuli", "fast_server_ms") if k in stored}  # (.clock)
    return {**ident.settings, **kept, "files": sorted(set(files))}


def experiment_files(store: Any) -> list[tuple[str, str, str]]:
    """Every file the experiments of ``store`` were started from: (kind, name, path)."""
    return [(r.kind, r.name, f) for r in store.experiments() for f in r.settings.get("files", [])]


def bind(experiment: Any, store: Any, *, register: bool = True) -> Any:
    """``experiment`` (a Study or CollectConfig) with its name and key in ``store``.

    Its reading that ``store`` runs (:meth:`Experiment.running`: a study under way keeps
    what it began with), resolved as :func:`resolve` says (``register``: a server
    starting: its catalogue's files recorded or checked,
    :func:`.catalogue.stimuli.record_or_check`); ExperimentChanged when the file would
    change an experiment people took part in, StimuliChanged when a file of its catalogue
    did. One already bound is returned as it is unless ``register``.
    """
    if experiment.key and not register:
        return experiment
    experiment = experiment.running(store)
    name, key = resolve(store, experiment.identity(), register=register)
    experiment = dataclasses.replace(experiment, name=name, key=key)
    if register:  # its catalogue's files: recorded at the first start, then checked
        record_or_check(store, experiment)
        getattr(experiment, "registered", lambda store: None)(store)  # (a collect's checks)
    return experiment


def listing(store: Any) -> list[dict[str, Any]]:
    """The experiments ``store`` holds, by name.

    Records ``{"name", "kind", "key", "participants", "sessions"}``; rows of an older
    version without a name get one derived from their kind and key (``study-3f9a0c21``).
    """
    groups = store.groups()
    out = []
    for r in store.experiments():
        g = groups.get(r.key, {})
        out.append(
            {
                "name": r.name,
                "kind": r.kind,
                "key": r.key,
                "participants": int(g.get("participants", 0)),
                "sessions": int(g.get("sessions", 0)),
            }
        )
    named = {r["key"] for r in out}
    for key, g in sorted(groups.items()):
        if key not in named:
            kinds = {mode_class(m).experiment_kind for m in g["modes"]}  # its sessions'
            kind = kinds.pop() if len(kinds) == 1 else "study"
            out.append(
                {
                    "name": f"{kind}-{key[:8]}",
                    "kind": kind,
                    "key": key,
                    "participants": int(g.get("participants", 0)),
                    "sessions": int(g.get("sessions", 0)),
                }
            )
    return out


def describe(found: list[dict[str, Any]]) -> str:
    """The experiments of :func:`listing`, one per line (for the command line)."""
    if not found:
        return "this database holds no study or collect"
    lines = ["this database holds:"]
    for e in found:
        lines.append(
            f"  {e['kind']} {e['name']!r}: {e['participants']} participants, "
            f"{e['sessions']} sessions"
        )
    return "\n".join(lines)


def pick(found: list[dict[str, Any]], kind: str | None, name: str | None) -> dict | None:
    """The experiment named ``name`` (of ``kind``) in :func:`listing`'s ``found``.

    Without a name: the only one of ``kind``, or None when there is none. ValueError when
    the name is not there, or when several could be meant (the message lists them).
    """
    mine = [e for e in found if kind is None or e["kind"] == kind]
    if name is not None:
        hit = [e for e in mine if e["name"] == name]
        if not hit:
            known = ", ".join(repr(e["name"]) for e in mine) or "none"
            raise ValueError(f"--name: no {kind or 'experiment'} {name!r} here (known: {known})")
        return hit[0]
    if len(mine) > 1:
        known = ", ".join(repr(e["name"]) for e in mine)
        raise ValueError(f"--name: this database holds several: {known}; say which")
    return mine[0] if mine else None
