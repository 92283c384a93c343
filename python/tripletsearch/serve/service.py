"""The search service without HTTP: sessions of people searching a catalogue.

Every screen and answer in the database (:mod:`.store`), searchers rebuilt from it.

Modes
-----
``"find"``
    Find a catalogue item (:class:`tripletsearch.DiscreteSearch`, gamma-CKLSearch): each
    screen shows ``k`` items (2 to 8, default 4); the person picks the closest to what they
    want (``choice``), says it is the one (``found``), or skips (``choice`` null: none is
    closer; the items are only ruled out).
``"mix"`` (colour catalogues)
    Mix any colour (:class:`tripletsearch.ContinuousSearch`, the global method):
    each screen shows two swatches and the current estimate; ``found`` accepts the
    estimate. The search runs in the sRGB cube [0, 1]^3, whose every point is a
    displayable colour (only about a fifth of CIELAB's bounding box is inside the sRGB
    gamut, so searching CIELAB's box would show colours a screen cannot display); the
    screens report CIELAB coordinates.

Workers share no memory: a session's searcher is rebuilt from its stored screens and
answers (:meth:`~tripletsearch.DiscreteSearch.observe` replays them as they were shown,
so a session started by an earlier version of the library continues), and an in-process
cache keeps live searchers, caught up from the database when another worker moved on.
"""

from __future__ import annotations

import hashlib
import hmac
import numbers
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import __version__
from ..continuous import ContinuousSearch
from ..discrete import DiscreteSearch
from .catalogue import Catalogue
from .colour import srgb_to_hex, srgb_to_lab
from .store import Conflict, SessionRow, Store

__all__ = ["SearchService", "ServiceError", "MODES"]

MODES = ("find", "mix")
K_RANGE = (2, 8)
DEFAULT_K = 4
# the mix mode's user model: people compare colours perceptually (about CIELAB distance)
# while the search models distance in the sRGB cube, so it assumes a less reliable user
# than it gets (gamma = 2, lapse 0.02). Measured with simulated gamma = 3 people who
# perceive CIELAB, 200 targets uniform in the cube, 40 answers: median error 3.8 CIELAB
# units, 90th percentile 12.8 (gamma = 3 without lapse: median 3.8, 90th percentile 21).
MIX_GAMMA, MIX_LAPSE = 2.0, 0.02


class ServiceError(Exception):
    """A request the service refuses: HTTP ``status`` and a message for the client."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def _object(body: Any, fields: set[str]) -> dict:
    """A JSON object body with only ``fields`` (None: empty)."""
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise ServiceError(400, "body: expected a JSON object")
    unknown = set(body) - fields
    if unknown:
        raise ServiceError(400, f"unknown field(s): {sorted(unknown)}")
    return body


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _round(v: Any, digits: int = 3) -> list[float]:
    return [round(float(x), digits) + 0.0 for x in np.asarray(v).reshape(-1)]  # no -0.0


@dataclass
class _Live:
    """A live searcher and the session state it reflects.

    The screen it is at, the undos it has seen, the answers it holds.
    """

    searcher: Any
    position: int
    undos: int
    n_answers: int


class _Cache:
    """Live searchers by session id (LRU)."""

    def __init__(self, size: int):
        self.size = size
        self._d: OrderedDict[str, _Live] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, sid: str) -> _Live | None:
        with self._lock:
            v = self._d.get(sid)
            if v is not None:
                self._d.move_to_end(sid)
            return v

    def put(self, sid: str, live: _Live) -> None:
        with self._lock:
            self._d[sid] = live
            self._d.move_to_end(sid)
            while len(self._d) > self.size:
                self._d.popitem(last=False)

    def drop(self, sid: str) -> None:
        with self._lock:
            self._d.pop(sid, None)


def _gamma(value: Any) -> float | str:
    """A find-mode gamma: "auto" (inferred per person) or a number > 0."""
    if value == "auto":
        return "auto"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"gamma: expected a number > 0 or 'auto', got {value!r}")
    return float(value)


class SearchService:
    """Sessions of people searching ``catalogue``, stored in ``store``.

    Parameters
    ----------
    catalogue : Catalogue
    store : Store
        Set up (``store.setup()``) before the service starts.
    gamma : float or "auto"
        The gamma-CKL power assumed of people (the paper's user study: 3), or "auto":
        each person's inferred while they search (:class:`tripletsearch.DiscreteSearch`).
    max_queries : int
        Screens per session before it ends by itself.
    cache_size : int
        Live searchers kept per process.
    """

    def __init__(
        self,
        catalogue: Catalogue,
        store: Store,
        *,
        gamma: float | str = 3.0,
        max_queries: int = 300,
        cache_size: int = 4096,
    ):
        self.catalogue = catalogue
        self.store = store
        self.gamma: float | str = _gamma(gamma)
        self.max_queries = int(max_queries)
        self.modes = MODES if catalogue.has_colours else ("find",)
        self._templates: dict[tuple[int, str, float | str, float], DiscreteSearch] = {}
        self._templates_lock = threading.Lock()
        self._cache = _Cache(cache_size)
        self._stripes = [threading.Lock() for _ in range(256)]
        self.closed_reason = ""  # set: POST /api/sessions refused with this message

    # ------------------------------------------------------------------ searchers
    def _template(self, k: int, params: dict) -> DiscreteSearch:
        """A session over the catalogue to spawn new ones from (its store built once)."""
        key = (
            k,
            str(params.get("method", "gamma-ckl")),
            _gamma(params.get("gamma", self.gamma)),
            float(params.get("sigma", 0.1)),
        )
        with self._templates_lock:
            t = self._templates.get(key)
            if t is None:
                t = DiscreteSearch(
                    self.catalogue.embedding,
                    method=key[1],
                    n_choices=k,
                    gamma=key[2],
                    sigma=key[3],
                    random_state=0,
                    n_jobs=1,
                )
                self._templates[key] = t
            return t

    def _new_searcher(self, mode: str, k: int, seed: int, params: dict | None = None) -> Any:
        """A session's searcher before any answer, with its stored parameters.

        A session keeps the parameters it started with.
        """
        params = params or {}
        if mode == "find":
            return self._template(k, params).spawn(random_state=seed)
        return ContinuousSearch(
            3,
            float(params.get("gamma", MIX_GAMMA)),
            bounds=(0.0, 1.0),
            lapse=float(params.get("lapse", MIX_LAPSE)),
            method="global",
            random_state=seed,
            n_jobs=1,
        )

    def _lock_for(self, sid: str) -> threading.Lock:
        return self._stripes[hash(sid) % len(self._stripes)]

    def _apply(self, searcher: Any, mode: str, query: dict, choice: int | None) -> None:
        """One stored answer into a searcher (as shown, whatever version asked it)."""
        if mode == "find":
            shown = query["shown"]
            searcher.observe(shown, None if choice is None else int(shown[choice]))
        else:
            a, b = query["rgb"]
            searcher.observe(a, b, choice == 0)

    def _searcher_at(self, row: SessionRow) -> Any:
        """The session's searcher holding its answers that count.

        The cached one, caught up from the database when another worker moved the session on,
        or rebuilt from the stored screens (after an undo elsewhere, a restart, an upgrade).
        """
        live = self._cache.get(row.id)
        if live is None or live.undos != row.undos or live.position > row.queries:
            live = _Live(self._new_searcher(row.mode, row.k, int(row.seed), row.params), 0, 0, 0)
        if live.position < row.queries:
            for h in self.store.effective(row.id, start=live.position):
                if h["found"]:
                    raise ServiceError(409, "this session is finished")
                self._apply(live.searcher, row.mode, h["query"], h["choice"])
                live.n_answers += 1
        if live.n_answers != row.n_answers:  # the session moved on meanwhile
            raise Conflict(row.id)
        return live.searcher

    # ------------------------------------------------------------------ screens
    def _find_screen(self, number: int, shown: np.ndarray) -> tuple[dict, dict]:
        ids = [int(i) for i in shown]
        return (
            {"number": number, "items": [self.catalogue.item(i) for i in ids]},
            {"shown": ids},
        )

    def _mix_screen(self, number: int, searcher: ContinuousSearch) -> tuple[dict, dict]:
        a, b = searcher.ask()
        est = np.clip(searcher.estimate(), 0.0, 1.0)
        pts = np.clip(np.vstack([a, b]), 0.0, 1.0)
        lab = srgb_to_lab(pts)
        return (
            {
                "number": number,
                "points": [_round(lab[0]), _round(lab[1])],
                "hex": srgb_to_hex(pts),
                "estimate": {"lab": _round(srgb_to_lab(est)), "hex": srgb_to_hex(est)[0]},
            },
            {"rgb": [a.tolist(), b.tolist()], "estimate": est.tolist()},
        )

    def _next_screen(self, mode: str, number: int, searcher: Any) -> tuple[dict, dict] | None:
        """The screen ``number`` from the searcher, or None when the search is over."""
        if number >= self.max_queries:
            return None
        if mode == "find":
            if searcher.done:
                return None
            shown = searcher.ask()
            if len(shown) == 0:
                return None
            return self._find_screen(number, shown)
        return self._mix_screen(number, searcher)

    # ------------------------------------------------------------------ API
    def create(self, body: Any) -> dict:
        """A new session.

        ``{"mode": "find" | "mix", "k": 2..8}`` (k: find mode only) ->
        ``{"id", "token", "screen"}``.
        """
        if self.closed_reason:
            raise ServiceError(403, self.closed_reason)
        body = _object(body, {"mode", "k"})
        mode = body.get("mode", "find")
        if mode not in self.modes:
            raise ServiceError(400, f"mode: expected one of {list(self.modes)}, got {mode!r}")
        k = body.get("k", DEFAULT_K if mode == "find" else 2)
        if isinstance(k, bool) or not isinstance(k, numbers.Integral):
            raise ServiceError(400, f"k: expected an integer, got {k!r}")
        k = int(k)
        if mode == "mix" and k != 2:
            raise ServiceError(400, "k: the mix mode shows 2 swatches per screen")
        if mode == "find" and not K_RANGE[0] <= k <= min(K_RANGE[1], self.catalogue.n_items):
            raise ServiceError(
                400,
                f"k: expected {K_RANGE[0]} to {min(K_RANGE[1], self.catalogue.n_items)} items "
                f"per screen, got {k}",
            )
        if mode == "find":
            params: dict[str, Any] = {"method": "gamma-ckl", "gamma": self.gamma}
        else:
            params = {
                "method": "global",
                "gamma": MIX_GAMMA,
                "lapse": MIX_LAPSE,
                "bounds": [0.0, 1.0],
                "space": "srgb",
            }
        sid, token = self.start_session(mode, k, params)
        screen = self.store.screen(sid, 0)
        assert screen is not None
        return {"id": sid, "token": token, "screen": screen[0]}

    def start_session(
        self,
        mode: str,
        k: int,
        params: dict,
        *,
        participant: str | None = None,
        slot: int | None = None,
        target: int | None = None,
        token: str | None = None,
        seed: int | None = None,
    ) -> tuple[str, str]:
        """Create a session with its first screen; (id, token).

        Study sessions name their participant, slot and target (Conflict when the slot has a
        session already), take the participant's token and a seed of the study's (others: a
        random seed).
        """
        sid, token = secrets.token_urlsafe(16), token or secrets.token_urlsafe(32)
        seed = secrets.randbits(63) if seed is None else int(seed)
        searcher = self._new_searcher(mode, k, seed, params)
        screen = self._next_screen(mode, 0, searcher)
        assert screen is not None  # a catalogue has >= 2 items
        if mode == "find":
            params = {**params, "selection": searcher.selection}
        self.store.create_session(
            sid=sid,
            token_hash=_token_hash(token),
            mode=mode,
            k=k,
            seed=str(seed),
            params=params,
            catalogue=self.catalogue.fingerprint if mode == "find" else "srgb",
            library=__version__,
            payload=screen[0],
            query=screen[1],
            participant=participant,
            slot=slot,
            target=target,
        )
        self._cache.put(sid, _Live(searcher, 0, 0, 0))
        return sid, token

    def _authorized(self, sid: str, token: str | None) -> SessionRow:
        if not isinstance(sid, str) or not 0 < len(sid) <= 64:
            raise ServiceError(404, "no such session")
        row = self.store.session(sid)
        if row is None:
            raise ServiceError(404, "no such session")
        if not token or not hmac.compare_digest(_token_hash(token), row.token_hash):
            raise ServiceError(401, "missing or wrong token for this session")
        return row

    @staticmethod
    def _screen_number(body: dict) -> int:
        if "screen" not in body:
            raise ServiceError(400, "screen: required")
        screen = body["screen"]
        if isinstance(screen, bool) or not isinstance(screen, int) or screen < 0:
            raise ServiceError(400, f"screen: expected a screen number >= 0, got {screen!r}")
        return screen

    def _check_answer(self, body: Any) -> tuple[int, int | None, bool]:
        body = _object(body, {"screen", "choice", "found"})
        screen = self._screen_number(body)
        choice, found = body.get("choice"), body.get("found", False)
        if choice is not None and (isinstance(choice, bool) or not isinstance(choice, int)):
            raise ServiceError(400, f"choice: expected an index or null, got {choice!r}")
        if not isinstance(found, bool):
            raise ServiceError(400, f"found: expected true or false, got {found!r}")
        return screen, choice, found

    def _current(self, row: SessionRow, number: int, kind: str, *key: Any) -> dict | None:
        """The stored reply when screen ``number`` was handled before (a repeat), else None.

        Before returning None, checks that ``number`` is the current screen of an open session.
        """
        if number < row.queries or (row.done and number <= row.queries):
            return self._repeat(row.id, number, kind, *key)
        if number > row.queries:
            raise ServiceError(
                400, f"screen: {number} has not been shown (the current screen is {row.queries})"
            )
        return None

    def answer(self, sid: str, token: str | None, body: Any) -> dict:
        """Record the answer to a screen; ``{"screen": next or None, "done", "queries"}``.

        The same answer again returns the same reply; a different one is a 409.
        """
        row = self._authorized(sid, token)
        number, choice, found = self._check_answer(body)
        repeat = self._current(row, number, "answer", choice, found)
        if repeat is not None:
            return repeat
        if row.mode == "find" and row.catalogue != self.catalogue.fingerprint:
            raise ServiceError(409, "this session was started on another catalogue")
        stored = self.store.screen(sid, number)
        if stored is None:
            raise ServiceError(409, "this session's current screen is missing")
        payload, query = stored
        size = len(payload["items"]) if row.mode == "find" else 2
        if choice is not None and not 0 <= choice < size:
            raise ServiceError(
                400, f"choice: expected an index in 0..{size - 1} or null, got {choice}"
            )
        if found and row.mode == "find" and choice is None:
            raise ServiceError(400, "choice: found needs the item that is the target")
        if not found and row.mode == "mix" and choice is None:
            raise ServiceError(400, "choice: required in mix mode (or found: true)")
        with self._lock_for(sid):
            return self._advance(row, number, payload, query, choice, found)

    def _advance(
        self,
        row: SessionRow,
        number: int,
        payload: dict,
        query: dict,
        choice: int | None,
        found: bool,
    ) -> dict:
        sid = row.id
        fresh = self.store.session(sid)  # another request may have moved it while we waited
        if fresh is None or fresh.queries != number or fresh.done:
            return self._repeat(sid, number, "answer", choice, found)
        row = fresh
        result: Any = None
        searcher = None
        nxt = None
        if found:
            done = True
            if row.mode == "find":
                item = int(query["shown"][choice])
                result = {"target": item, "name": self.catalogue.names[item]}
            else:
                result = {"estimate": payload["estimate"]}
        else:
            try:
                searcher = self._searcher_at(row)
            except Conflict:
                self._cache.drop(sid)
                return self._repeat(sid, number, "answer", choice, found)
            self._apply(searcher, row.mode, query, choice)
            nxt = self._next_screen(row.mode, number + 1, searcher)
            done = nxt is None
            if done:
                result = (
                    {"target": None, "reason": "no items left or the screen limit reached"}
                    if row.mode == "find"
                    else {"estimate": self._mix_screen(number + 1, searcher)[0]["estimate"]}
                )
        reply = {
            "screen": None if nxt is None else nxt[0],
            "done": done,
            "queries": row.n_answers + 1,
        }
        try:
            self.store.record_answer(
                sid,
                number,
                choice=choice,
                found=found,
                reply=reply,
                done=done,
                result=result,
                next_payload=None if nxt is None else nxt[0],
                next_query=None if nxt is None else nxt[1],
            )
        except Conflict:  # another worker recorded this screen first
            self._cache.drop(sid)
            return self._repeat(sid, number, "answer", choice, found)
        except Exception:
            self._cache.drop(sid)
            raise
        if done or searcher is None:
            self._cache.drop(sid)
        else:
            self._cache.put(sid, _Live(searcher, number + 1, row.undos, row.n_answers + 1))
        return reply

    def undo(self, sid: str, token: str | None, body: Any) -> dict:
        """Take back the last answer that counts, from the current screen ``{"screen": n}``.

        The answer stays recorded (marked undone), the undo is recorded as screen n's answer,
        and screen n + 1 shows the undone screen again. The same undo again returns the same
        reply.
        """
        row = self._authorized(sid, token)
        number = self._screen_number(_object(body, {"screen"}))
        repeat = self._current(row, number, "undo", None, False)
        if repeat is not None:
            return repeat
        if row.n_answers == 0:
            raise ServiceError(400, "screen: there is no answer to undo")
        with self._lock_for(sid):
            last = self.store.effective(sid)[-1]
            payload = {**last["payload"], "number": number + 1}
            reply = {"screen": payload, "done": False, "queries": row.n_answers - 1}
            try:
                self.store.record_undo(
                    sid,
                    number,
                    undone_screen=last["number"],
                    reply=reply,
                    payload=payload,
                    query=last["query"],
                )
            except Conflict:
                return self._repeat(sid, number, "undo", None, False)
            finally:
                self._cache.drop(sid)
        return reply

    def _repeat(self, sid: str, number: int, kind: str, choice: Any, found: bool) -> dict:
        """A screen handled before: its reply again when the request is the same."""
        stored = self.store.answer(sid, number)
        if stored is None:
            raise ServiceError(409, "this session is finished")
        was, s_choice, s_found, reply = stored
        if was != kind:
            raise ServiceError(
                409,
                f"screen {number} was "
                + ("undone" if was == "undo" else "answered")
                + f" already; the first {'undo' if was == 'undo' else 'answer'} stands",
            )
        if (s_choice, s_found) != (choice, found):
            raise ServiceError(
                409,
                f"screen {number} was already answered (choice {s_choice}, found "
                f"{str(s_found).lower()}); the first answer stands",
            )
        return reply

    def get(self, sid: str, token: str | None) -> dict:
        """The session: id, mode, done, queries, the current screen, the history.

        The history: every recorded answer and undo, undone answers marked.
        """
        row = self._authorized(sid, token)
        history = [
            {
                "screen": h["number"],
                "kind": h["kind"],
                "shown": {k: v for k, v in h["payload"].items() if k != "number"},
                "choice": h["choice"],
                "found": h["found"],
                "undone": h["undone"],
                "seconds": round(h["answered_at"] - h["shown_at"], 3),
            }
            for h in self.store.history(sid)
        ]
        current = None
        if not row.done:
            stored = self.store.screen(sid, row.queries)
            current = None if stored is None else stored[0]
        return {
            "id": row.id,
            "mode": row.mode,
            "k": row.k,
            "done": row.done,
            "queries": row.n_answers,
            "screen": current,
            "result": row.result,
            "history": history,
        }

    def catalogue_items(self) -> dict:
        """The catalogue: title, ``n_items``, the modes and every item's public record."""
        cat = self.catalogue
        return {
            "title": cat.title,
            "n_items": cat.n_items,
            "modes": list(self.modes),
            "items": [cat.item(i) for i in range(cat.n_items)],
        }

    def health(self) -> dict:
        """``{"status": "ok", "database_ms"}``: the time a database ping took (raises on error)."""
        t0 = time.perf_counter()
        self.store.ping()
        return {"status": "ok", "database_ms": round(1e3 * (time.perf_counter() - t0), 2)}
