"""What the definitions of every listed feature share (tools, prompts and their arguments,
resources, resource templates): the checks of the decorations given at registration
(``icons``, ``meta``) and the members whose presence depends on the protocol version
(``title`` from 2025-06-18, ``icons`` and ``_meta`` where the version has them)."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from mcpfast.protocol.features import VersionFeatures

__all__ = ["check_icons", "check_meta", "put_decorations", "put_title"]


def check_icons(icons: Any) -> Optional[list[dict[str, Any]]]:
    """Validate ``icons`` (a list of ``{"src", "mimeType"?, "sizes"?, "theme"?}``)."""
    if icons is None:
        return None
    if isinstance(icons, (str, bytes)) or not isinstance(icons, Sequence):
        raise TypeError("icons must be a list of dicts with a 'src' URI")
    out = []
    for icon in icons:
        if not isinstance(icon, Mapping) or not isinstance(icon.get("src"), str):
            raise ValueError(f"every icon needs a 'src' URI string, got {icon!r}")
        out.append(dict(icon))
    return out


def check_meta(meta: Any) -> Optional[dict[str, Any]]:
    """Validate ``meta`` (a mapping; kept as a dict of its own)."""
    if meta is None:
        return None
    if not isinstance(meta, Mapping):
        raise TypeError(f"meta must be a dict, not {type(meta).__name__}")
    return dict(meta)


def put_title(out: dict[str, Any], title: Optional[str], features: VersionFeatures) -> None:
    """``title`` into a definition, where the version knows titles."""
    if title is not None and features.titles:
        out["title"] = title


def put_decorations(out: dict[str, Any], icons: Optional[list[dict[str, Any]]],
                    meta: Optional[dict[str, Any]], features: VersionFeatures) -> None:
    """``icons`` and ``_meta`` into a definition, each where the version has it."""
    if icons is not None and features.icons:
        out["icons"] = icons
    if meta is not None and features.meta:
        out["_meta"] = meta
