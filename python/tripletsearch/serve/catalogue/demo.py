"""The bundled demo catalogue: the xkcd survey's colours, and names a study leaves out."""

from __future__ import annotations

from ...colour import load_xkcd_colours
from .items import Catalogue

__all__ = ["demo_catalogue", "DEMOS", "DEMO_EXCLUDE"]

DEMOS = ("colours",)
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
    return Catalogue(colours.names, colours.lab, colours.hex, None, None, "xkcd colours")
