"""The collect tests run the server's clock check as it ships: a test whose people answer
in process, instantly (which that check would flag), gives ``fast_server_ms=0`` to what it
calls, as a server's setting would."""
