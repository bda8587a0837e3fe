"""A server process for the stdio tests: serve_stdio with a small conn, chosen by argv.

Usage: stdio_child.py MODE LOOP [MAX_FRAME_SIZE]
  MODE echo     echo every frame; a few frames are commands (below)
       session  a jsonrpc Session with "echo" (sync) and "aecho" (async) handlers
       deaf     never read stdin, never exit on its own (SIGTERM ends it)
       stubborn like deaf, and ignore SIGTERM (only SIGKILL ends it)
       partial  write a last line without newline, then exit with code 0
  LOOP uv | aio
Echo commands: b"print" writes to sys.stdout, fd 1 and a shell child's stdout, then replies
b'"printed"'; b"env" replies {"env": os.environ, "cwd": os.getcwd()}; b"exit N" exits with
code N at once; b"raise" makes feed raise. Oversize frames are answered with
{"too_large": limit, "size": size}. close() and the end of serve_stdio are reported on
stderr ("conn.close(...)", "serve returned").
"""

import json
import os
import signal
import sys
import time

from mcpfast.transports import run, serve_stdio


class EchoConn:
    def __init__(self, send):
        self.send = send

    def feed(self, frame):
        data = bytes(frame)
        if data == b"print":
            print("noise from print()")
            sys.stdout.write("noise from sys.stdout.write\n")
            sys.stdout.flush()
            os.write(1, b"noise from fd 1\n")
            os.system("echo noise from a shell child")
            self.send(b'"printed"')
        elif data == b"env":
            self.send(json.dumps({"env": dict(os.environ), "cwd": os.getcwd()}).encode())
        elif data.startswith(b"exit "):
            sys.stderr.flush()
            os._exit(int(data[5:]))
        elif data == b"raise":
            raise RuntimeError("a bug in the conn")
        else:
            self.send(data)
        return False

    def feed_error(self, exc):
        self.send(json.dumps({"too_large": exc.limit, "size": exc.size}).encode())
        return True

    def close(self, exc=None):
        sys.stderr.write(f"conn.close({exc!r})\n")
        sys.stderr.flush()


def session_factory(send):
    from mcpfast.jsonrpc import Router, Session

    router = Router()
    router.add_request_handler("echo", lambda params, ctx: params)

    async def aecho(params, ctx):
        return params

    router.add_request_handler("aecho", aecho)
    return Session(send, router=router)


def main():
    mode, loop = sys.argv[1], sys.argv[2]
    max_frame_size = int(sys.argv[3]) if len(sys.argv) > 3 else 1 << 20
    if mode in ("deaf", "stubborn"):
        if mode == "stubborn":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        sys.stderr.write("ready\n")
        sys.stderr.flush()
        while True:
            time.sleep(60)
    if mode == "partial":
        os.write(1, b'{"first":1}\n{"last":1}')
        return
    factory = session_factory if mode == "session" else EchoConn
    run(serve_stdio(factory, max_frame_size=max_frame_size), use_uvloop=loop == "uv")
    sys.stderr.write("serve returned\n")
    sys.stderr.flush()


if __name__ == "__main__":
    main()
