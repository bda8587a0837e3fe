"""MCPFAST_SECRET: one key for the signed values of every process of a deployment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpfast.server import shared_secret

ROOT = Path(__file__).resolve().parents[2]
PROBE = ("from mcpfast.server.shared_secret import derived_key; "
         "from mcpfast import Server; Server('x'); print(derived_key('cursor').hex())")


def probe(secret):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("MCPFAST_SECRET", None)
    if secret is not None:
        env["MCPFAST_SECRET"] = secret
    return subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=60)


def test_processes_with_one_secret_derive_the_same_keys():
    hex_secret = "ab" * 32
    first, second = probe(hex_secret), probe(hex_secret)
    assert first.returncode == 0 and first.stdout == second.stdout
    assert probe("a passphrase of some length").stdout != first.stdout
    # Without it, each process draws its own.
    assert probe(None).stdout != probe(None).stdout


def test_a_short_secret_is_refused_at_start():
    done = probe("abcd")
    assert done.returncode != 0 and "MCPFAST_SECRET must be at least 32 hex digits" in done.stderr


def test_each_purpose_has_its_own_key():
    assert shared_secret.derived_key("cursor") != shared_secret.derived_key("request-state")
    assert len(shared_secret.derived_key("cursor")) == 32
    with pytest.raises(ValueError):
        shared_secret._parse("short")
    assert shared_secret._parse("00" * 16) == bytes(16)
