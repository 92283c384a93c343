"""Find mode: find a catalogue item by comparisons (gamma-CKLSearch)."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ...colour import hex_to_srgb, srgb_to_lab
from ...discrete import DiscreteSearch, ItemStore
from ..catalogue import Catalogue
from ..config import MAX_GUESSES, check_gamma
from ..errors import Invalid
from ..schema import Answer
from ..store import Store
from .base import Mode, Screen, ScreenSizes, SessionInfo, Settings

__all__ = ["FindMode", "N_CHOICES", "MAX_GUESSES", "check_gamma", "check_guesses", "opening_of"]

N_CHOICES = ScreenSizes(2, 8, 4)  # items per screen (at most the catalogue's)
# new sessions' first screen: one rule for every method (DiscreteSearch's "uniform")
OPENING = "uniform"
# the opening of a session stored before its params recorded one: 0.3.0's default (an
# opening decides screen 0 only, which is stored: a rebuilt session replays its screens)
STORED_OPENING = "random"


def check_guesses(value: Any, n_choices: int, n_items: int) -> int:
    """Best guesses per screen, checked (ValueError naming ``guesses``).

    An integer 0 to :data:`MAX_GUESSES`; the screen and the strip together at most the
    catalogue's items.
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_GUESSES:
        raise ValueError(f"guesses: expected an integer from 0 to {MAX_GUESSES}, got {value!r}")
    if value and n_choices + value > n_items:
        raise ValueError(
            f"guesses: {n_choices} items a screen and {value} guesses need {n_choices + value} "
            f"items; the catalogue has {n_items}"
        )
    return int(value)


def opening_of(params: dict) -> str:
    """A session's opening: its params' (recorded by :meth:`FindMode.started`).

    New params (a mode's or a study's, before the session starts: no ``selection`` yet)
    open by :data:`OPENING`; stored params without one by :data:`STORED_OPENING`.
    """
    opening = params.get("opening")
    if opening is not None:
        return str(opening)
    return STORED_OPENING if "selection" in params else OPENING


class FindMode(Mode):
    """Find a catalogue item (:class:`tripletsearch.DiscreteSearch`, gamma-CKLSearch).

    Each screen shows ``n_choices`` items (2 to 8, default 4); the person picks the closest
    to what they want (``choice``), says it is the one (``found``), or skips (``choice``
    null: none is closer; the items are only ruled out). A session with a target (a
    study's) accepts "this is it" on its target only.

    With ``guesses`` m > 0 (its params; default: the server's, 0) each screen comes with a
    strip of the searcher's m best guesses (the payload's ``guesses``, the query's
    ``offered``): positions k to k + m - 1 of ``choice`` name them (k items on the
    screen), with ``found`` only; any other answer passes the strip over, which the
    searcher takes as evidence (:class:`~tripletsearch.DiscreteSearch`'s ``miss``).

    Shared by its sessions: one template searcher per (screen size, method, gamma, sigma,
    opening, guesses), whose item store is built once and which new sessions spawn from. New
    sessions open by one rule for every method (``opening="uniform"``: the first screen
    from the session's seed alone, so a study's methods cannot be told by it); a stored
    session keeps the opening its params record.
    """

    name = "find"

    @classmethod
    def offered_by(cls, catalogue: Catalogue) -> bool:
        """Catalogues with an embedding (one still to be learned cannot be searched)."""
        return catalogue.has_embedding

    def __init__(self, catalogue: Catalogue, settings: Settings, store: Store | None = None):
        super().__init__(catalogue, settings, store)
        self.gamma = check_gamma(settings.gamma)
        check_guesses(settings.guesses, 0, catalogue.n_items)  # the server's default
        self._templates: dict[tuple[int, str, float | str, float, str, int], DiscreteSearch] = {}
        self._templates_lock = threading.Lock()
        self._store: ItemStore | None = None  # the catalogue's store_file, mapped

    @property
    def space(self) -> str:
        """The catalogue's fingerprint."""
        return self.catalogue.fingerprint

    @property
    def screen_sizes(self) -> ScreenSizes:
        """2 to 8 items (at most the catalogue's), 4 by default."""
        most = min(N_CHOICES.max, self.catalogue.n_items)
        return ScreenSizes(N_CHOICES.min, most, min(N_CHOICES.default, most))

    def new_params(self, n_choices: int | None, guesses: int | None = None) -> tuple[int, dict]:
        """The screen size in range; gamma-CKLSearch with the server's gamma.

        ``guesses``: best guesses per screen (None: the server's default), kept in the
        params when > 0.
        """
        sizes = self.screen_sizes
        n = sizes.default if n_choices is None else n_choices
        if not sizes.min <= n <= sizes.max:
            raise Invalid(
                f"n_choices: expected {sizes.min} to {sizes.max} items per screen, got {n}"
            )
        m = self.settings.guesses if guesses is None else guesses
        try:
            m = check_guesses(m, n, self.catalogue.n_items)
        except ValueError as exc:
            raise Invalid(str(exc)) from None
        return n, {"method": "gamma-ckl", "gamma": self.gamma, **({"guesses": m} if m else {})}

    def _template(self, n_choices: int, params: dict) -> DiscreteSearch:
        """A session over the catalogue to spawn new ones from (its store built once)."""
        key = (
            n_choices,
            str(params.get("method", "gamma-ckl")),
            check_gamma(params.get("gamma", self.gamma)),
            float(params.get("sigma", 0.1)),
            opening_of(params),
            int(params.get("guesses", 0)),  # stored sessions without: none (the paper's)
        )
        with self._templates_lock:
            t = self._templates.get(key)
            if t is None:
                kwargs = dict(
                    method=key[1],
                    n_choices=n_choices,
                    gamma=key[2],
                    sigma=key[3],
                    opening=key[4],
                    guesses=key[5],
                    random_state=0,
                    n_jobs=self.settings.threads,
                )
                own = (self.settings.embeddings or {}).get(key[1])  # the method's own
                if own is not None:
                    t = DiscreteSearch(own, **kwargs)  # type: ignore[arg-type]
                elif self.catalogue.store_file is None:
                    t = DiscreteSearch(self.catalogue.embedding, **kwargs)  # type: ignore[arg-type]
                else:  # the item store the server's workers share (serve.shared)
                    if self._store is None:
                        self._store = ItemStore.map(self.catalogue.store_file)
                    t = _over_store(self.catalogue.embedding, self._store, kwargs)
                self._templates[key] = t
            return t

    def searcher(self, n_choices: int, params: dict, seed: int) -> DiscreteSearch:
        """A spawn of the template for the stored method, gamma, sigma, opening, guesses."""
        return self._template(n_choices, params).spawn(random_state=seed)

    def session_bytes(self, n_choices: int, params: dict) -> int:
        """A session's bytes: the template's own.

        Posterior weights (4 bytes per item, and per user hypothesis with ``gamma="auto"``)
        and shown items (a bit per item).
        """
        return self._template(n_choices, params).state_bytes

    def started(self, searcher: Any, params: dict) -> dict:
        """The parameters, the selection rule the library chose and the opening."""
        return {**params, "selection": searcher.selection, "opening": searcher.settings.opening}

    def next_screen(self, searcher: Any, number: int) -> Screen | None:
        """The items the searcher asks, or None when none are left."""
        if searcher.done:
            return None
        shown = searcher.ask()
        if len(shown) == 0:
            return None
        ids = [int(i) for i in shown]
        payload = {"number": number, "items": [self.catalogue.item(i) for i in ids]}
        query: dict[str, Any] = {"shown": ids}
        if searcher.guesses:  # the strip: its items, stored to replay the pass-over
            strip = [int(i) for i in searcher.offered]
            payload["guesses"] = [self.catalogue.item(i) for i in strip]
            query["offered"] = strip
        return Screen(payload, query)

    def for_target(self, screen: Screen, target: int, attention: bool, seed: int) -> Screen:
        """``screen`` of a search for ``target`` (a study's), as the study's checks read it.

        The query gains ``distances``: each candidate's distance to the target in the
        catalogue's embedding (6 significant digits), from which the checks judge the pick;
        an ``attention`` screen shows the target in place of a candidate (at a position
        drawn from ``seed``) and is marked ``check = "attention"`` in the query only: the
        payload's form is every screen's.
        """
        shown, query = list(screen.query["shown"]), dict(screen.query)
        payload = screen.payload
        if attention and target not in shown + query.get("offered", []):
            at = int(np.random.default_rng([seed, 0xA77]).integers(len(shown)))
            shown[at] = int(target)
            query["shown"] = shown
            payload = {**payload, "items": [self.catalogue.item(i) for i in shown]}
        if attention:
            query["check"] = "attention"
        X = np.asarray(self.catalogue.embedding)
        d = np.sqrt(((X[shown] - X[int(target)]) ** 2).sum(axis=1))
        query["distances"] = [float(f"{v:.6g}") for v in d]
        return Screen(payload, query, screen.claim)

    def check_answer(self, session: SessionInfo, screen: Screen, answer: Answer) -> None:
        """A position on the screen or the strip, or null.

        "this is it" names an item, the target if set; a strip's position only with it.
        """
        shown, strip = screen.query["shown"], screen.query.get("offered", [])
        k, choice = len(shown), answer.choice
        if strip and choice is not None and not 0 <= choice < k + len(strip):
            raise Invalid(
                f"choice: expected an index in 0..{k - 1} (the screen), {k}..{k + len(strip) - 1}"
                f" (the guesses: with found) or null, got {choice}"
            )
        self._check_position(choice, k + len(strip))
        if choice is not None and choice >= k and not answer.found:
            raise Invalid(
                f"choice: {choice} is a guess (positions {k}.. are the strip's), picked only "
                "as the target: give found: true"
            )
        if not answer.found:
            return
        if choice is None:
            raise Invalid("choice: found needs the item that is the target")
        item = int((shown + strip)[choice])
        if session.target is not None and item != session.target:
            where = "on this screen" if choice < k else "among the guesses"
            raise Invalid(
                f"found: item {choice + 1 if choice < k else choice - k + 1} {where} is not the "
                "target you are looking for; keep searching"
            )

    def apply(self, searcher: Any, query: dict, choice: int | None) -> None:
        """The item at ``choice`` picked among those shown (None: a skip); the strip passed over."""
        shown = query["shown"]
        item = None if choice is None else int(shown[choice])
        searcher.observe(shown, item, offered=query.get("offered") or None)

    def found_result(self, screen: Screen, choice: int | None) -> dict:
        """The item found: ``{"target", "name", "item"}`` (its public record).

        A colour's adds ``lab``: its CIELAB coordinates (D65), for the end screen.
        """
        assert choice is not None  # check_answer refuses found without a choice
        item = int((screen.query["shown"] + screen.query.get("offered", []))[choice])
        out = {
            "target": item,
            "name": self.catalogue.names[item],
            "item": self.catalogue.item(item),
        }
        if self.catalogue.hex is not None:  # a colour's CIELAB coordinates, from its hex
            lab = srgb_to_lab(hex_to_srgb([self.catalogue.hex[item]]))[0]
            out["lab"] = [round(float(v), 3) for v in lab]
        return out

    def end_result(self, searcher: Any, number: int) -> dict:
        """``{"target": None, "reason"}``."""
        return {"target": None, "reason": "no items left or the screen limit reached"}

    @classmethod
    def shown_items(cls, query: dict) -> list[int] | None:
        """The item ids shown."""
        return [int(i) for i in query["shown"]]

    @classmethod
    def shown_record(cls, payload: dict, query: dict) -> Any:
        """The item ids shown; with a strip ``{"shown", "offered"}`` (choice: in both, in order)."""
        shown = cls.shown_items(query)
        return shown if "offered" not in query else {"shown": shown, "offered": query["offered"]}

    @classmethod
    def found_item(cls, result: Any) -> int | None:
        """The result's ``target`` (None when the session ended without finding)."""
        target = result.get("target") if isinstance(result, dict) else None
        return None if target is None else int(target)


def _over_store(X: Any, store: ItemStore, kwargs: dict) -> DiscreteSearch:
    """A template over the shared ``store`` with ``kwargs`` (its guesses too)."""
    return DiscreteSearch.over_store(X, store, **kwargs)
