"""A server that moved up past ports other processes hold: its clients still reach the old process.

Launchers such as ms-swift, Gradio and FastChat try the next port when theirs is taken and say nothing
more than where they finally listen. A log that shows where the server came up (uvicorn's "running on")
and a listing of listening sockets (lsof, ss, netstat) shows the move by itself: another process holds the
port just below the server's, so the port the clients were given belongs to someone else. Nothing here
fires without such a listing, so an ordinary start-up never raises it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_SERVER_PORT = re.compile(r"Uvicorn running on https?://\S*?:(?P<port>\d{2,5})\b")
# One listening socket with its owner: lsof "python3 2779809 hc TCP *:8012 (LISTEN)", ss "LISTEN 0 2048
# 0.0.0.0:8012 0.0.0.0:* users:(("python3",pid=2779809,fd=3))", netstat "tcp 0 0 0.0.0.0:8012 0.0.0.0:*
# LISTEN 2779809/python3".
_LSOF = re.compile(r"^\S+\s+(?P<pid>\d+)\s.*\bTCP\s+\S*:(?P<port>\d{2,5})\s+\(LISTEN\)")
_SS = re.compile(r"^LISTEN\s+\d+\s+\d+\s+\S*:(?P<port>\d{2,5})\s.*\bpid=(?P<pid>\d+)")
_NETSTAT = re.compile(r"^tcp6?\s+\d+\s+\d+\s+\S*:(?P<port>\d{2,5})\s+\S+\s+LISTEN\s+(?P<pid>\d+)/")
_MAX_LISTENERS = 256  # a bounded memory for any log


@dataclass
class PortWatch:
    """Collects the server's port and the listening sockets a log shows; `moved` tells the verdict."""

    server_port: tuple[int, int, str] | None = None  # (port, line, text)
    listeners: dict[int, set[str]] = field(default_factory=dict)  # port -> owner pids

    def observe(self, text: str, lineno: int) -> None:
        """Look at one line that mentions a listening socket or where uvicorn runs."""
        m = _SERVER_PORT.search(text)
        if m:
            self.server_port = (int(m.group("port")), lineno, text)
            return
        line = text.strip()
        m = _LSOF.match(line) or _SS.match(line) or _NETSTAT.match(line)
        if m and (len(self.listeners) < _MAX_LISTENERS or int(m.group("port")) in self.listeners):
            self.listeners.setdefault(int(m.group("port")), set()).add(m.group("pid"))

    def moved(self) -> tuple[int, int, str] | None:
        """(port held by another process, line, evidence) when the server listens one port above a port
        that a different process holds; None otherwise."""
        if self.server_port is None:
            return None
        port, lineno, text = self.server_port
        below = self.listeners.get(port - 1, set())
        if below and not below & self.listeners.get(port, set()):
            return port - 1, lineno, text
        return None
