"""A participant's whole part, in one home: identity, parts, outcome, ending and table.

``participants`` (:class:`~.participants.Participants`: enrol after consent, resume by
token or by platform id with the visit's value, authorize, withdraw, start their parts'
sessions), ``endings`` (the end of a part: the outcome decided once, in one row update,
its code and redirect recorded with it), ``protocol`` (what the participants' routes ask of
every kind of experiment), ``platforms`` (the crowd platforms a file names, the ids their
links carry, compared in one canonical form, and each visit's value), ``completion`` (the
codes and redirects per outcome a file gives), ``roster`` (the participants' table: one
row per participant, its outcome the stored one), ``codes`` (a platform's submitted codes
checked against the records) and ``release`` (a participation released for a fresh start).

It sits between the sessions' service (:mod:`..service`) and the experiment kinds
(:mod:`..study`, :mod:`..collect`), which specialise :class:`~.participants.Participants`
with what their participants do; the commands ``codes`` and ``participants release`` live
with the other commands (:mod:`..commands`).
"""
