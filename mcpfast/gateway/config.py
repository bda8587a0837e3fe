"""The gateway's config file: the ``mcpServers`` form MCP clients use, plus the gateway's
own keys.

    {
      "name": "my-gateway",                       // optional: the gateway's serverInfo name
      "auth": {"bearerTokens": ["..."]},          // optional: bearer tokens accepted (HTTP)
      "mcpServers": {
        "fs":   {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                 "env": {"KEY": "value"}, "cwd": "/tmp"},
        "time": {"command": "uvx", "args": ["mcp-server-time"], "namespace": ""},
        "api":  {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ..."},
                 "separator": ".", "allow": ["search"], "deny": [], "allowTags": [],
                 "denyTags": [], "rename": {"search": {"name": "find"}},
                 "timeout": 30, "startTimeout": 10, "protocolVersion": "auto"}
      }
    }

Each server's namespace is its key unless ``namespace`` says otherwise ("" mounts its names
unchanged). :func:`load_config` reads and checks a file, :func:`parse_config` a decoded
value; both raise :class:`ConfigError` naming the server and the key at fault.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from mcpfast.gateway.options import DEFAULT_CALL_TIMEOUT, DEFAULT_START_TIMEOUT

__all__ = ["ConfigError", "GatewayConfig", "UpstreamConfig", "load_config", "parse_config"]

_SERVER_KEYS = {"command", "args", "env", "cwd", "url", "headers", "type", "transport",
                "namespace", "separator", "allow", "deny", "allowTags", "denyTags", "rename",
                "timeout", "startTimeout", "disabled", "protocolVersion"}
_TOP_KEYS = {"mcpServers", "name", "auth"}


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
        if "headers" in entry:
            raise ConfigError(f"{where}.headers applies to a url server, not a command")
    else:
        target = entry["url"]
        if not isinstance(target, str) or "://" not in target:
            raise ConfigError(f"{where}.url must be a URL (http://, https://, ws://, tcp://)")
        if "headers" in entry:
            mount["headers"] = _str_map(f"{where}.headers", entry["headers"])
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
