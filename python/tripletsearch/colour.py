"""sRGB <-> CIELAB (D65), in NumPy, and the xkcd colours: a perceptual ground truth.

sRGB (IEC 61966-2-1) companded values in [0, 1] -> linear RGB -> CIE XYZ (D65) -> CIELAB
(CIE 15, reference white D65 of the sRGB standard), and back. Colours outside the sRGB
gamut have linear components outside [0, 1]; :func:`in_gamut` tells.

:func:`load_xkcd_colours`: the 949 colours of the xkcd colour survey (public domain) with
their CIELAB coordinates, the service's colour demo and the simulated truth of
``reproduce collect``. NumPy and the standard library only (the service imports this
module; the library never imports the service).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

__all__ = [
    "srgb_to_lab",
    "lab_to_srgb",
    "hex_to_srgb",
    "srgb_to_hex",
    "in_gamut",
    "WHITE_D65",
    "Colours",
    "load_xkcd_colours",
]

# linear sRGB -> XYZ (IEC 61966-2-1), and the D65 white (Y = 1) it maps (1, 1, 1) to
_M = np.array(
    [
        [0.4124564, 0.3575761, 0.1804375],
        [0.2126729, 0.7151522, 0.0721750],
        [0.0193339, 0.1191920, 0.9503041],
    ]
)
_M_INV = np.linalg.inv(_M)
WHITE_D65 = _M @ np.ones(3)
_HEX = re.compile(r"#[0-9a-fA-F]{6}")
_EPS = (6.0 / 29.0) ** 3
_KAPPA = (29.0 / 6.0) ** 2 / 3.0


def _linear(c: np.ndarray) -> np.ndarray:
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _companded(c: np.ndarray) -> np.ndarray:
    c = np.asarray(c, dtype=np.float64)
    return np.where(
        c <= 0.0031308, 12.92 * c, 1.055 * np.abs(c) ** (1.0 / 2.4) * np.sign(c) - 0.055
    )


def srgb_to_lab(rgb: Any) -> np.ndarray:
    """CIELAB (L in [0, 100]) of sRGB colours in [0, 1], shape (..., 3)."""
    rgb = np.asarray(rgb, dtype=np.float64)
    xyz = _linear(rgb) @ _M.T / WHITE_D65
    f = np.where(xyz > _EPS, np.cbrt(xyz), _KAPPA * xyz + 4.0 / 29.0)
    return np.stack(
        [
            116.0 * f[..., 1] - 16.0,
            500.0 * (f[..., 0] - f[..., 1]),
            200.0 * (f[..., 1] - f[..., 2]),
        ],
        axis=-1,
    )


def lab_to_srgb(lab: Any) -> np.ndarray:
    """SRGB (companded, not clipped: outside [0, 1] when out of gamut) of CIELAB colours."""
    lab = np.asarray(lab, dtype=np.float64)
    fy = (lab[..., 0] + 16.0) / 116.0
    f = np.stack([fy + lab[..., 1] / 500.0, fy, fy - lab[..., 2] / 200.0], axis=-1)
    xyz = np.where(f > 6.0 / 29.0, f**3, (f - 4.0 / 29.0) / _KAPPA) * WHITE_D65
    return _companded(xyz @ _M_INV.T)


def in_gamut(lab: Any, tol: float = 1e-9) -> np.ndarray:
    """Whether CIELAB colours are displayable in sRGB."""
    rgb = lab_to_srgb(lab)
    return np.all((rgb >= -tol) & (rgb <= 1.0 + tol), axis=-1)


def hex_to_srgb(codes: Any) -> np.ndarray:
    """SRGB in [0, 1] of "#rrggbb" codes, shape (n, 3)."""
    out = []
    for k, code in enumerate(codes):
        text = str(code).strip()
        if not _HEX.fullmatch(text):
            raise ValueError(f"hex: entry {k} is not a #rrggbb code: {code!r}")
        out.append([int(text[i : i + 2], 16) / 255.0 for i in (1, 3, 5)])
    return np.array(out, dtype=np.float64).reshape(-1, 3)


def srgb_to_hex(rgb: Any) -> list[str]:
    """The "#rrggbb" codes of sRGB colours (clipped to [0, 1], rounded to 8 bits)."""
    rgb = np.clip(np.asarray(rgb, dtype=np.float64).reshape(-1, 3), 0.0, 1.0)
    codes = np.rint(255.0 * rgb).astype(int)
    return ["#" + "".join(f"{v:02x}" for v in c) for c in codes]


@dataclass(frozen=True, eq=False)
class Colours:
    """Named colours and their coordinates.

    Attributes
    ----------
    names : tuple of str
    hex : tuple of str
        ``"#rrggbb"`` sRGB codes (lower case).
    lab : ndarray (n, 3)
        CIELAB (D65) coordinates, L in [0, 100]: distances approximate perceived differences.
    description : str
        Origin and license (the bundled ``SOURCE.md``).
    """

    names: tuple[str, ...]
    hex: tuple[str, ...]
    lab: np.ndarray
    description: str = ""

    def __len__(self) -> int:
        return len(self.names)


def load_xkcd_colours() -> Colours:
    """The 949 colours of the xkcd colour survey (2010; public domain, CC0) in CIELAB.

    One row per colour in the order of the survey's published table (an item's id is its
    row). See ``tripletsearch/data/xkcd_colours/SOURCE.md``.

    Returns
    -------
    Colours
    """
    base = resources.files("tripletsearch").joinpath("data").joinpath("xkcd_colours")
    rows = list(csv.reader(base.joinpath("colours.csv").read_text("utf-8").splitlines()))[1:]
    names = tuple(r[0] for r in rows)
    hexes = tuple(r[1].lower() for r in rows)
    lab = srgb_to_lab(hex_to_srgb(hexes))
    return Colours(names, hexes, lab, base.joinpath("SOURCE.md").read_text("utf-8"))
