"""A JWKS endpoint on loopback for the verifier tests: a real HTTP server (the standard
library's, in a thread) serving whatever key set the test puts in it, counting its GETs."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional


class JWKSServer:
    """Serves ``jwks`` (a dict, replaceable) at ``url``; ``gets`` counts the requests.
    ``max_age``: sent as Cache-Control when not None. ``status``: the HTTP status to answer."""

    def __init__(self, jwks: dict[str, Any], max_age: Optional[int] = None) -> None:
        self.jwks = jwks
        self.max_age = max_age
        self.status = 200
        self.gets = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 -- the stdlib's name
                owner.gets += 1
                body = json.dumps(owner.jwks).encode()
                self.send_response(owner.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                if owner.max_age is not None:
                    self.send_header("cache-control", f"max-age={owner.max_age}")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/jwks"

    def __enter__(self) -> JWKSServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
