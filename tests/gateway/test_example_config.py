"""examples/gateway.json, the config the guide shows, is one the gateway accepts."""

from pathlib import Path

from mcpfast.gateway.config import load_config

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gateway.json"


def test_the_example_config_loads():
    config = load_config(str(EXAMPLE))
    assert config.name == "example-gateway"
    mounts = {upstream.key: upstream.mount for upstream in config.upstreams}
    assert mounts["everything"]["namespace"] == ""
    assert mounts["memory"]["namespace"] == "memory" and mounts["memory"]["timeout"] == 30
    assert mounts["time"]["rename"]["get_current_time"]["name"] == "now"
