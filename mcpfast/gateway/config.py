"""The gateway's config file: the ``mcpServers`` form MCP clients use, plus the gateway's
own keys.

    {
      "name": "my-gateway",                       // optional: the gateway's serverInfo name
      "auth": {"bearerTokens": ["..."]},          // optional: bearer tokens accepted (HTTP)
      "mcpServers": {
        "fs":   {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                 "env": {"KEY": "value"}, "cwd": "/tmp"},
        "time": {"command": "uvx", "args": ["mcp-server-time"], "namespace": ""},
        "api":  {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${API_TOKEN}"},
                 "separator": ".", "allow": ["search"], "deny": [], "allowTags": [],
                 "denyTags": [], "rename": {"search": {"name": "find"}},
                 "timeout": 30, "startTimeout": 10, "protocolVersion": "auto"},
        "crm":  {"url": "https://crm.example.com/mcp",
                 "auth": {"type": "client_credentials", "clientId": "gateway",
                          "clientSecret": "${CRM_SECRET}", "scopes": ["mcp:tools"],
                          "tokenUrl": "https://login.example.com/token"}}
      }
    }

Each server's namespace is its key unless ``namespace`` says otherwise ("" mounts its names
unchanged). A url server's ``auth`` is its own OAuth client (:class:`ClientCredentialsConfig`,
the client credentials grant); ``${VAR}`` in its strings and in ``headers`` values is the
environment variable VAR (unset: an error), so secrets need not be in the file.
:func:`load_config` reads and checks a file, :func:`parse_config` a decoded value; both raise
:class:`ConfigError` naming the server and the key at fault.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from mcpfast.gateway.options import DEFAULT_CALL_TIMEOUT, DEFAULT_START_TIMEOUT

__all__ = ["ClientCredentialsConfig", "ConfigError", "GatewayConfig", "UpstreamConfig", "load_config",
           "parse_config"]

_SERVER_KEYS = {"command", "args", "env", "cwd", "url", "headers", "auth", "type", "transport",
                "namespace", "separator", "allow", "deny", "allowTags", "denyTags", "rename",
                "timeout", "startTimeout", "disabled", "protocolVersion"}
_TOP_KEYS = {"mcpServers", "name", "auth"}
# An upstream's auth object: its keys and the ClientCredentials keyword each sets.
_AUTH_KEYS = {"clientId": "client_id", "clientSecret": "client_secret", "scopes": "scopes",
              "tokenUrl": "token_url", "issuer": "issuer", "resource": "resource",
              "authMethod": "auth_method"}
_AUTH_METHODS = ("client_secret_basic", "client_secret_post")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ConfigError(ValueError):
    """A config file that cannot be used; the message says where and why."""


@dataclass(frozen=True)
class UpstreamConfig:
    """One entry of ``mcpServers``: ``target`` (the command or the URL) and the keywords
    of :meth:`mcpfast.gateway.Gateway.mount`."""

    key: str
    target: str
    mount: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ClientCredentialsConfig:
    """An upstream's ``auth``: the OAuth client credentials grant, the gateway's own client.

    Compared by value (a reload with the same auth keeps the upstream's session);
    :meth:`client` makes the :class:`~mcpfast.transports.http.ClientCredentials` a mount
    is given. ``resource`` defaults to the upstream's URL (RFC 8707: the token is for it)."""

    client_id: str
    client_secret: str = field(repr=False)
    resource: str
    scopes: tuple[str, ...] = ()
    token_url: Optional[str] = None
    issuer: Optional[str] = None
    auth_method: str = "client_secret_basic"

    def client(self) -> Any:
        """A new ClientCredentials for one mount (its tokens are that mount's own)."""
        from mcpfast.transports.http.client_credentials import ClientCredentials

        return ClientCredentials(client_id=self.client_id, client_secret=self.client_secret,
                                 scopes=self.scopes, token_url=self.token_url, issuer=self.issuer,
                                 resource=self.resource, auth_method=self.auth_method)


@dataclass(frozen=True)
class GatewayConfig:
    """A whole config file: the gateway's name, its bearer tokens and the upstreams."""

    name: str
    upstreams: tuple[UpstreamConfig, ...]
    bearer_tokens: tuple[str, ...] = ()


def _strs(where: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where} must be a list of strings")
    return value


def _str_map(where: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(f"{where} must be an object of strings")
    return value


def _expanded(where: str, value: str) -> str:
    """``value`` with each ``${VAR}`` replaced by the environment variable VAR."""
    def variable(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise ConfigError(f"{where} names the environment variable {name}, which is not set")
        return os.environ[name]

    return _VARIABLE.sub(variable, value)


def _client_credentials(where: str, value: Any, url: str) -> ClientCredentialsConfig:
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must be an object with type \"client_credentials\"")
    if value.get("type") != "client_credentials":
        raise ConfigError(f"{where}.type must be \"client_credentials\" (the OAuth client credentials "
                          f"grant), got {value.get('type')!r}")
    unknown = set(value) - set(_AUTH_KEYS) - {"type"}
    if unknown:
        raise ConfigError(f"{where} has unknown keys: {', '.join(sorted(unknown))}")
    options: dict[str, Any] = {}
    for key, option in _AUTH_KEYS.items():
        if key not in value:
            continue
        if key == "scopes":
            options[option] = tuple(_expanded(f"{where}.scopes", scope)
                                    for scope in _strs(f"{where}.scopes", value[key]))
            continue
        if not isinstance(value[key], str) or not value[key]:
            raise ConfigError(f"{where}.{key} must be a non-empty string")
        options[option] = _expanded(f"{where}.{key}", value[key])
    for required in ("clientId", "clientSecret"):
        if not options.get(_AUTH_KEYS[required]):
            raise ConfigError(f"{where}.{required} is required (a non-empty string; \"${{VAR}}\" reads "
                              f"the environment variable VAR)")
    method = options.get("auth_method", "client_secret_basic")
    if method not in _AUTH_METHODS:
        raise ConfigError(f"{where}.authMethod must be one of {', '.join(_AUTH_METHODS)}, got {method!r}")
    for key in ("tokenUrl", "issuer", "resource"):
        given = options.get(_AUTH_KEYS[key])
        if given is not None and not given.startswith(("http://", "https://")):
            raise ConfigError(f"{where}.{key} must be an http(s) URL, got {given!r}")
    options.setdefault("resource", url)
    return ClientCredentialsConfig(**options)


def _seconds(where: str, value: Any) -> Optional[float]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{where} must be a positive number of seconds or null")
    return float(value)


def _upstream(key: str, entry: Any, base_dir: str) -> Optional[UpstreamConfig]:
    where = f"mcpServers.{key}"
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be an object")
    unknown = set(entry) - _SERVER_KEYS
    if unknown:
        raise ConfigError(f"{where} has unknown keys: {', '.join(sorted(unknown))}")
    if entry.get("disabled") is True:
        return None
    has_command, has_url = "command" in entry, "url" in entry
    if has_command == has_url:
        raise ConfigError(f"{where} needs exactly one of command or url")
    mount: dict[str, Any] = {"name": key}
    if has_command:
        target = entry["command"]
        if not isinstance(target, str) or not target:
            raise ConfigError(f"{where}.command must be a non-empty string")
        mount["args"] = _strs(f"{where}.args", entry.get("args", []))
        if "env" in entry:
            mount["env"] = _str_map(f"{where}.env", entry["env"])
        if "cwd" in entry:
            if not isinstance(entry["cwd"], str):
                raise ConfigError(f"{where}.cwd must be a string")
            mount["cwd"] = os.path.join(base_dir, entry["cwd"])
        for remote in ("headers", "auth"):
            if remote in entry:
                raise ConfigError(f"{where}.{remote} applies to a url server, not a command")
    else:
        target = entry["url"]
        if not isinstance(target, str) or "://" not in target:
            raise ConfigError(f"{where}.url must be a URL (http://, https://, ws://, tcp://)")
        if "headers" in entry:
            mount["headers"] = {name: _expanded(f"{where}.headers.{name}", text)
                                for name, text in _str_map(f"{where}.headers", entry["headers"]).items()}
        if "auth" in entry:
            if not target.startswith(("http://", "https://")):
                raise ConfigError(f"{where}.auth applies to an http(s):// server (OAuth over HTTP)")
            mount["auth"] = _client_credentials(f"{where}.auth", entry["auth"], target)
        for local in ("args", "env", "cwd"):
            if local in entry:
                raise ConfigError(f"{where}.{local} applies to a command server, not a url")
    namespace = entry.get("namespace", key)
    if not isinstance(namespace, str):
        raise ConfigError(f"{where}.namespace must be a string (\"\" for none)")
    mount["namespace"] = namespace
    if "separator" in entry:
        if not isinstance(entry["separator"], str):
            raise ConfigError(f"{where}.separator must be a string")
        mount["separator"] = entry["separator"]
    for config_key, option in (("allow", "allow"), ("deny", "deny"), ("allowTags", "allow_tags"),
                               ("denyTags", "deny_tags")):
        if config_key in entry:
            mount[option] = _strs(f"{where}.{config_key}", entry[config_key])
    if "rename" in entry:
        if not isinstance(entry["rename"], dict):
            raise ConfigError(f"{where}.rename must be an object: tool name -> new name or object")
        mount["rename"] = entry["rename"]
    if "protocolVersion" in entry:
        if not isinstance(entry["protocolVersion"], str):
            raise ConfigError(f"{where}.protocolVersion must be a string (a version or \"auto\")")
        mount["protocol_version"] = entry["protocolVersion"]
    mount["timeout"] = _seconds(f"{where}.timeout", entry.get("timeout", DEFAULT_CALL_TIMEOUT))
    mount["start_timeout"] = _seconds(f"{where}.startTimeout",
                                      entry.get("startTimeout", DEFAULT_START_TIMEOUT))
    return UpstreamConfig(key, target, mount)


def parse_config(value: Any, base_dir: str = ".") -> GatewayConfig:
    """A checked GatewayConfig from a decoded config value (module docstring);
    ``base_dir``: what relative ``cwd`` values are relative to."""
    if not isinstance(value, dict):
        raise ConfigError("the config must be a JSON object with an mcpServers object")
    unknown = set(value) - _TOP_KEYS
    if unknown:
        raise ConfigError(f"the config has unknown keys: {', '.join(sorted(unknown))}")
    servers = value.get("mcpServers")
    if not isinstance(servers, dict):
        raise ConfigError("the config needs an mcpServers object")
    name = value.get("name", "mcpfast-gateway")
    if not isinstance(name, str) or not name:
        raise ConfigError("name must be a non-empty string")
    tokens: tuple[str, ...] = ()
    auth = value.get("auth")
    if auth is not None:
        if not isinstance(auth, dict) or set(auth) - {"bearerTokens"}:
            raise ConfigError("auth must be an object with bearerTokens (a list of strings)")
        tokens = tuple(_strs("auth.bearerTokens", auth.get("bearerTokens", [])))
        if not tokens or not all(tokens):
            raise ConfigError("auth.bearerTokens must list at least one non-empty token")
    upstreams = tuple(upstream for key, entry in servers.items()
                      if (upstream := _upstream(key, entry, base_dir)) is not None)
    return GatewayConfig(name, upstreams, tokens)


def load_config(path: str) -> GatewayConfig:
    """Read and check the config file ``path`` (ConfigError saying what is wrong)."""
    try:
        with open(path, encoding="utf-8") as file:
            value = json.load(file)
    except OSError as exc:
        raise ConfigError(f"cannot read the config {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"the config {path} is not JSON: {exc}") from None
    return parse_config(value, os.path.dirname(os.path.abspath(path)))
