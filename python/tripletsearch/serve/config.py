"""The server's configuration: one frozen object, built once, handed to every process.

``tripletsearch serve`` builds a :class:`ServeConfig` from its command line once; its
workers get :meth:`ServeConfig.to_dict` (the ``TRIPLETSEARCH_SERVE`` environment variable)
and rebuild it with :meth:`ServeConfig.from_dict`; :func:`~.web.app.create_app` takes it.
What a server serves is chosen by one rule (:func:`serving_catalogue`): an experiment's
catalogue, else the catalogue given.

Every default of a setting has its home here (or, for the server's clock bound, in
:mod:`.clock`; the demos' names in :mod:`.catalogue.demo`): the command line, the modes
and the study files import them. A low layer: it imports only the errors, the clock, the
catalogue and the library.
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from typing import Any

from .. import GammaCKL, simulate_discrete
from .catalogue import DEMOS, Catalogue, demo_catalogue, load_catalogue
from .clock import FAST_SERVER_MS

__all__ = [
    "ServeConfig",
    "Limits",
    "serving_catalogue",
    "check_gamma",
    "GAMMA",
    "MAX_QUERIES",
    "MAX_GUESSES",
    "HSTS_MAX_AGE",
]

#: The gamma-CKL power a free find session assumes of people: the library's assumed user
#: (:func:`~tripletsearch.simulate_discrete`'s default, its native search's), not a second one.
GAMMA: float = float(inspect.signature(simulate_discrete).parameters["gamma"].default)
#: Screens per free session before it ends by itself.
MAX_QUERIES = 300
#: Best guesses offered with each screen at most (0, the default: the paper's protocol).
MAX_GUESSES = 8
#: Seconds of ``Strict-Transport-Security: max-age`` over HTTPS by default: a year.
HSTS_MAX_AGE = 31_536_000


def check_gamma(value: Any) -> float | str:
    """A find-mode gamma: "auto" (inferred per person) or a number > 0.

    The number checked as the library checks a gamma-CKL power
    (:class:`~tripletsearch.GammaCKL`); a ValueError naming ``gamma`` otherwise.
    """
    if value == "auto":
        return "auto"
    said = f"gamma: expected a number > 0 or 'auto', got {value!r}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(said)
    try:
        return float(GammaCKL(value).gamma)
    except ValueError:
        raise ValueError(said) from None


@dataclass(frozen=True)
class Limits:
    """What the service allows one client address, per minute and per worker process.

    How a client's address is found and counted: :mod:`.web.limits`.

    Parameters
    ----------
    sessions_per_minute : int
        Free sessions a client may start per minute (0: no limit).
    enrolments_per_minute : int
        Study participants a client may enrol per minute (0: no limit).
    max_open_sessions : int
        Free sessions open at once on the server (not finished, an answer within the last
        hour), all clients together (0: no limit); past it, 503.
    trusted_proxies : frozenset of str
        Addresses of reverse proxies whose ``X-Forwarded-For`` is believed.
    """

    sessions_per_minute: int = 30
    enrolments_per_minute: int = 10
    max_open_sessions: int = 10_000
    trusted_proxies: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        for name in ("sessions_per_minute", "enrolments_per_minute", "max_open_sessions"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{name}: expected an integer >= 0, got {v!r}")
        object.__setattr__(self, "trusted_proxies", frozenset(self.trusted_proxies))

    def to_dict(self) -> dict:
        """JSON-safe fields (the proxies sorted): what worker processes are started with."""
        return {**self.__dict__, "trusted_proxies": sorted(self.trusted_proxies)}

    @classmethod
    def from_dict(cls, d: dict) -> Limits:
        """The limits of :meth:`to_dict`'s output."""
        return cls(**{**d, "trusted_proxies": frozenset(d.get("trusted_proxies", ()))})


#: No limits (a server in front sets its own): a :class:`ServeConfig`'s default;
#: ``tripletsearch serve`` gives ``Limits()``'s defaults unless told.
NO_LIMITS = Limits(0, 0, 0)


def _integer(name: str, value: Any, low: int, *, none: bool = False) -> None:
    if none and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        also = " or None" if none else ""
        raise ValueError(f"{name}: expected an integer >= {low}{also}, got {value!r}")


@dataclass(frozen=True)
class ServeConfig:
    """What a server runs with: its database, its settings, what it serves.

    Parameters
    ----------
    database : str, optional
        SQLAlchemy URL (None: ``sqlite:///tripletsearch-sessions.sqlite``).
    gamma : float or "auto"
        The gamma-CKL power assumed of people in find mode, or "auto" (inferred per person).
    max_queries : int
        Screens per free session before it ends by itself (a study: its own).
    random_state : int, optional
        Seeds free sessions' searchers in the order they start (None: a secret seed each).
    limits : Limits
        Per-address rates, open sessions, trusted proxies (:class:`Limits`;
        default: no limits, :data:`NO_LIMITS`).
    memory : int, optional
        Bytes each process may hold (None: live searchers bounded by count only).
    threads : int
        Native threads of each search step.
    steps_at_once : int, optional
        Search steps computed at once per process (None: no bound).
    guesses : int
        Best guesses with each screen of a free find session that asks for none.
    fast_server_ms : float
        A collect participant whose median time per screen by the server's clock is under
        this is flagged (default :data:`~.clock.FAST_SERVER_MS`; 0: never).
    admin_token : str, optional
        Bearer token of the admin endpoints (None: off). Never shown by ``repr``.
    demo, catalogue : str, optional
        What the server serves without an experiment: a demo's name, or a catalogue path.
    design : str, optional
        The design file (:func:`~.service.processes.write_design`) of the study or collect
        the server registered: its workers read it, never the experiment's file.
    shared : dict, optional
        The catalogue's arrays shared by every worker (:func:`~.catalogue.shared.share_catalogue`).
    hsts_max_age : int
        Seconds of ``Strict-Transport-Security: max-age`` sent with every reply over HTTPS
        (:class:`~.web.middleware.StrictTransport`; default :data:`HSTS_MAX_AGE`, a year;
        0: not sent). Plain HTTP never sends it.
    certificate : dict, optional
        The HTTPS certificate's file and dates (:func:`~.web.tls.certificate_dates`): the
        dashboards say when it expires soon (:func:`~.web.tls.expiry_notice`).
    """

    database: str | None = None
    gamma: float | str = GAMMA
    max_queries: int = MAX_QUERIES
    random_state: int | None = None
    limits: Limits = NO_LIMITS
    memory: int | None = None
    threads: int = 1
    steps_at_once: int | None = None
    guesses: int = 0
    fast_server_ms: float = FAST_SERVER_MS
    admin_token: str | None = field(default=None, repr=False)
    demo: str | None = None
    catalogue: str | None = None
    design: str | None = None
    shared: dict | None = None
    hsts_max_age: int = HSTS_MAX_AGE
    certificate: dict | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "gamma", check_gamma(self.gamma))
        _integer("max_queries", self.max_queries, 1)
        _integer("random_state", self.random_state, 0, none=True)
        _integer("memory", self.memory, 0, none=True)
        _integer("threads", self.threads, 1)
        _integer("steps_at_once", self.steps_at_once, 1, none=True)
        _integer("guesses", self.guesses, 0)
        _integer("hsts_max_age", self.hsts_max_age, 0)
        ms = self.fast_server_ms
        if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not 0 <= ms < float("inf"):
            raise ValueError(f"fast_server_ms: expected a number >= 0, got {ms!r}")
        if not isinstance(self.limits, Limits):
            raise TypeError(f"limits: expected a Limits, got {type(self.limits).__name__}")
        for name in ("database", "admin_token", "demo", "catalogue", "design"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name}: expected a string or None, got {value!r}")
        if self.demo is not None and self.catalogue is not None:
            raise ValueError("demo and catalogue: give one of them")
        if self.shared is not None:
            object.__setattr__(self, "shared", dict(self.shared))

    def replace(self, **changes: Any) -> ServeConfig:
        """A copy with ``changes`` (checked as a new one)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON values (``limits`` as :meth:`Limits.to_dict`)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["limits"] = self.limits.to_dict()
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ServeConfig:
        """The configuration :meth:`to_dict` gave; ValueError naming unknown keys.

        Missing keys take their defaults.
        """
        if not isinstance(d, dict):
            raise TypeError(f"d: expected a dict, got {type(d).__name__}")
        unknown = sorted(set(d) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise ValueError(f"ServeConfig: unknown key(s) {unknown}")
        values = dict(d)
        if "limits" in values:
            values["limits"] = Limits.from_dict(values["limits"])
        return cls(**values)

    def load_catalogue(self) -> Catalogue | None:
        """The catalogue of ``demo`` or ``catalogue`` (None: neither)."""
        if self.demo:
            return demo_catalogue(self.demo)
        if self.catalogue:
            return load_catalogue(self.catalogue)
        return None


# what a server without a catalogue or an experiment is told
NO_CATALOGUE = f"give --catalogue PATH, --demo {'/'.join(DEMOS)}, --study FILE or --collect FILE"


def serving_catalogue(experiment: Any, catalogue: Catalogue | None) -> Catalogue:
    """What a server of ``experiment`` serves: its catalogue, else ``catalogue``.

    ``catalogue`` is kept when it is the experiment's (the same fingerprint: e.g. with its
    arrays shared by the workers). ValueError when there is neither.
    """
    if experiment is None:
        if catalogue is None:
            raise ValueError(NO_CATALOGUE)
        return catalogue
    if catalogue is not None and catalogue.fingerprint == experiment.catalogue.fingerprint:
        return catalogue
    return experiment.catalogue
