"""The HTTP/1.1 client connection's per-answer work in C: :class:`ClientConnectionCore`,
the base of :class:`mcpfast.transports.http.client_connection.ClientConnection` (that
module's docstring says what the connection does): the bytes it receives fed to its
response reader (a malformed answer breaks the answer being read and closes the
connection), a request written with the sink its answer goes to.

Why compiled: ``data_received`` and ``send`` were two Python frames per request, as many
as the plain POST's whole way in C (client_plain).
"""
cimport cython

from httptools import HttpParserError as _HttpParserError


@cython.auto_pickle(False)
cdef class ClientConnectionCore:
    """ClientConnection's fields and its per-answer methods (module docstring)."""

    def data_received(self, data):
        try:
            self.reader.feed(data)
        except _HttpParserError as exc:
            answer = self.reader.answer
            if answer is not None:
                answer.broken(f"malformed HTTP answer: {exc}")
            if self.transport is not None:
                self.transport.close()

    def send(self, data, answer):
        """Write a request; its answer goes to ``answer`` (an AnswerSink)."""
        self.send_data(data, answer)

    cdef int send_data(self, object data, object answer) except -1:
        transport = self.transport
        if transport is None:
            raise AssertionError("a request written on a connection not made yet")
        self.reader.answer = answer
        transport.write(data)
        return 0

    def close(self):
        """Close the connection (not reused)."""
        if self.transport is not None:
            self.transport.close()
