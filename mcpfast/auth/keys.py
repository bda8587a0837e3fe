"""Which key may check which JWS algorithm: the rule that keeps an HMAC secret, a public key
and ``alg: none`` from being confused (RFC 8725 sections 2.1 and 3.1).

Each asymmetric algorithm names the one key type it is checked with (and, for ECDSA, the
curve); a key of any other type refuses the token. HMAC algorithms are only ever checked with
a secret given as such (``JWTVerifier(secret=...)``), never with a key from a key set.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional, Union

try:
    from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_private_key, load_pem_public_key
except ImportError as exc:  # pragma: no cover - the extra is installed in the tests
    raise ImportError("JWT keys need cryptography: pip install 'mcpfast[auth]'") from exc

__all__ = ["ASYMMETRIC_ALGORITHMS", "HMAC_ALGORITHMS", "PublicKey", "check_algorithms",
           "key_fits", "load_public_key"]

PublicKey = Union[rsa.RSAPublicKey, ec.EllipticCurvePublicKey, ed25519.Ed25519PublicKey,
                  ed448.Ed448PublicKey]

_RSA = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512")
_EC_CURVES = {"ES256": "secp256r1", "ES384": "secp384r1", "ES512": "secp521r1"}
ASYMMETRIC_ALGORITHMS: tuple[str, ...] = (*_RSA, *_EC_CURVES, "EdDSA")
HMAC_ALGORITHMS: tuple[str, ...] = ("HS256", "HS384", "HS512")


def check_algorithms(algorithms: Iterable[str], *, hmac: bool) -> tuple[str, ...]:
    """The allow-list, checked: known names only, never ``none``, HMAC ones only with a secret
    (``hmac``) and then only those."""
    chosen = tuple(algorithms)
    if isinstance(algorithms, str) or not chosen:
        raise ValueError("algorithms must be a non-empty list of JWS algorithm names")
    allowed = HMAC_ALGORITHMS if hmac else ASYMMETRIC_ALGORITHMS
    for name in chosen:
        if name not in allowed:
            kind = "a secret (HS256/384/512)" if hmac else "public keys"
            raise ValueError(f"algorithm {name!r} cannot be checked with {kind}; "
                             f"allowed: {', '.join(allowed)}")
    return chosen


def key_fits(key: Any, algorithm: str) -> bool:
    """Whether ``key`` (a cryptography public key) is the type ``algorithm`` is checked with."""
    if algorithm in _RSA:
        return isinstance(key, rsa.RSAPublicKey) and key.key_size >= 2048
    curve = _EC_CURVES.get(algorithm)
    if curve is not None:
        return isinstance(key, ec.EllipticCurvePublicKey) and key.curve.name == curve
    if algorithm == "EdDSA":
        return isinstance(key, (ed25519.Ed25519PublicKey, ed448.Ed448PublicKey))
    return False


def load_public_key(key: Any) -> PublicKey:
    """A public key from a cryptography key (a private one gives its public half), PEM text
    or bytes, or a JWK dict; TypeError/ValueError saying why else."""
    if isinstance(key, dict):
        from jwt import PyJWK  # the JOSE library parses JWKs

        if key.get("kty") == "oct":
            raise ValueError("a symmetric JWK (kty oct) is not a public key: give it as secret=")
        key = PyJWK(key).key
    if isinstance(key, str):
        key = key.encode()
    if isinstance(key, bytes):
        text = key.strip()
        if b"PRIVATE KEY" in text:
            key = load_pem_private_key(text, password=None)
        elif text.startswith(b"-----BEGIN"):
            key = load_pem_public_key(text)
        else:
            raise ValueError("key must be a PEM public key, a JWK dict or a cryptography key; "
                             "an HMAC secret goes in secret=")
    public = getattr(key, "public_key", None)
    if callable(public) and not isinstance(key, (rsa.RSAPublicKey, ec.EllipticCurvePublicKey,
                                                 ed25519.Ed25519PublicKey, ed448.Ed448PublicKey)):
        key = public()
    if not isinstance(key, (rsa.RSAPublicKey, ec.EllipticCurvePublicKey, ed25519.Ed25519PublicKey,
                            ed448.Ed448PublicKey)):
        raise TypeError(f"key must be an RSA, EC or EdDSA public key, not {type(key).__name__}")
    return key


def jwk_public_key(jwk: dict[str, Any]) -> Optional[PublicKey]:
    """The public key of one member of a JWKS, or None for a member that is no signing
    public key (``use`` other than ``sig``, a symmetric or unparseable key)."""
    if not isinstance(jwk, dict) or jwk.get("kty") not in ("RSA", "EC", "OKP"):
        return None
    if jwk.get("use", "sig") != "sig":
        return None
    try:
        return load_public_key(jwk)
    except Exception:  # noqa: BLE001 -- a key we cannot read is a key we do not use
        return None
