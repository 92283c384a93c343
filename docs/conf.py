"""Sphinx configuration of the tripletsearch documentation.

Build: ``pip install '.[docs]' && sphinx-build -W --keep-going -b html docs docs/_build``.
"""

from __future__ import annotations

import tripletsearch

project = "tripletsearch"
author = "tripletsearch developers"
copyright = "2026, tripletsearch developers"  # noqa: A001
release = tripletsearch.__version__  # the one place of the version
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
nitpicky = False

# API pages: the docstrings are numpydoc; members listed by autodoc, in source order
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "none"  # the numpydoc Parameters sections carry the types

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# every public docstring starts with a summary line; ruff's D rules check the rest
numpydoc_validation_checks = {"GL08"}
numpydoc_validation_exclude = {r"\._[a-z]", r"\.__[a-z]+__$"}

myst_heading_anchors = 2

html_theme = "furo"
html_title = f"tripletsearch {release}"
html_static_path: list[str] = []
