"""Limits on what one client may create: sessions and study enrolments per minute.

A client is its network address: the connection's peer, or, when that peer is one of the
configured trusted proxies, the right-most address of ``X-Forwarded-For`` that is not a
trusted proxy (a client can write any ``X-Forwarded-For`` it likes: only what a trusted
proxy appended counts); an IPv6 client counts as its /64 network (:func:`rate_key`).
Counts are kept in a sliding minute **per worker process**: with
``--workers W`` a client may get up to W times the limit. A lab whose participants share
one NAT address should allow at least as many per minute as people start at once (twice
that for reloads).
"""

from __future__ import annotations

import ipaddress
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable

from starlette.requests import Request

from ..config import Limits  # (its home: the configuration; imported from here too)
from ..errors import TooManyRequests

__all__ = ["Limits", "RateLimiter", "client_address", "rate_key"]


def rate_key(address: str) -> str:
    """What a client's limits are counted under: its IPv4 address, or its IPv6 /64.

    A /64 is one subscriber's share of IPv6: a client may hold every address of it.
    """
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:  # not an address (a test client's name)
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def client_address(request: Request, trusted: Iterable[str]) -> str:
    """The client's address (see the module's docstring)."""
    trusted = frozenset(trusted)
    peer = request.client.host if request.client else ""
    if peer not in trusted:
        return peer
    hops = [h.strip() for h in request.headers.get("x-forwarded-for", "").split(",")]
    for hop in reversed([h for h in hops if h]):
        if hop not in trusted:
            return hop
    return peer


class RateLimiter:
    """At most ``per_minute`` events per key in any 60 seconds (0: unlimited); thread-safe.

    Keeps at most ``max_keys`` keys (the least recently seen forgotten first): memory does
    not grow with the number of clients.
    """

    def __init__(
        self,
        per_minute: int,
        *,
        max_keys: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.per_minute, self.max_keys, self.clock = per_minute, max_keys, clock
        self._events: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def hit(self, key: str, what: str) -> None:
        """Count one event of ``key``; :class:`~.errors.TooManyRequests` when over the limit."""
        if self.per_minute <= 0:
            return
        now = self.clock()
        with self._lock:
            events = self._events.pop(key, None) or deque()
            while events and events[0] <= now - 60.0:
                events.popleft()
            self._events[key] = events  # the most recent at the end
            if len(self._events) > self.max_keys:
                self._events.popitem(last=False)
            if len(events) >= self.per_minute:
                wait = max(1, math.ceil(events[0] + 60.0 - now))
                raise TooManyRequests(
                    f"too many {what} from your address ({self.per_minute} per minute); "
                    f"try again in {wait} s",
                    retry_after=wait,
                )
            events.append(now)
