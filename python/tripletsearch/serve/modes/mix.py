"""Mix mode: mix any colour by comparing two swatches (the continuous search)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...colour import srgb_to_hex, srgb_to_lab
from ...continuous import ContinuousSearch
from ..catalogue import Catalogue
from ..errors import Invalid
from ..schema import Answer
from .base import Mode, Screen, ScreenSizes, SessionInfo

__all__ = ["MixMode", "MIX_GAMMA", "MIX_LAPSE"]

# the mix mode's user model: people compare colours perceptually (about CIELAB distance)
# while the search models distance in the sRGB cube, so it assumes a less reliable user
# than it gets (gamma = 2, lapse 0.02). Measured with simulated gamma = 3 people who
# perceive CIELAB, 200 targets uniform in the cube, 40 answers: median error 3.8 CIELAB
# units, 90th percentile 12.8 (gamma = 3 without lapse: median 3.8, 90th percentile 21).
MIX_GAMMA, MIX_LAPSE = 2.0, 0.02


def _round(v: Any, digits: int = 3) -> list[float]:
    return [round(float(x), digits) + 0.0 for x in np.asarray(v).reshape(-1)]  # no -0.0


class MixMode(Mode):
    """Mix any colour (:class:`tripletsearch.ContinuousSearch`, the global method).

    Colour catalogues only. Each screen shows two swatches and the current estimate;
    ``found`` accepts the estimate. The search runs in the sRGB cube [0, 1]^3, whose every
    point is a displayable colour (only about a fifth of CIELAB's bounding box is inside the
    sRGB gamut, so searching CIELAB's box would show colours a screen cannot display); the
    screens report CIELAB coordinates.
    """

    name = "mix"

    @classmethod
    def offered_by(cls, catalogue: Catalogue) -> bool:
        """Catalogues with colours (and their embedding: the nearest named colour)."""
        return catalogue.has_colours and catalogue.has_embedding

    @property
    def space(self) -> str:
        """``"srgb"``: the cube, whatever the catalogue."""
        return "srgb"

    @property
    def screen_sizes(self) -> ScreenSizes:
        """Two swatches."""
        return ScreenSizes(2, 2, 2)

    def new_params(self, n_choices: int | None, guesses: int | None = None) -> tuple[int, dict]:
        """Two swatches; the global method with the mix user model in the sRGB cube."""
        self._no_guesses(guesses)
        if n_choices not in (None, 2):
            raise Invalid("n_choices: the mix mode shows 2 swatches per screen")
        params = {
            "method": "global",
            "gamma": MIX_GAMMA,
            "lapse": MIX_LAPSE,
            "bounds": [0.0, 1.0],
            "space": "srgb",
        }
        return 2, params

    def searcher(self, n_choices: int, params: dict, seed: int) -> ContinuousSearch:
        """The continuous search of the stored gamma and lapse."""
        return ContinuousSearch(
            3,
            float(params.get("gamma", MIX_GAMMA)),
            bounds=(0.0, 1.0),
            lapse=float(params.get("lapse", MIX_LAPSE)),
            method="global",
            random_state=seed,
            n_jobs=1,
        )

    def next_screen(self, searcher: Any, number: int) -> Screen:
        """Two swatches (CIELAB and hex) and the estimate; a continuous search never ends."""
        a, b = searcher.ask()
        est = np.clip(searcher.estimate(), 0.0, 1.0)
        pts = np.clip(np.vstack([a, b]), 0.0, 1.0)
        lab = srgb_to_lab(pts)
        return Screen(
            {
                "number": number,
                "points": [_round(lab[0]), _round(lab[1])],
                "hex": srgb_to_hex(pts),
                "estimate": {"lab": _round(srgb_to_lab(est)), "hex": srgb_to_hex(est)[0]},
            },
            {"rgb": [a.tolist(), b.tolist()], "estimate": est.tolist()},
        )

    def check_answer(self, session: SessionInfo, screen: Screen, answer: Answer) -> None:
        """A swatch (0 or 1), or found (accept the estimate)."""
        self._check_position(answer.choice, 2)
        if not answer.found and answer.choice is None:
            raise Invalid("choice: required in mix mode (or found: true)")

    def apply(self, searcher: Any, query: dict, choice: int | None) -> None:
        """Swatch ``choice`` is closer than the other."""
        a, b = query["rgb"]
        searcher.observe(a, b, choice == 0)

    def found_result(self, screen: Screen, choice: int | None) -> dict:
        """The estimate shown and the catalogue's nearest named colour to it.

        ``{"estimate": {"lab", "hex"}, "nearest": item}`` (nearest in CIELAB).
        """
        return self._with_nearest(screen.payload["estimate"])

    def end_result(self, searcher: Any, number: int) -> dict:
        """The estimate after the last answer, with its nearest named colour."""
        return self._with_nearest(self.next_screen(searcher, number).payload["estimate"])

    def _with_nearest(self, estimate: dict) -> dict:
        cat = self.catalogue
        d = np.linalg.norm(np.asarray(cat.embedding) - np.asarray(estimate["lab"]), axis=1)
        return {"estimate": estimate, "nearest": cat.item(int(np.argmin(d)))}

    @classmethod
    def shown_record(cls, payload: dict, query: dict) -> Any:
        """The swatches' hex codes."""
        return payload.get("hex")
