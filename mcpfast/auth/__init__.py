"""Who a request comes from: the types that the server, the transports and the verifiers share.

:class:`AccessToken` is what a verifier makes of a bearer token and what handlers read as
``ctx.auth``. This package sits below the server and the transports (both import it; it
imports neither), so a transport can check a caller without knowing the server.
"""

from mcpfast.auth.token import AccessToken

__all__ = ["AccessToken"]
