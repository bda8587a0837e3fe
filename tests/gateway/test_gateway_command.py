"""``mcpfast gateway config.json`` as a process: over stdio, over HTTP with /healthz and
bearer tokens, and SIGHUP reload keeping the downstream session."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import mcpfast
from mcpfast.gateway.config import ConfigError, parse_config
from mcpfast.jsonrpc.errors import JSONRPCError

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from gateway_process import start_http_gateway, stop  # noqa: E402
from loop import eventually  # noqa: E402

APPS = str(HERE / "gateway_apps.py")


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 60))


def write_config(path: Path, servers: dict, **top) -> str:
    path.write_text(json.dumps({"mcpServers": servers, **top}))
    return str(path)


def base_servers() -> dict:
    return {
        "fs": {"command": sys.executable, "args": [APPS, "files"], "cwd": str(HERE)},
        "calc": {"command": sys.executable, "args": [APPS, "math"], "namespace": ""},
        "gone": {"command": sys.executable, "args": ["-c", "raise SystemExit(1)"], "startTimeout": 5},
    }


def test_gateway_command_over_stdio(tmp_path):
    config = write_config(tmp_path / "gateway.json", base_servers())

    async def main():
        async with mcpfast.connect([sys.executable, "-m", "mcpfast", "gateway", config],
                                   stderr=subprocess.DEVNULL) as client:
            assert client.server_info["name"] == "mcpfast-gateway"
            names = {tool["name"] for tool in await client.list_tools()}
            assert {"fs_read_file", "add"} <= names
            assert (await client.call_tool("add", {"a": 1, "b": 2}))["structuredContent"] == {"result": 3}

    run(main())


def test_gateway_command_over_http_with_healthz_and_bearer_tokens(tmp_path):
    config = write_config(tmp_path / "gateway.json", base_servers(), name="edge",
                          auth={"bearerTokens": ["s3cret"]})
    process, url = start_http_gateway(config)
    try:
        health_url = url.replace("/mcp", "/healthz")
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(health_url, timeout=10)
        # "gone" never starts: 503, with each upstream's state.
        assert caught.value.code == 503
        report = json.loads(caught.value.read())
        assert report["status"] == "degraded"
        assert report["upstreams"]["fs"]["state"] == "ready"
        assert report["upstreams"]["calc"]["state"] == "ready"
        assert report["upstreams"]["gone"]["state"] in ("failed", "restarting")
        assert "s3cret" not in json.dumps(report)

        async def main():
            with pytest.raises(JSONRPCError, match="HTTP 401"):
                await mcpfast.connect(url)  # no token
            async with mcpfast.connect(url, auth="s3cret") as client:
                assert client.server_info["name"] == "edge"
                assert (await client.call_tool("fs_read_file", {"path": "/x"}))["content"][0]["text"] == \
                    "contents of /x"

        run(main())
    finally:
        stop(process)


def test_gateway_edge_verifies_jwts_with_the_run_flags(tmp_path):
    # mcpfast run's verifier flags at the gateway's edge: a JWT checked against a JWKS URL.
    import time

    import jwt as jose
    from cryptography.hazmat.primitives.asymmetric import rsa

    from jwks_server import JWKSServer

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(jose.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    issuer, audience = "https://auth.example.com", "http://127.0.0.1/mcp"

    def token(aud: str) -> str:
        now = int(time.time())
        return jose.encode({"iss": issuer, "aud": aud, "sub": "alice", "scope": "mcp", "iat": now,
                            "exp": now + 300}, key, algorithm="RS256", headers={"kid": "k1"})

    config = write_config(tmp_path / "gateway.json", {"calc": base_servers()["calc"]}, name="edge")
    with JWKSServer({"keys": [{**jwk, "kid": "k1", "use": "sig"}]}) as keys:
        process, url = start_http_gateway(config, "--jwks-url", keys.url, "--issuer", issuer,
                                          "--audience", audience)
        try:
            async def main():
                with pytest.raises(JSONRPCError, match="HTTP 401"):
                    await mcpfast.connect(url)  # no token
                with pytest.raises(JSONRPCError, match="HTTP 401"):
                    await mcpfast.connect(url, auth=token("https://elsewhere.example/mcp"))
                async with mcpfast.connect(url, auth=token(audience)) as client:
                    assert (await client.call_tool("add", {"a": 2, "b": 3}))["structuredContent"] == \
                        {"result": 5}

            run(main())
        finally:
            stop(process)


def test_gateway_refuses_bearer_tokens_and_verifier_flags_together(tmp_path):
    config = write_config(tmp_path / "gateway.json", {"calc": base_servers()["calc"]},
                          auth={"bearerTokens": ["s3cret"]})
    done = subprocess.run([sys.executable, "-m", "mcpfast", "gateway", config, "--transport", "http",
                           "--jwks-url", "https://a.example/jwks", "--issuer", "https://a.example",
                           "--audience", "http://127.0.0.1/mcp"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert "not both" in done.stderr
    done = subprocess.run([sys.executable, "-m", "mcpfast", "gateway", config, "--jwks-url", "https://a/jwks"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "--transport http" in done.stderr


def test_sighup_reloads_the_config_without_dropping_the_session(tmp_path):
    path = tmp_path / "gateway.json"
    servers = {"calc": {"command": sys.executable, "args": [APPS, "math"]}}
    config = write_config(path, servers)
    process, url = start_http_gateway(config)
    try:
        async def main():
            changed = []
            async with mcpfast.connect(url, on_list_changed=changed.append) as client:
                assert {tool["name"] for tool in await client.list_tools()} == {"calc_add"}
                servers["calc"]["namespace"] = "m"
                servers["fs"] = {"command": sys.executable, "args": [APPS, "files"], "allow": ["read_file"]}
                write_config(path, servers)
                os.kill(process.pid, signal.SIGHUP)
                await eventually(lambda: "tools" in changed, timeout=20)

                async def names():
                    return {tool["name"] for tool in await client.list_tools()}

                deadline = asyncio.get_running_loop().time() + 20
                while await names() != {"m_add", "fs_read_file"}:
                    assert asyncio.get_running_loop().time() < deadline, await names()
                    await asyncio.sleep(0.05)
                # The same downstream session goes on.
                assert (await client.call_tool("m_add", {"a": 4, "b": 5}))["structuredContent"] == {"result": 9}

        run(main())
    finally:
        stop(process)


def test_config_errors_name_the_server_and_key():
    with pytest.raises(ConfigError, match="mcpServers.fs needs exactly one of command or url"):
        parse_config({"mcpServers": {"fs": {"args": []}}})
    with pytest.raises(ConfigError, match="mcpServers.fs has unknown keys: comand"):
        parse_config({"mcpServers": {"fs": {"comand": "x"}}})
    with pytest.raises(ConfigError, match="mcpServers.api.env applies to a command server"):
        parse_config({"mcpServers": {"api": {"url": "http://h/mcp", "env": {}}}})
    with pytest.raises(ConfigError, match="timeout must be a positive number"):
        parse_config({"mcpServers": {"fs": {"command": "x", "timeout": -1}}})
    parsed = parse_config({"mcpServers": {"fs": {"command": "x"}, "t": {"url": "http://h/mcp", "namespace": ""}}})
    assert [(u.key, u.mount["namespace"]) for u in parsed.upstreams] == [("fs", "fs"), ("t", "")]


def test_gateway_command_refuses_a_bad_config(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    done = subprocess.run([sys.executable, "-m", "mcpfast", "gateway", str(bad)], capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == 2
    assert "is not JSON" in done.stderr
