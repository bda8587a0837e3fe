"""RecordingClient: an mcpfast Client that keeps what it sends, for schema checks in tests."""

import json

from mcpfast.client import Client


class RecordingClient(Client):
    """A Client keeping every frame it sends and the methods of the requests it receives."""

    def __init__(self, **options):
        super().__init__(**options)
        self.sent_frames = []
        self.server_requests = {}

    def bind(self, send):
        def recording_send(frame):
            self.sent_frames.append(frame)
            send(frame)

        conn = super().bind(recording_send)
        feed = conn.feed

        def recording_feed(frame, channel=None):
            message = json.loads(bytes(frame))
            if isinstance(message, dict) and "method" in message and "id" in message:
                self.server_requests[message["id"]] = message["method"]
            return feed(frame)

        conn.feed = recording_feed
        return conn

    def check_schema(self, mcp_schema):
        """Validate every sent frame against the negotiated version's schema; returns their count."""
        schema = mcp_schema(self.protocol_version)
        for frame in self.sent_frames:
            message = json.loads(frame)
            answers = None
            if "method" not in message and "result" in message:
                answers = self.server_requests[message["id"]]
            schema.check_message(message, answers=answers)
        return len(self.sent_frames)
