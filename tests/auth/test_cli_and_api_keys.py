"""Authorization without code: ``mcpfast run --transport http --jwks-url ... --issuer ...
--audience ... [--required-scope ...]`` and ``--introspection-url`` (its client credentials
from the environment), ``--api-keys FILE``; and the API keys themselves (hashed at rest,
the X-API-Key header, beside bearer tokens or instead of them)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Optional

import jwt as jose
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from endpoint_requests import INIT, answer, post, request
from jwks_server import JWKSServer
from mcpfast import AccessToken, Context, Server, cli
from mcpfast.auth.api_keys import APIKey, APIKeys, hash_key, new_key
from mcpfast.auth.api_keys import main as api_keys_main
from mcpfast.auth.errors import InvalidToken
from mcpfast.transports.http import BearerAuth

ROOT = Path(__file__).resolve().parents[2]
ISSUER = "https://auth.example.com"
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)

SERVER_FILE = '''
from mcpfast import Context, Server

app = Server("cli-auth")


@app.tool()
def whoami(ctx: Context) -> str:
    return ctx.auth.subject
'''


def jwks() -> dict[str, Any]:
    jwk = json.loads(jose.algorithms.RSAAlgorithm.to_jwk(KEY.public_key()))
    return {"keys": [{**jwk, "kid": "k1", "use": "sig"}]}


def token(audience: str, scope: str = "mcp:tools") -> str:
    now = int(time.time())
    return jose.encode({"iss": ISSUER, "aud": audience, "sub": "alice", "scope": scope, "iat": now,
                        "exp": now + 300}, KEY, algorithm="RS256", headers={"kid": "k1"})


def status_of(url: str, headers: dict[str, str]) -> tuple[int, Optional[str], str]:
    body = json.dumps(request(1, "initialize", INIT)).encode()
    sent = urllib.request.Request(url, data=body, headers={
        "content-type": "application/json", "accept": "application/json, text/event-stream", **headers})
    try:
        with urllib.request.urlopen(sent, timeout=20) as response:
            return response.status, response.headers.get("www-authenticate"), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("www-authenticate"), exc.read().decode()


def run_server(tmp_path: Path, *flags: str, env: Optional[dict[str, str]] = None) -> tuple[subprocess.Popen, str]:
    script = tmp_path / "server.py"
    script.write_text(SERVER_FILE)
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpfast", "run", f"{script}:app", "--transport", "http", "--port", "0", *flags],
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    for line in process.stderr:
        found = re.search(r"on (http://127\.0\.0\.1:\d+/mcp)", line)
        if found:
            return process, found.group(1)
    process.wait(10)
    raise AssertionError("the server never listened")


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    process.wait(10)
    if process.stderr is not None:
        process.stderr.close()


def test_run_with_jwks_flags_verifies_bearer_jwts(tmp_path: Path) -> None:
    audience = "http://127.0.0.1/mcp"  # the canonical URL the tokens are for
    with JWKSServer(jwks()) as keys:
        process, url = run_server(tmp_path, "--jwks-url", keys.url, "--issuer", ISSUER,
                                  "--audience", audience, "--required-scope", "mcp:tools")
        try:
            status, challenge, _ = status_of(url, {})
            assert status == 401
            assert 'resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"' in challenge
            assert 'scope="mcp:tools"' in challenge
            assert status_of(url, {"authorization": f"Bearer {token(audience)}"})[0] == 200
            status, challenge, _ = status_of(url, {"authorization": f"Bearer {token('https://other/mcp')}"})
            assert status == 401 and "not meant for this resource" in challenge
            status, challenge, _ = status_of(url, {"authorization": f"Bearer {token(audience, 'other')}"})
            assert status == 403 and 'error="insufficient_scope"' in challenge
        finally:
            stop(process)


def test_run_with_api_keys_only(tmp_path: Path) -> None:
    key = new_key()
    keys_file = tmp_path / "keys"
    keys_file.write_text(f"# robots\n{hash_key(key)} robot mcp:tools,files:read\n")
    assert key not in keys_file.read_text()
    process, url = run_server(tmp_path, "--api-keys", str(keys_file), "--audience", "http://127.0.0.1/mcp")
    try:
        assert status_of(url, {"x-api-key": key})[0] == 200
        status, challenge, _ = status_of(url, {"x-api-key": key + "x"})
        assert status == 401 and 'error_description="the API key is not valid"' in challenge
        status, challenge, _ = status_of(url, {"authorization": f"Bearer {key}"})
        assert status == 401 and "takes an API key (x-api-key), not a bearer token" in challenge
    finally:
        stop(process)


@pytest.mark.parametrize("argv, message", [
    (["--jwks-url", "https://a/jwks", "--issuer", ISSUER], "--audience URL is needed"),
    (["--jwks-url", "https://a/jwks", "--audience", "https://m/mcp"], "--jwks-url needs --issuer"),
    (["--jwks-url", "http://a.example/jwks", "--issuer", ISSUER, "--audience", "https://m/mcp"], "https URL"),
    (["--jwks-url", "https://a/jwks", "--introspection-url", "https://a/i", "--issuer", ISSUER,
      "--audience", "https://m/mcp"], "not both"),
    (["--introspection-url", "https://a/i", "--issuer", ISSUER, "--audience", "https://m/mcp"],
     "MCPFAST_INTROSPECTION_CLIENT_ID"),
    (["--issuer", ISSUER, "--audience", "https://m/mcp"], "need --jwks-url or --introspection-url"),
])
def test_run_refuses_incomplete_auth_flags(tmp_path: Path, capsys: Any, argv: list[str], message: str,
                                           monkeypatch: Any) -> None:
    monkeypatch.delenv("MCPFAST_INTROSPECTION_CLIENT_ID", raising=False)
    script = tmp_path / "server.py"
    script.write_text(SERVER_FILE)
    assert cli.main(["run", str(script), "--transport", "http", *argv]) == 2
    assert message in capsys.readouterr().err


def test_auth_flags_need_http(tmp_path: Path, capsys: Any) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER_FILE)
    assert cli.main(["run", str(script), "--jwks-url", "https://a/jwks"]) == 2
    assert "apply to --transport http and websocket" in capsys.readouterr().err


def test_introspection_flags_take_the_credentials_from_the_environment() -> None:
    from mcpfast.auth.introspection import IntrospectionVerifier
    from mcpfast.cli_auth import auth_options

    args = cli._parser().parse_args(["run", "x.py", "--transport", "http", "--introspection-url",
                                     "https://auth.example.com/introspect", "--issuer", ISSUER,
                                     "--audience", "https://mcp.example.com/mcp"])
    environ = {"MCPFAST_INTROSPECTION_CLIENT_ID": "mcp", "MCPFAST_INTROSPECTION_CLIENT_SECRET": "s3cret"}
    auth = auth_options(args, environ)["auth"]
    assert isinstance(auth.verifier, IntrospectionVerifier)
    assert auth.verifier.client_id == "mcp" and auth.authorization_servers == [ISSUER]
    assert "s3cret" not in repr(auth.verifier)


# -- API keys ------------------------------------------------------------------------------

def test_api_keys_are_hashed_compared_whole_and_refused_clearly() -> None:
    key = new_key()
    assert key.startswith("mcpk_") and len(key) > 40
    keys = APIKeys([APIKey(hash_key(key), "robot", frozenset({"a"})), APIKey(hash_key(new_key()), "other")])
    verified = keys.verify(key)
    assert verified.subject == "robot" and verified.scopes == {"a"} and verified.token == key
    for wrong in (key[:-1], key + "x", "", hash_key(key)):
        with pytest.raises(InvalidToken, match="the API key is not valid"):
            keys.verify(wrong)
    with pytest.raises(ValueError, match="64 lower-case hex"):
        APIKey("sha256:abc", "robot")
    with pytest.raises(ValueError, match="at least one key"):
        APIKeys([])


def test_a_bad_key_file_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    path.write_text(f"{hash_key('x')} robot\nnot-a-digest robot\n")
    with pytest.raises(ValueError, match=r"keys:2: an API key's digest"):
        APIKeys.from_file(path)


def test_the_key_maker_prints_a_key_and_its_line(capsys: Any) -> None:
    assert api_keys_main(["robot", "mcp:tools", "files:read"]) == 0
    out = capsys.readouterr().out
    key = re.search(r"it is not stored\): (\S+)", out).group(1)
    line = re.search(r"key file: (.+)", out).group(1)
    assert line == f"{hash_key(key)} robot mcp:tools,files:read"


def test_api_keys_beside_bearer_tokens_on_the_endpoint() -> None:
    key = new_key()
    app = Server("both")

    @app.tool()
    def whoami(ctx: Context) -> str:
        return ctx.auth.subject

    tokens = {"tok": AccessToken("alice", {"mcp:tools"})}
    auth = BearerAuth(tokens.get, resource="https://mcp.example.com/mcp",
                      authorization_servers=[ISSUER], required_scopes=["mcp:tools"],
                      api_keys=APIKeys([APIKey(hash_key(key), "robot", frozenset({"mcp:tools"})),
                                        APIKey(hash_key(key + "2"), "weak")]))

    async def main() -> None:
        endpoint = app.http_endpoint(auth=auth, stateless=True)

        async def status(headers: dict[str, str]) -> int:
            req = post(request(1, "tools/call", {"name": "whoami", "arguments": {}}))
            req.headers.update(headers)
            response = await answer(endpoint.handle(req))
            return response.status

        assert await status({"x-api-key": key}) == 200
        assert await status({"authorization": "Bearer tok"}) == 200
        assert await status({"x-api-key": key + "2"}) == 403  # a key without the required scope
        assert await status({"x-api-key": "nope"}) == 401
        assert await status({}) == 401

    asyncio.run(main())
