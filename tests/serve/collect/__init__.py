"""Collecting triplets: the collect file, its participants, the refitter, the export."""
