"""Every CSV the service exports, declared once: :data:`TABLES` (name -> :class:`~.tables.Table`).

The writers write from these declarations (:func:`~.cells.write_table`: the header and
each row's cells in the declared order), and ``datapackage.json`` and
``dataset_description.json`` describe the files by them (:mod:`.package`): a column added
here appears in the CSV, its Frictionless schema and the Psych-DS description. A new CSV:
its :class:`~.tables.Table` here (and a Psych-DS name in :data:`~.tables.DATA_FILES` for a
data file).
"""

from __future__ import annotations

from .tables import Column, Table

__all__ = ["TABLES", "SECONDS_DIGITS"]

#: The decimals a time in seconds carries in the export (the millisecond).
SECONDS_DIGITS = 3

C = Column
_SESSION = C("session", "string", "The session's id (one search or one participant's collect).")
_SCREEN = C("screen", "integer", "The screen's number within its session, from 0.")
_PARTICIPANT = C(
    "participant",
    "string",
    "The participant's pseudonymous id (P- and 16 hex digits); empty: a session outside a "
    "study or collect.",
)
_PSEUDONYM = C("participant", "string", "The participant's pseudonymous id (P- and 16 hex digits).")
_TRIPLET = (
    C("head", "integer", "The item id the comparison is about (the target, or the query's head)."),
    C("closer", "integer", "The item id judged closer to head."),
    C("farther", "integer", "The item id judged farther from head."),
)
_KINDS = (
    "The kind of query, by what chose it: burn-in (one of the participant's first queries, "
    "random), random (a sampler's random query: the random sampler's, or another's before "
    "its burn-in's end and first fit), active or arr (that sampler's method chose it), test "
    "(a held-out random query) or fallback (random: the sampler had no query ready). "
    "Exports of collects run before 0.4.0 say adaptive for any sampler's query."
)
_WHY = C("why", "string", "Why they are flagged, a sentence per flag, separated by '; '.")
_FLAGGED_BY = C("flagged_by", "string", "The check rules that flag them, space-separated.")


def _info(collect: bool) -> tuple[Column, ...]:
    """The columns of ``triplets_info.csv`` (searches) or ``collect_triplets_info.csv``."""
    if collect:
        sampler = "The collect's sampler the participant was assigned (random, active, arr)."
        kind = _KINDS
    else:
        sampler = kind = "Empty: a search's answer has no sampler or kind of query."
    return (
        C("source", "string", "collect (a collect's answer)." if collect else "search."),
        _SESSION,
        _PARTICIPANT,
        _SCREEN,
        C("sampler", "string", sampler),
        C("kind", "string", kind),
        C(
            "response_ms",
            "number",
            "The response time the page measured, in ms; empty: unknown.",
            digits=1,
        ),
        C("head_name", "string", "The head item's name (given the catalogue)."),
        C("closer_name", "string", "The closer item's name (given the catalogue)."),
        C("farther_name", "string", "The farther item's name (given the catalogue)."),
    )


def _checks() -> list[Column]:
    """``collect_participants.csv``'s counts of each check: passed or agreed, of how many."""
    counted = "Their {} answered as expected, of {}."
    pairs = (
        ("attention", "attention checks"),
        ("gold", "gold-standard queries"),
        ("repeats", "repeated queries"),
        ("clear_repeats", "repeated clear queries"),
    )
    out: list[Column] = []
    for key, what in pairs:
        done = f"{key}_passed" if key in ("attention", "gold") else f"{key}_agreed"
        out.append(C(done, "integer", counted.format(what, f"{key}_of")))
        out.append(C(f"{key}_of", "integer", f"The {what} they were shown."))
    return out


_COLLECT_PARTICIPANTS = (
    _PSEUDONYM,
    C("number", "integer", "Their enrolment order within the collect, from 0."),
    C("session", "string", "Their session's id; empty: none started."),
    C("sampler", "string", "The sampler that chose their queries."),
    C(
        "answers",
        "integer",
        "Their answers that count: picks on the samplers' and test "
        "queries, not undone (k - 1 triplets each; checks, repeats and skips not counted).",
    ),
    C("withdrawn", "boolean", "Whether they withdrew (their answers left out)."),
    C("rules", "string", "The version of the check rules they were judged by."),
    C("flagged", "boolean", "Flagged by the checks (their answers left out of the fits)."),
    _FLAGGED_BY,
    *_checks(),
    C("agreement_agreed", "integer", "Their picks as everyone else's answers predict."),
    C("agreement_answers", "integer", "Their answers scored for agreement."),
    C("agreement_z", "number", "The z-score of their agreement."),
    C("agreement_p", "number", "The p-value of their agreement (by chance alone)."),
    C(
        "server_ms_median",
        "number",
        "The median time per screen by the server's clock, ms, to the microsecond.",
        digits=3,
    ),
    C(
        "response_ms_median",
        "number",
        "The median response time the page measured, ms, to 0.1 ms.",
        digits=1,
    ),
    _WHY,
)

_PARTICIPANTS = (
    C("experiment", "string", "The experiment's name (a study or a collect of the database)."),
    _PSEUDONYM,
    C("number", "integer", "Their enrolment order within the experiment, from 0."),
    C("enrolled", "datetime", "When they enrolled after their consent (UTC, ISO 8601)."),
    C(
        "platform_id",
        "string",
        "Their crowdsourcing platform's id (Prolific's PROLIFIC_PID, MTurk's workerId, ...); "
        "empty: none given. One beginning with = + - @, a tab or a carriage return is "
        "written after a ' (never a spreadsheet formula): drop it to get the id.",
    ),
    C(
        "platform_params",
        "object",
        "Every parameter of their platform's link, a JSON object; empty: none given.",
    ),
    C(
        "duplicate",
        "boolean",
        "A second participant of one platform id, kept from a database written before one "
        "participation per id.",
    ),
    C(
        "outcome",
        "string",
        "finished (every part done), withdrawn (stopped taking part: answers left out of "
        "the results) or started (neither yet).",
    ),
    C(
        "code",
        "string",
        "The completion code they were shown, as recorded (never depends on their checks); "
        "empty: none shown.",
    ),
    C(
        "flagged",
        "boolean",
        "Flagged by the checks on people (a collect's: answers left out of the fits; a "
        "study's: searches reported apart); never changes the code shown.",
    ),
    _FLAGGED_BY,
    C("why", "string", "Why, a sentence per flag, separated by '; '."),
)

_SESSIONS = (
    _SESSION,
    C("mode", "string", "The session's mode (find, rank, collect, ...)."),
    C("n_choices", "integer", "Items shown per screen."),
    C("library", "string", "The tripletsearch version that ran it."),
    C("created", "string", "When it began (UTC, ISO 8601)."),
    C("done", "boolean", "Whether it ended."),
    _PARTICIPANT,
    C("slot", "integer", "The study participant's search slot, from 0; empty: none."),
    C("method", "string", "The search method of a study's search; empty: none."),
    C("found", "boolean", "Whether the search found its target."),
    C("n_queries", "integer", "Screens answered."),
    C("queries_to_find", "integer", "Screens answered to find the target; empty: not found."),
    C("undos", "integer", "Answers undone."),
    C("target", "integer", "The target item id; empty: unknown."),
    C("target_name", "string", "The target item's name; empty: unknown."),
    C(
        "seconds_total",
        "number",
        "Seconds spent answering, summed over screens.",
        digits=SECONDS_DIGITS,
    ),
    C(
        "seconds_per_answer_median",
        "number",
        "The median seconds per answer.",
        digits=SECONDS_DIGITS,
    ),
)

_ANSWERS = (
    _SESSION,
    _SCREEN,
    C("mode", "string", "The session's mode."),
    C(
        "kind",
        "string",
        "answer, undo or check (a study's attention screen: in no query) (and a collect "
        "query's kind).",
    ),
    C("choice", "integer", "The position picked among those shown; empty: none (a skip)."),
    C(
        "picks",
        "string",
        "The positions picked in order, space-separated, on a screen that asks several (a "
        "collect's ranked picks; the first is choice); empty: one pick, or a skip.",
    ),
    C("found", "boolean", "Whether the answer said the target was shown; empty: n/a."),
    C("undone", "boolean", "Whether the answer was undone later."),
    C(
        "seconds",
        "number",
        "Seconds from showing the screen to the answer.",
        digits=SECONDS_DIGITS,
    ),
    C("shown", "string", "What was shown: item ids space-separated, or a JSON record."),
)

_COLLECT_TRIALS = (
    _SESSION,
    _PARTICIPANT,
    _SCREEN,
    C(
        "trial",
        "string",
        "What the screen asked: rank (a head and its candidates, the picks most similar "
        "first; one pick of two candidates is a triplet) or odd-one-out (three items, the "
        "odd one picked).",
    ),
    C("head", "integer", "The head item id; empty: an odd-one-out (no head)."),
    C("candidates", "string", "The item ids shown, space-separated, in their order on screen."),
    C(
        "picks",
        "string",
        "The item ids picked, space-separated, most similar first (odd-one-out: the odd one).",
    ),
    C("n_triplets", "integer", "The triplets the answer implies (collect_triplets.csv)."),
    C("sampler", "string", "The collect's sampler the participant was assigned."),
    C("kind", "string", _KINDS),
    C(
        "response_ms",
        "number",
        "The response time the page measured, in ms; empty: unknown.",
        digits=1,
    ),
)

_CHOICES = (
    _SESSION,
    _SCREEN,
    C("target", "integer", "The session's target item id."),
    C("item", "integer", "The item id picked."),
    C("shown", "string", "The item ids shown, space-separated."),
)

_ITEMS = (
    C("name", "string", "The item's name (its id is its row, from 0)."),
    C("hex", "string", "The item's colour, #rrggbb."),
    C("image", "string", "The item's picture, relative to catalogue/."),
)

_STIMULI = (
    C("item", "integer", "The item's id."),
    C("name", "string", "The item's name."),
    C("file", "string", "The copied picture, relative to catalogue/."),
    C("source", "string", "The picture's path in the served catalogue's folder."),
    C("bytes", "integer", "Its size in bytes (the copy's and the original's)."),
    C("sha256", "string", "Its SHA-256, hex (the copy's and the original's)."),
)

# the study report's folder (``tripletsearch report``: :mod:`..study.report`)
_METHODS = (
    C("method", "string", "The search method."),
    C("searches", "integer", "Its searches in the study."),
    C("finished", "integer", "Its searches that ended (found or not)."),
    C("unfinished", "integer", "Its searches left before the end."),
    C("not_found", "integer", "Its finished searches that did not find the target."),
    C("found_rate", "number", "The share of finished searches that found the target."),
    C("found_rate_interval", "array", "Its 95 % Wilson interval, a JSON [low, high]."),
    C("found", "integer", "Its searches that found the target."),
    C("mean_queries", "number", "The mean screens to find the target (found searches)."),
    C("se_queries", "number", "The standard error of that mean."),
    C("median_queries", "number", "The median screens to find the target."),
    C(
        "seconds_per_answer_median",
        "number",
        "The median of its searches' seconds/answer.",
        digits=SECONDS_DIGITS,
    ),
    C(
        "seconds_per_answer_mean",
        "number",
        "The mean of its searches' seconds per answer.",
        digits=SECONDS_DIGITS,
    ),
)

_SEARCHES = (
    _SESSION,
    _PARTICIPANT,
    C("slot", "integer", "The participant's search slot, from 0."),
    C("method", "string", "The search method."),
    C("guesses", "integer", "The size of the strip of guesses (0: none)."),
    C("target", "integer", "The target item id."),
    C("done", "boolean", "Whether the search ended."),
    C("outcome", "string", "found, not found or unfinished."),
    C("found", "boolean", "Whether it found the target."),
    C("n_queries", "integer", "Screens answered."),
    C("undos", "integer", "Answers undone."),
    C("seconds_per_answer", "number", "The mean seconds per answer.", digits=SECONDS_DIGITS),
    C(
        "flagged",
        "boolean",
        "Its participant is flagged by the study's checks: reported apart, not compared.",
    ),
)

_TABLES = (
    Table(
        "triplets.csv",
        _TRIPLET,
        "searches: the triplets of answers to screens without the target, of sessions whose "
        "target is known (a study's, or the item found)",
    ),
    Table(
        "triplets_info.csv", _info(False), "Row for row with triplets.csv: where each came from."
    ),
    Table(
        "collect_triplets.csv",
        _TRIPLET,
        "collects: the triplets people gave to the samplers' and the held-out test queries "
        "(participants flagged by their checks or withdrawn left out)",
    ),
    Table(
        "collect_trials.csv",
        _COLLECT_TRIALS,
        "collects: every answer that counts as one trial (head, candidates, picks in order), "
        "as shown; collect_triplets.csv holds the triplets each implies",
    ),
    Table(
        "collect_triplets_info.csv",
        _info(True),
        "Row for row with collect_triplets.csv: where each came from.",
    ),
    Table("choices.csv", _CHOICES, "Every comparison answered: the item picked among those shown."),
    Table("sessions.csv", _SESSIONS, "One row per session."),
    Table("answers.csv", _ANSWERS, "Every answer and undo."),
    Table("participants.csv", _PARTICIPANTS, "One row per participant of a study or collect."),
    Table(
        "collect_participants.csv",
        _COLLECT_PARTICIPANTS,
        "One row per participant of the collect: their checks and flags.",
    ),
    Table("catalogue/items.csv", _ITEMS, "The exported catalogue's items, one row each."),
    Table("catalogue/stimuli.csv", _STIMULI, "The pictures copied into the catalogue."),
    Table("methods.csv", _METHODS, "The study's search methods compared, one row each."),
    Table("searches.csv", _SEARCHES, "The study's searches, one row each."),
)

#: Every CSV an export folder (or a study report's) may hold, by the name it is declared
#: under: its :class:`~.tables.Table` (columns in order, types, descriptions). The writers
#: and the package's description read it here, when they run.
TABLES: dict[str, Table] = {t.name: t for t in _TABLES}
