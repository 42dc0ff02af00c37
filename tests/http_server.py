"""A real HTTP server on 127.0.0.1 for download tests, with faults to order.

It serves bytes registered per path (``server.add("/ml-100k.zip", data)``) through the
standard library's ``ThreadingHTTPServer`` in a daemon thread, so the code under test talks
HTTP over a real socket (requests, urllib3 and pooch included). Faults:

* unknown path: ``404 Not Found``;
* ``drop=n``: the first ``n`` requests for the path send the full ``Content-Length`` and then
  half of the body before the connection is closed (a dropped transfer);
* ``drop=-1``: every request is dropped that way.

Every request's path is recorded (``server.requests``). Sockets time out after 10 s and the
fixture (``tests/conftest.py``) shuts the server down, so no test can hang on it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class _Route:
    data: bytes
    drop: int = 0


@dataclass
class LocalHTTPServer:
    """Start with :meth:`start`, stop with :meth:`stop`; ``url(path)`` gives the address."""

    routes: dict[str, _Route] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)

    def add(self, path: str, data: bytes, *, drop: int = 0) -> str:
        """Serve ``data`` at ``path`` (dropping the first ``drop`` transfers); return its URL."""
        self.routes[path] = _Route(data, drop)
        return self.url(path)

    def url(self, path: str) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}{path}"

    def start(self) -> LocalHTTPServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            timeout = 10

            def do_GET(self) -> None:
                server.requests.append(self.path)
                route = server.routes.get(self.path)
                if route is None:
                    self.send_error(404, "Not Found")
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(route.data)))
                self.end_headers()
                if route.drop:
                    route.drop -= 1 if route.drop > 0 else 0
                    self.wfile.write(route.data[: len(route.data) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(route.data)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)
