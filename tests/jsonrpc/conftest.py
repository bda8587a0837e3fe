"""Fixtures for the Session tests: a fake transport and a fake reply channel."""

import json
import logging

import pytest


class Wire:
    """A fake transport: ``send`` collects every frame; ``messages`` decodes them."""

    def __init__(self):
        self.frames = []

    def __call__(self, frame):
        # The session's output contract: compact JSON bytes, no framing.
        assert type(frame) is bytes, type(frame)
        assert not frame.endswith(b"\n")
        self.frames.append(frame)

    def messages(self):
        return [json.loads(f) for f in self.frames]

    def take(self):
        """Decoded messages sent so far, clearing the list."""
        out = self.messages()
        self.frames.clear()
        return out


class Channel:
    """A fake per-message reply channel (as Streamable HTTP would pass to feed)."""

    def __init__(self):
        self.responses = []  # what respond() got (bytes or None)
        self.related = []  # what send() got

    def respond(self, frame):
        assert frame is None or type(frame) is bytes
        self.responses.append(frame)

    def send(self, frame):
        assert type(frame) is bytes
        assert not self.responses, "channel.send after respond"
        self.related.append(frame)

    def response_messages(self):
        return [None if f is None else json.loads(f) for f in self.responses]

    def related_messages(self):
        return [json.loads(f) for f in self.related]


@pytest.fixture
def wire():
    return Wire()


@pytest.fixture
def make_channel():
    return Channel


@pytest.fixture
def jsonrpc_logs(caplog):
    caplog.set_level(logging.DEBUG, logger="mcpfast.jsonrpc")
    return caplog
