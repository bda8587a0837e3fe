"""Protocol versions: the supported set, per-version VersionFeatures, ProtocolState."""

import pytest

from mcpfast.protocol import (
    FEATURES,
    LATEST_VERSION,
    SPOKEN_VERSIONS,
    STATELESS_VERSIONS,
    SUPPORTED_VERSIONS,
    VersionFeatures,
    features_for,
)
from mcpfast.server import ProtocolState


def test_supported_versions_newest_first():
    assert SUPPORTED_VERSIONS == ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
    assert LATEST_VERSION == "2025-11-25"
    assert STATELESS_VERSIONS == ("2026-07-28",)
    assert SPOKEN_VERSIONS == STATELESS_VERSIONS + SUPPORTED_VERSIONS
    assert set(FEATURES) == set(SPOKEN_VERSIONS)
    assert [v for v in SPOKEN_VERSIONS if features_for(v).stateless] == ["2026-07-28"]


@pytest.mark.parametrize("version", SPOKEN_VERSIONS)
def test_features_agree_with_the_schemas(mcp_schema, version):
    features = features_for(version)
    schema = mcp_schema(version)
    defs = schema.definitions
    assert features.audio == ("AudioContent" in defs)
    assert features.tool_annotations == schema.has_field("Tool", "annotations")
    assert features.titles == schema.has_field("Tool", "title") == schema.has_field("Implementation", "title")
    assert features.structured_output == schema.has_field("CallToolResult", "structuredContent")
    assert features.icons == schema.has_field("Tool", "icons")
    assert features.meta == schema.has_field("Tool", "_meta")
    assert features.resource_links == ("ResourceLink" in defs)
    assert features.elicitation == ("ElicitRequest" in defs)
    assert features.completions == schema.has_field("ServerCapabilities", "completions")
    assert features.batches == ("JSONRPCBatchRequest" in defs)
    assert features.url_elicitation == ("ElicitRequestURLParams" in defs)
    assert features.sampling_tools == ("ToolUseContent" in defs)
    progress = defs["ProgressNotificationParams"] if "ProgressNotificationParams" in defs \
        else defs["ProgressNotification"]["properties"]["params"]
    assert features.progress_message == ("message" in progress["properties"])


def test_features_are_immutable_and_only_for_supported_versions():
    features = features_for("2025-06-18")
    with pytest.raises(AttributeError):
        features.audio = False
    with pytest.raises(ValueError):
        VersionFeatures("2027-01-01")
    with pytest.raises(KeyError):
        features_for("2027-01-01")
    assert repr(features) == "<VersionFeatures 2025-06-18>"


def test_protocol_state():
    state = ProtocolState(log_level=3)
    assert not state.negotiated and state.features is None
    assert state.client_info == {} and state.client_capabilities == {}
    assert state.log_level_name == "warning"
    state.negotiate("2025-03-26", {"name": "c"}, {"roots": {}})
    assert state.negotiated and state.features is FEATURES["2025-03-26"]
    assert "2025-03-26" in repr(state)
    with pytest.raises(KeyError):
        state.negotiate("1.0", {}, {})
