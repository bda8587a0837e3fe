"""JWTVerifier: tokens signed in the test with keys made in the test (PyJWT, cryptography),
checked against a static key and against a JWKS served on loopback; each way a token can be
wrong gets its own refusal, and the key set is fetched, cached and refreshed within bounds."""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
import time
from typing import Any

import jwt as jose
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from jwks_server import JWKSServer
from mcpfast.auth import AccessToken
from mcpfast.auth.errors import InvalidToken
from mcpfast.auth.jwt import JWTVerifier
from mcpfast.transports.http import BearerAuth

ISSUER = "https://auth.example.com"
RESOURCE = "https://mcp.example.com/mcp"

RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
OTHER_RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())


def claims(**changes: Any) -> dict[str, Any]:
    now = int(time.time())
    base = {"iss": ISSUER, "aud": RESOURCE, "sub": "alice", "iat": now, "exp": now + 300,
            "scope": "files:read files:write", "client_id": "app"}
    base.update(changes)
    return {k: v for k, v in base.items() if v is not None}


def sign(key: Any = RSA_KEY, algorithm: str = "RS256", kid: Any = "k1", **changes: Any) -> str:
    headers = {"kid": kid} if kid is not None else {}
    return jose.encode(claims(**changes), key, algorithm=algorithm, headers=headers)


def jwk_of(key: Any, kid: str, **extra: Any) -> dict[str, Any]:
    jwk = json.loads(jose.algorithms.get_default_algorithms()["RS256" if isinstance(key, rsa.RSAPrivateKey)
                                                               else "ES256"].to_jwk(key.public_key()))
    jwk.update(kid=kid, use="sig", **extra)
    return jwk


def resolve(value: Any) -> Any:
    return asyncio.run(value) if inspect.isawaitable(value) else value


def refusal(verifier: JWTVerifier, token: str) -> str:
    with pytest.raises(InvalidToken) as caught:
        resolve(verifier(token))
    return caught.value.description


def static_verifier(**options: Any) -> JWTVerifier:
    return JWTVerifier(issuer=ISSUER, audience=RESOURCE, key=RSA_KEY.public_key(), **options)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# -- a static key -------------------------------------------------------------------------

def test_a_good_token_gives_its_subject_scopes_and_expiry() -> None:
    token = sign()
    verified = static_verifier()(token)
    assert isinstance(verified, AccessToken)  # a static key answers without awaiting
    assert verified.subject == "alice"
    assert verified.scopes == {"files:read", "files:write"}
    assert verified.client_id == "app"
    assert verified.expires_at == claims()["exp"] or abs(verified.expires_at - time.time() - 300) < 5
    assert verified.token == token and verified.claims["iss"] == ISSUER


def test_scp_lists_and_client_credentials_tokens() -> None:
    verified = static_verifier()(sign(scope=None, scp=["a", "b"], sub=None, client_id="robot"))
    assert verified.subject == "robot" and verified.scopes == {"a", "b"}
    assert static_verifier()(sign(scope=None, scp="x y")).scopes == {"x", "y"}


def test_the_key_may_be_pem_or_a_jwk() -> None:
    pem = RSA_KEY.public_key().public_bytes(serialization.Encoding.PEM,
                                            serialization.PublicFormat.SubjectPublicKeyInfo)
    for key in (pem, pem.decode(), jwk_of(RSA_KEY, "k1")):
        verifier = JWTVerifier(issuer=ISSUER, audience=RESOURCE, key=key)
        assert verifier(sign()).subject == "alice"


def test_an_audience_list_accepts_any_of_its_members() -> None:
    verifier = JWTVerifier(issuer=ISSUER, audience=["https://other/mcp", RESOURCE], key=RSA_KEY)
    assert verifier(sign(aud=[RESOURCE, "https://api"])).subject == "alice"


def tampered(token: str) -> str:
    header, payload, signature = token.split(".")
    data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    data["scope"] = "admin"
    return ".".join((header, b64(json.dumps(data).encode()), signature))


def alg_none() -> str:
    header = b64(json.dumps({"alg": "none", "typ": "JWT", "kid": "k1"}).encode())
    return f"{header}.{b64(json.dumps(claims()).encode())}."


def hmac_with_the_public_key() -> str:
    # The classic confusion: the public key's PEM used as an HMAC secret.
    pem = RSA_KEY.public_key().public_bytes(serialization.Encoding.PEM,
                                            serialization.PublicFormat.SubjectPublicKeyInfo)
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64(json.dumps(claims()).encode())
    import hashlib
    import hmac

    mac = hmac.new(pem, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64(mac)}"


@pytest.mark.parametrize("make, description", [
    (lambda: sign(exp=int(time.time()) - 120), "the access token has expired"),
    (lambda: sign(nbf=int(time.time()) + 120), "the access token is not valid yet (nbf or iat in the future)"),
    (lambda: sign(aud="https://elsewhere.example.com/mcp"), "the access token is not meant for this resource (aud)"),
    (lambda: sign(aud=None), "the access token lacks the 'aud' claim"),
    (lambda: sign(iss="https://evil.example.com"),
     "the access token comes from an issuer this server does not trust (iss)"),
    (lambda: sign(exp=None), "the access token lacks the 'exp' claim"),
    (lambda: tampered(sign()), "the access token's signature does not verify"),
    (lambda: sign(key=OTHER_RSA_KEY), "the access token's signature does not verify"),
    (alg_none, "the access token's signing algorithm (none) is not accepted"),
    (hmac_with_the_public_key, "the access token's signing algorithm (HS256) is not accepted"),
    (lambda: sign(key=EC_KEY, algorithm="ES256"), "the access token's algorithm does not fit the key it names"),
    (lambda: "not.a.jwt", "the access token is not a well-formed JWT"),
    (lambda: sign(sub=None, client_id=None), "the access token names no subject (sub) nor client (client_id)"),
], ids=["expired", "not-yet", "wrong-audience", "no-audience", "wrong-issuer", "no-exp", "tampered",
        "wrong-key", "alg-none", "hmac-confusion", "key-type", "malformed", "nobody"])
def test_each_bad_token_is_refused_with_its_own_reason(make, description) -> None:
    assert refusal(static_verifier(), make()) == description


def test_leeway_admits_a_small_clock_skew_only() -> None:
    just_expired = sign(exp=int(time.time()) - 10)
    assert static_verifier()(just_expired).subject == "alice"
    assert refusal(static_verifier(leeway=0), just_expired) == "the access token has expired"


def test_an_hmac_secret_is_only_a_secret() -> None:
    secret = b"s" * 32
    verifier = JWTVerifier(issuer=ISSUER, audience=RESOURCE, secret=secret)
    assert verifier(sign(key=secret, algorithm="HS256")).subject == "alice"
    # A token signed with a public algorithm is not checked against the secret.
    assert refusal(verifier, sign()) == "the access token's signing algorithm (RS256) is not accepted"


@pytest.mark.parametrize("options, message", [
    ({"key": RSA_KEY, "algorithms": ["none"]}, "algorithm 'none' cannot be checked"),
    ({"key": RSA_KEY, "algorithms": ["HS256"]}, "algorithm 'HS256' cannot be checked"),
    ({"secret": b"s" * 32, "algorithms": ["RS256"]}, "algorithm 'RS256' cannot be checked"),
    ({"secret": b"short"}, "at least 32"),
    ({}, "exactly one of"),
    ({"key": RSA_KEY, "jwks_url": "https://a/jwks"}, "exactly one of"),
    ({"jwks_url": "http://auth.example.com/jwks"}, "https URL"),
    ({"key": {"kty": "oct", "k": "c2VjcmV0"}}, "symmetric JWK"),
    ({"key": b"s" * 32}, "HMAC secret goes in secret="),
])
def test_unsafe_configurations_are_refused(options, message) -> None:
    with pytest.raises((ValueError, TypeError), match=message.replace("(", r"\(")):
        JWTVerifier(issuer=ISSUER, audience=RESOURCE, **options)


# -- a JWKS on loopback --------------------------------------------------------------------

def test_the_key_set_is_fetched_once_and_then_used_at_once() -> None:
    with JWKSServer({"keys": [jwk_of(RSA_KEY, "k1"), jwk_of(EC_KEY, "k2")]}) as jwks:
        verifier = JWTVerifier(issuer=ISSUER, audience=RESOURCE, jwks_url=jwks.url, cache_ttl=0)
        first = verifier(sign())
        assert inspect.isawaitable(first)
        assert resolve(first).subject == "alice"
        second = verifier(sign(key=EC_KEY, algorithm="ES256", kid="k2"))
        assert isinstance(second, AccessToken) and second.subject == "alice"
        assert jwks.gets == 1


def test_a_rotated_key_is_picked_up_and_made_up_kids_are_bounded() -> None:
    with JWKSServer({"keys": [jwk_of(RSA_KEY, "k1")]}) as jwks:
        verifier = JWTVerifier(issuer=ISSUER, audience=RESOURCE, jwks_url=jwks.url, jwks_min_interval=30, cache_ttl=0)
        now = [1000.0]
        verifier.jwks.clock = lambda: now[0]
        assert resolve(verifier(sign())).subject == "alice"
        jwks.jwks = {"keys": [jwk_of(RSA_KEY, "k1"), jwk_of(OTHER_RSA_KEY, "k2")]}
        rotated = sign(key=OTHER_RSA_KEY, kid="k2")
        # Within the bound the set is not fetched again: the new kid is unknown for now.
        unknown = "the access token is signed with a key this server does not know (kid 'k2')"
        for _ in range(5):
            assert refusal(verifier, rotated) == unknown
        assert jwks.gets == 1
        now[0] += 31
        assert resolve(verifier(rotated)).subject == "alice"
        assert jwks.gets == 2
        # A kid nobody has: one more fetch after the bound, no more.
        now[0] += 31
        for _ in range(3):
            assert "does not know" in refusal(verifier, sign(kid="nobody"))
        assert jwks.gets == 3


def test_the_set_is_fetched_again_when_it_is_old_and_cache_control_shortens_its_life() -> None:
    with JWKSServer({"keys": [jwk_of(RSA_KEY, "k1")]}, max_age=60) as jwks:
        verifier = JWTVerifier(issuer=ISSUER, audience=RESOURCE, jwks_url=jwks.url,
                               jwks_min_interval=10, jwks_max_age=600, cache_ttl=0)
        now = [1000.0]
        verifier.jwks.clock = lambda: now[0]
        resolve(verifier(sign()))
        now[0] += 59
        assert isinstance(verifier(sign()), AccessToken)
        now[0] += 2  # past max-age=60: fetched again
        assert inspect.isawaitable(pending := verifier(sign()))
        resolve(pending)
        assert jwks.gets == 2


def test_a_failing_key_set_keeps_the_keys_held_and_fails_loudly_with_none() -> None:
    with JWKSServer({"keys": [jwk_of(RSA_KEY, "k1")]}) as jwks:
        verifier = JWTVerifier(issuer=ISSUER, audience=RESOURCE, jwks_url=jwks.url,
                               jwks_min_interval=1, jwks_max_age=1, cache_ttl=0)
        now = [1000.0]
        verifier.jwks.clock = lambda: now[0]
        resolve(verifier(sign()))
        jwks.status = 503
        now[0] += 5
        assert resolve(verifier(sign())).subject == "alice"  # stale keys, logged
        assert jwks.gets == 2
        cold = JWTVerifier(issuer=ISSUER, audience=RESOURCE, jwks_url=jwks.url, cache_ttl=0)
        with pytest.raises(Exception, match="HTTP 503"):
            resolve(cold(sign()))


def test_concurrent_tokens_share_one_fetch() -> None:
    with JWKSServer({"keys": [jwk_of(RSA_KEY, "k1")]}) as jwks:
        verifier = JWTVerifier(issuer=ISSUER, audience=RESOURCE, jwks_url=jwks.url, cache_ttl=0)

        async def many() -> list[AccessToken]:
            return await asyncio.gather(*(verifier(sign()) for _ in range(10)))

        assert {t.subject for t in asyncio.run(many())} == {"alice"}
        assert jwks.gets == 1


def test_a_jwk_with_its_own_alg_refuses_other_algorithms() -> None:
    with JWKSServer({"keys": [jwk_of(RSA_KEY, "k1", alg="PS256")]}) as jwks:
        verifier = JWTVerifier(issuer=ISSUER, audience=RESOURCE, jwks_url=jwks.url, cache_ttl=0)
        assert resolve(verifier(sign(algorithm="PS256"))).subject == "alice"
        assert refusal(verifier, sign(algorithm="RS256")) == \
            "the access token's algorithm does not fit the key it names"


# -- through BearerAuth: the challenge the client reads ------------------------------------

def test_bearer_auth_sends_each_reason_in_its_challenge() -> None:
    auth = BearerAuth(static_verifier(), resource=RESOURCE, authorization_servers=[ISSUER])
    expired = auth.authenticate({"authorization": f"Bearer {sign(exp=int(time.time()) - 120)}"})
    assert expired.status == 401
    assert 'error="invalid_token", error_description="the access token has expired"' in \
        expired.header("www-authenticate")
    wrong = auth.authenticate({"authorization": f"Bearer {sign(aud='https://x/mcp')}"})
    assert 'error_description="the access token is not meant for this resource (aud)"' in \
        wrong.header("www-authenticate")
    good = auth.authenticate({"authorization": f"Bearer {sign()}"})
    assert isinstance(good, AccessToken) and good.subject == "alice"


def test_a_verified_token_is_kept_until_its_ttl_and_never_past_its_exp() -> None:
    verifier = static_verifier(cache_ttl=60, leeway=0)
    token = sign()
    first = verifier(token)
    assert verifier(token) is first  # kept: no second signature check
    assert verifier.kept_until(token) is not None
    # Kept by digest: a token differing in one character is checked (and refused) anew.
    assert refusal(verifier, tampered(token)) == "the access token's signature does not verify"
    brief = sign(exp=int(time.time()) + 1)
    verifier(brief)
    assert verifier.kept_until(brief) <= time.time() + 1
    uncached = static_verifier(cache_ttl=0)
    assert uncached(token) is not uncached(token)
