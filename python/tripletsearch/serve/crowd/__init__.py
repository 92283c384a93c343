"""Studies and collects on crowd platforms (Prolific, MTurk, CloudResearch, SONA).

:mod:`.platforms`: the platforms a file names, the parameters their links carry and the
rule a participant's id follows as text; :mod:`.completion`: the completion codes and
redirects per outcome a file gives; :mod:`.codes`: ``tripletsearch codes``, a platform's
submitted codes checked against the records.
"""
