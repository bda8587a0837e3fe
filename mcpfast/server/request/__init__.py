"""mcpfast.server.request: what one request carries through the server.

  context.py             Context: the per-request view handlers receive (logging,
                         progress, sampling, elicitation, roots, tasks, auth, peer)
  state.py               ProtocolState: negotiated version, client capabilities, log level
  state_source.py        where a request's ProtocolState and back channel come from
  back_channel.py        how a request reaches the client (the session, or none)
  requests_to_client.py  sampling / elicitation / roots params and results
  input_required.py      2026-07-28 InputRequiredResult rounds and their signed requestState
  invocation.py          one wrapper calling tools, resources, prompts and completions
"""
