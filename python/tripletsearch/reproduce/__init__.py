"""Reproductions of the paper's experiments (``python -m tripletsearch reproduce <what>``).

Each function writes a CSV and a PNG into ``out_dir``, prints a table and returns the
numbers it printed. One module per experiment: ``embedding`` (Figure 5 and the alien eggs),
``discrete`` (the user study in simulation), ``continuous`` (Figure 4), ``users`` (searches
that adapt to the person), ``theory`` (Theorem 2.1) and ``collect`` (collecting triplets);
``_plots`` holds what they share.
"""

from __future__ import annotations

from .collect import collect_comparison, collect_settings, collect_truths, reproduce_collect
from .continuous import reproduce_continuous
from .discrete import PAPER_STUDY, reproduce_discrete
from .embedding import PAPER_FIGURE5_MUSIC, reproduce_embedding, spearman
from .theory import THEORY_REFERENCES, reproduce_theory
from .users import reproduce_users

__all__ = [
    "reproduce_embedding",
    "reproduce_discrete",
    "reproduce_continuous",
    "reproduce_users",
    "reproduce_theory",
    "reproduce_collect",
    "collect_comparison",
    "collect_settings",
    "collect_truths",
    "spearman",
    "PAPER_FIGURE5_MUSIC",
    "PAPER_STUDY",
    "THEORY_REFERENCES",
]
