"""mcpfast.server.eras: the protocol eras beside the handshake one.

  stateless.py   StatelessEra: 2026-07-28 requests, their state from each request's
                 ``_meta`` (the handshake era is the connection's own state, filled by
                 initialize: :mod:`mcpfast.server.connection`,
                 :mod:`mcpfast.server.features.lifecycle_methods`)
"""
