"""`place view --serve`: the written site over HTTP on 127.0.0.1, for a browser that would
rather not open `file://` URLs. Only the loopback address is bound: the site holds a
run's records, and is nobody else's to read."""

from __future__ import annotations

import functools
import http.server
import sys
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    """The standard handler without a log line per request on stderr."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


def make_server(directory: Path, port: int) -> http.server.ThreadingHTTPServer:
    handler = functools.partial(_Quiet, directory=str(directory))
    return http.server.ThreadingHTTPServer((HOST, port), handler)


def serve(directory: Path, port: int) -> int:
    """Serve until interrupted (Ctrl-C), after printing the URL."""
    try:
        server = make_server(directory, port)
    except OSError as exc:
        from place.errors import PlaceError

        raise PlaceError(f"--port {port}: cannot listen on {HOST} ({exc.strerror})") from None
    with server:
        print(f"serving {directory} at http://{HOST}:{server.server_address[1]}/ (Ctrl-C stops)")
        sys.stdout.flush()
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("stopped")
    return 0
