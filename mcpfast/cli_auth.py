"""The authorization flags of ``mcpfast run --transport http`` (and ``websocket``, checked at
the upgrade): a verifier without code.

    mcpfast run server.py --transport http --jwks-url https://auth.example.com/jwks \\
        --issuer https://auth.example.com --audience https://mcp.example.com/mcp \\
        [--required-scope mcp:tools ...]

turns the JWT verifier on (:class:`~mcpfast.auth.jwt.JWTVerifier`); ``--introspection-url
URL`` instead turns the introspection verifier on
(:class:`~mcpfast.auth.introspection.IntrospectionVerifier`), the server's client
credentials read from the environment (``MCPFAST_INTROSPECTION_CLIENT_ID``,
``MCPFAST_INTROSPECTION_CLIENT_SECRET``: never on a command line, where ``ps`` shows
them). ``--api-keys FILE`` accepts API keys (:mod:`mcpfast.auth.api_keys`), beside either
verifier or alone. ``--audience`` is the resource's canonical URL (the ``aud`` tokens must
carry, RFC 8707, and the ``resource`` of the protected resource metadata);
``--authorization-server`` names the issuer clients get tokens from (default:
``--issuer``).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

__all__ = ["INTROSPECTION_CLIENT_ID", "INTROSPECTION_CLIENT_SECRET", "add_auth_flags", "auth_options"]

INTROSPECTION_CLIENT_ID = "MCPFAST_INTROSPECTION_CLIENT_ID"
INTROSPECTION_CLIENT_SECRET = "MCPFAST_INTROSPECTION_CLIENT_SECRET"

_FLAGS = ("jwks_url", "issuer", "audience", "required_scope", "introspection_url",
          "authorization_server", "api_keys")


def add_auth_flags(run: argparse.ArgumentParser) -> None:
    """The ``mcpfast run`` flags of the bearer-token verifiers."""
    group = run.add_argument_group("Authorization (--transport http)")
    group.add_argument("--jwks-url", default=None, metavar="URL",
                       help="verify bearer JWTs with the keys at this JWKS URL (needs --issuer, --audience)")
    group.add_argument("--issuer", default=None, metavar="ISS", help="the iss tokens must carry")
    group.add_argument("--audience", default=None, metavar="URL",
                       help="this server's canonical URL: the aud tokens must carry")
    group.add_argument("--required-scope", action="append", default=None, metavar="SCOPE",
                       help="a scope every request's token must grant (repeatable)")
    group.add_argument("--introspection-url", default=None, metavar="URL",
                       help="verify opaque tokens at this RFC 7662 endpoint, as the client "
                            f"${INTROSPECTION_CLIENT_ID} / ${INTROSPECTION_CLIENT_SECRET}")
    group.add_argument("--authorization-server", action="append", default=None, metavar="ISS",
                       help="an authorization server clients may use (default: --issuer)")
    group.add_argument("--api-keys", default=None, metavar="FILE",
                       help="accept the API keys hashed in FILE (X-API-Key header; see "
                            "'python -m mcpfast.auth.api_keys')")


def auth_options(args: argparse.Namespace, environ: Any = os.environ) -> dict[str, Any]:
    """``{"auth": BearerAuth}`` for the flags given, or {}; ValueError saying what is missing."""
    given = {name: getattr(args, name, None) for name in _FLAGS}
    if all(value is None for value in given.values()):
        return {}
    if args.transport not in ("http", "websocket"):
        raise ValueError("--jwks-url, --introspection-url and --api-keys apply to --transport http "
                         "and websocket")
    jwks_url, introspection_url = given["jwks_url"], given["introspection_url"]
    if jwks_url is not None and introspection_url is not None:
        raise ValueError("give --jwks-url or --introspection-url, not both")
    audience = given["audience"]
    if audience is None:
        raise ValueError("--audience URL is needed: this server's canonical URL, which tokens must be for")
    issuer = given["issuer"]
    verifier: Any = None
    if jwks_url is not None:
        from mcpfast.auth.jwt import JWTVerifier

        if issuer is None:
            raise ValueError("--jwks-url needs --issuer (the iss tokens must carry)")
        verifier = JWTVerifier(jwks_url=jwks_url, issuer=issuer, audience=audience)
    elif introspection_url is not None:
        from mcpfast.auth.introspection import IntrospectionVerifier

        client_id = environ.get(INTROSPECTION_CLIENT_ID)
        client_secret = environ.get(INTROSPECTION_CLIENT_SECRET)
        if not client_id or not client_secret:
            raise ValueError(f"--introspection-url needs ${INTROSPECTION_CLIENT_ID} and "
                             f"${INTROSPECTION_CLIENT_SECRET} in the environment")
        verifier = IntrospectionVerifier(url=introspection_url, client_id=client_id,
                                         client_secret=client_secret, audience=audience, issuer=issuer)
    api_keys = None
    if given["api_keys"] is not None:
        from mcpfast.auth.api_keys import APIKeys

        api_keys = APIKeys.from_file(given["api_keys"])
    if verifier is None and api_keys is None:
        raise ValueError("--issuer, --audience and --required-scope need --jwks-url or --introspection-url")
    from mcpfast.transports.http import BearerAuth

    servers = given["authorization_server"] or ([issuer] if issuer is not None else [])
    if verifier is not None and not servers:
        raise ValueError("--introspection-url needs --issuer or --authorization-server (where clients get tokens)")
    return {"auth": BearerAuth(verifier, resource=audience, authorization_servers=servers,
                               required_scopes=given["required_scope"] or (), api_keys=api_keys)}
