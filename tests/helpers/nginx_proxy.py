"""A real load balancer for the scale-out tests: Debian's nginx on a loopback port,
round-robin over server processes (scripts/test installs it when it can). No mock: when
the binary is missing the test fails saying so."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterator, Sequence

from redis_server import free_port

CONFIG = """
worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 512; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    upstream mcp {{
{servers}
        keepalive 16;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://mcp;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_buffering off;
            proxy_read_timeout 3600s;
        }}
    }}
}}
"""


@contextlib.contextmanager
def nginx_proxy(upstream_ports: Sequence[int]) -> Iterator[int]:
    """nginx balancing 127.0.0.1:<port> round-robin over the upstream ports; yields its port."""
    binary = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if binary is None:
        raise AssertionError("nginx is not installed: scripts/test installs Debian's nginx package "
                             "(apt-get install nginx)")
    port = free_port()
    with tempfile.TemporaryDirectory() as directory:
        config = Path(directory) / "nginx.conf"
        servers = "\n".join(f"        server 127.0.0.1:{p};" for p in upstream_ports)
        config.write_text(CONFIG.format(dir=directory, servers=servers, port=port))
        process = subprocess.Popen([binary, "-c", str(config), "-p", directory],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 20
            while True:
                if process.poll() is not None:
                    raise AssertionError(f"nginx exited: {process.stderr.read().decode() if process.stderr else ''}")
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise AssertionError("nginx did not listen") from None
                    time.sleep(0.05)
            yield port
        finally:
            process.terminate()
            process.wait(timeout=10)
