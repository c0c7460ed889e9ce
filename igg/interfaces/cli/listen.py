"""Taking a listening socket before anything says "serving": a busy port is one clear line and exit 2.

``igg serve``, ``igg mcp --transport http`` and ``igg view`` bind their port here first and hand the socket
to uvicorn, so the address they print is one that is already listening (``--port 0`` picks a free one).
"""

from __future__ import annotations

import socket
import sys


def bind(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (IPv6 when ``host`` has a colon); ``OSError`` when it cannot."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP, not the default 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on accepted
    # sockets whose proto says TCP. With Nagle on, a response written as headers then body waited for the
    # client's delayed ACK: every request after the first on a keep-alive connection took 40 ms more.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def listen_or_explain(host: str, port: int) -> socket.socket | None:
    """``bind``, or None after printing one line saying why not and what to do (the caller exits 2)."""
    try:
        return bind(host, port)
    except OSError as exc:
        print(
            f"igg: cannot listen on {host}:{port}: {exc.strerror or exc}; choose another --port (0 picks a"
            " free one)",
            file=sys.stderr,
        )
        return None


def address(sock: socket.socket) -> str:
    """``http://HOST:PORT`` of a listening socket (the port it really got, IPv6 hosts in brackets)."""
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"
