"""The front door of the Streamable HTTP endpoint (stubs; see the compiled module's
docstring)."""

from typing import Any, Optional, final

from mcpfast._core.http_messages import HTTPRequest
from mcpfast.auth import AccessToken
from mcpfast.transports.http.auth import BearerAuth
from mcpfast.transports.http.post_reply import ErrorStatuses

@final
class LastJudged:
    """The last verdict judged and the (up to six) values it was judged for, the very
    objects: the same objects again are told by identity compares, without a key tuple,
    its hash and a dict lookup. Values equal but other objects are looked up as before."""

@final
class PostFront:
    """The endpoint's front door (module docstring). ``endpoint``: a
    StreamableHTTPEndpoint, whose ``_post_verdicts`` dict (kept, never replaced) and
    ``_handle``, ``_post_verdict``, ``_post_refused``, ``_post_undecodable``,
    ``_post_2026`` and ``_post_decoded`` are looked up once, here;
    ``statuses_2026``: the HTTP statuses of the 2026-07-28 leg's error answers;
    ``statuses``: the same for the older versions' answers (the HTTP refusals only)."""

    path: str
    auth: Optional[BearerAuth]
    max_body_size: int
    # Hand each POST's traceparent / tracestate to its reply channel (a server recording spans).
    capture_trace_headers: bool

    def __init__(self, endpoint: Any, path: str, auth: Optional[BearerAuth],
                 max_body_size: int, statuses_2026: ErrorStatuses,
                 statuses: Optional[ErrorStatuses] = None) -> None: ...
    def handle(self, request: HTTPRequest) -> Any:
        """The response to one request, or an awaitable of it (the endpoint's ``handle``)."""
    def post(self, request: HTTPRequest, token: Optional[AccessToken]) -> Any:
        """A POST to the endpoint's path, its bearer token (if any) accepted."""
    def trace_of(self, headers: dict[str, str]) -> Optional[dict[str, str]]:
        """The POST's trace context headers when captured, else None."""
