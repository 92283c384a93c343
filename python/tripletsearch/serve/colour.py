"""sRGB <-> CIELAB for the service: the library's :mod:`tripletsearch.colour`, re-exported."""

from __future__ import annotations

from ..colour import WHITE_D65, hex_to_srgb, in_gamut, lab_to_srgb, srgb_to_hex, srgb_to_lab

__all__ = ["srgb_to_lab", "lab_to_srgb", "hex_to_srgb", "srgb_to_hex", "in_gamut", "WHITE_D65"]
