"""The HTTP side: the sessions and catalogue APIs, limits, the bounded protocol, the page."""
