"""Builders of JSON-RPC frames (bytes, as a transport would feed them) for the tests."""

import json


def frame(obj):
    """Any JSON value as one frame."""
    return json.dumps(obj).encode()


def request(id, method, params=None):
    msg = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return frame(msg)


def notification(method, params=None):
    msg = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return frame(msg)


def response(id, result):
    return frame({"jsonrpc": "2.0", "id": id, "result": result})


def error_response(id, code, message, data=None):
    err = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return frame({"jsonrpc": "2.0", "id": id, "error": err})


def cancelled(request_id, reason=None):
    """notifications/cancelled for request_id."""
    params = {"requestId": request_id}
    if reason is not None:
        params["reason"] = reason
    return notification("notifications/cancelled", params)
