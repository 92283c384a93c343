"""The service's domain errors: what a request was refused for, without HTTP.

The service, the modes and the request schema raise these; the app maps each class to an
HTTP status in one place (:data:`tripletsearch.serve.web.app.STATUS`), and the client gets
``{"error": message}`` (and the error's ``details``, when it has them).
"""

from __future__ import annotations

__all__ = [
    "ServiceError",
    "Invalid",
    "Unauthorized",
    "Closed",
    "NotFound",
    "Conflict",
    "TooLarge",
    "UnsupportedMedia",
    "Busy",
    "TooManyRequests",
]


class ServiceError(Exception):
    """A request the service refuses, with a message for the client.

    ``details``: more keys of the reply beside ``"error"`` (a refused withdrawal's end
    screen), or None.
    """

    def __init__(self, message: str, details: dict | None = None):
        super().__init__(message)
        self.message, self.details = message, details


class Invalid(ServiceError):
    """A field or parameter of the request is wrong (missing, mistyped, out of range)."""


class Unauthorized(ServiceError):
    """A missing or wrong token."""


class Closed(ServiceError):
    """The server does not take this kind of request (a study server: no free sessions)."""


class NotFound(ServiceError):
    """No such session, participant, image or route (or the feature is off)."""


class Conflict(ServiceError):
    """The request contradicts the session's state.

    A different answer to a screen answered already, a finished session, a session started
    on another catalogue.
    """


class TooLarge(ServiceError):
    """A request body over the size limit."""


class UnsupportedMedia(ServiceError):
    """A request body that does not say it is JSON (``Content-Type: application/json``).

    A page on another site can post a form (``text/plain``, ``application/x-www-form-
    urlencoded``, ``multipart/form-data``) from its visitors' browsers without asking; a
    JSON content type needs a CORS preflight, which this server never grants.
    """


class Busy(ServiceError):
    """The server cannot take the request now: retry after ``retry_after`` seconds.

    The database kept losing races, or too many sessions are open.
    """

    def __init__(self, message: str, retry_after: int = 1):
        super().__init__(message)
        self.retry_after = retry_after


class TooManyRequests(ServiceError):
    """A client over its limit (sessions or enrolments per minute).

    Retry after ``retry_after`` seconds.
    """

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after
