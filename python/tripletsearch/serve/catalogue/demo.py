"""The bundled demo catalogue: the xkcd survey's colours, and names a study leaves out."""

from __future__ import annotations

import numpy as np

from ...colour import load_xkcd_colours
from .items import Catalogue

__all__ = ["demo_catalogue", "DEMOS", "DEMO_EXCLUDE"]

DEMOS = ("colours",)
# each demo's catalogue fingerprint: the value it had when first recorded (see demo_catalogue)
DEMO_FINGERPRINT = {"colours": "8c3c00a02b820496"}
# the xkcd colour survey's names that a study's participants should not be shown (its
# respondents named colours freely): a study on the demo leaves them out unless its file
# says otherwise (``exclude = [...]``; ``exclude = []`` keeps every name). The demo itself
# keeps them: its recorded sessions stay valid.
DEMO_EXCLUDE = {
    "colours": (
        "baby poo",
        "baby poop",
        "baby poop green",
        "baby puke green",
        "baby shit brown",
        "baby shit green",
        "barf green",
        "booger",
        "booger green",
        "diarrhea",
        "piss yellow",
        "poo",
        "poo brown",
        "poop",
        "poop brown",
        "poop green",
        "puke",
        "puke brown",
        "puke green",
        "puke yellow",
        "shit",
        "shit brown",
        "shit green",
        "snot",
        "snot green",
        "vomit",
        "vomit green",
        "vomit yellow",
    )
}


def demo_catalogue(name: str = "colours") -> Catalogue:
    """A bundled demo: ``"colours"``, the 949 colours of the xkcd colour survey.

    Public domain (see ``tripletsearch/data/xkcd_colours/SOURCE.md``), embedded in CIELAB
    (:func:`tripletsearch.colour.load_xkcd_colours`).
    """
    if name not in DEMOS:
        raise ValueError(f"demo: expected one of {list(DEMOS)}, got {name!r}")
    colours = load_xkcd_colours()
    # CIELAB's last bits vary with NumPy's and the processor's vector maths: rounded, the
    # coordinates are the same on every machine (and so is a catalogue made from them by
    # ``without``); the demo's own identity is the one it had since 0.1, pinned, so the
    # sessions and studies recorded on it stay valid anywhere
    lab = np.round(colours.lab, 9)
    return Catalogue(
        colours.names, lab, colours.hex, None, None, "xkcd colours", DEMO_FINGERPRINT[name]
    )
