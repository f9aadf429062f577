"""The counting HTTP proxy the benchmarks put in front of a server (imported, not run):
tests/bench/dap_server.py (pydap, streaming answers through) and tests/bench/remote.py (an S3
server, request bodies and kept-alive connections). Each script brings its own forwarding
(a subclass of ProxyHandler) and its own counts (a subclass of Counts); this module holds the
rest: the counts' clock and CPU bookkeeping, the control paths, the server, its lifetime, and
the `stats` command.

Control paths of every proxy (S3 bucket names cannot hold '_', so no S3 name is taken):
  GET /_proxy/reset          zero the counts
  GET /_proxy/stats          the counts as JSON
  GET /_proxy/stats?log=1    ... with one line per request
"""

import http.server
import json
import os
import sys
import threading
import time
import urllib.request

LIFETIME_S = 7200
# hop-by-hop headers: a proxy does not forward them
HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "te", "upgrade"}


def cpu_seconds(pids):
    """User + system CPU seconds of the processes `pids` (all their threads), from /proc;
    ended ones count 0."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                # the fields after the command name, which is in parentheses and may hold spaces
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # utime and stime are the stat file's fields 14 and 15 (proc(5)), in clock ticks
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def tree(pid):
    """`pid` and its descendants (gunicorn's arbiter and its worker, say)."""
    children = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


class Counts:
    """What the proxy saw since its last reset. This class keeps the request log, the seconds
    in which the server had at least one request in hand (busy), and the CPU seconds of the
    server's processes and of the proxy; a subclass counts requests and bytes its own way
    (`zero`, `counts`) and records each request with `note`."""

    def __init__(self, server_pid):
        self.lock = threading.Lock()
        self.server_pid = server_pid
        self.reset()

    def reset(self):
        self.log = []
        self.spans = []
        self.server_cpu0 = cpu_seconds(tree(self.server_pid))
        self.proxy_cpu0 = time.process_time()
        self.zero()

    def zero(self):
        """Zero the subclass's counts."""

    def counts(self):
        """The subclass's counts, as a dict."""
        return {}

    def note(self, line, t0, t1):
        """One request (call with the lock held): its log line, and its time in the server's
        hands, from `t0` to `t1` (time.monotonic)."""
        self.log.append(line)
        self.spans.append((t0, t1))

    def busy(self):
        """Seconds in which the server had at least one request of ours in hand."""
        total, end = 0.0, float("-inf")
        for a, b in sorted(self.spans):
            if b > end:
                total += b - max(a, end)
                end = b
        return total

    def json(self, log):
        with self.lock:
            d = self.counts()
            # a process the server started since the reset (a restarted worker) counts from
            # its start
            d.update(server_busy_s=round(self.busy(), 2),
                     server_cpu_s=round(cpu_seconds(tree(self.server_pid)) - self.server_cpu0, 2),
                     proxy_cpu_s=round(time.process_time() - self.proxy_cpu0, 2))
            if log:
                d["log"] = list(self.log)
            return json.dumps(d).encode()


class ProxyHandler(http.server.BaseHTTPRequestHandler):
    """A request to the proxy: a control path, or (in the subclass's `forward`) one to pass on
    to the server at `self.server.upstream`, counted in `self.server.counts`."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def control(self):
        counts = self.server.counts
        if self.path.startswith("/_proxy/reset"):
            with counts.lock:
                counts.reset()
            out = b"{}"
        else:
            out = counts.json("log=1" in self.path)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def handle_one(self):
        if self.path.startswith("/_proxy/"):
            return self.control()
        return self.forward()

    def forward(self):
        raise NotImplementedError

    def forwarded_headers(self):
        """The request's headers but the hop-by-hop ones."""
        return {k: v for k, v in self.headers.items() if k.lower() not in HOP}

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = handle_one


class ProxyServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, handler, upstream, counts):
        super().__init__(("127.0.0.1", 0), handler)
        self.upstream = upstream
        self.counts = counts

    def handle_error(self, request, client_address):
        # a client that hung up (a timed-out run) is no news
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def free_port():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def die_with_parent():
    """In the child, before exec: SIGTERM when the parent (this process) dies (Linux)."""
    import ctypes
    import signal

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def run(handler, server_port, counts, stop, *shown):
    """Serve the proxy (`handler` in front of `server_port`) in the background, print its port
    and `shown` on one line, and serve until stdin closes (or after LIFETIME_S); then call
    `stop` (which ends the server) and exit."""
    srv = ProxyServer(handler, server_port, counts)
    threading.Thread(target=srv.serve_forever, daemon=True).start()

    def end():
        stop()
        os._exit(0)

    threading.Timer(LIFETIME_S, end).start()
    print(srv.server_address[1], *shown, flush=True)
    sys.stdin.read()
    end()


def stop_child(child, close_stdin=False):
    """End `child` (by closing its stdin, or SIGTERM), killing it after 10 s."""
    import subprocess

    if close_stdin:
        child.stdin.close()
    else:
        child.terminate()
    try:
        child.wait(timeout=10)
    except subprocess.TimeoutExpired:
        child.kill()


def stats(port, keys, what=""):
    """Print the counts `keys` of the proxy on `port` on one line, then reset them (what =
    "reset") or print the request log (what = "log")."""
    base = f"http://127.0.0.1:{port}/_proxy/"
    d = json.load(urllib.request.urlopen(base + "stats" + ("?log=1" if what == "log" else "")))
    print(" ".join(str(d.get(k, 0)) for k in keys))
    if what == "log":
        print("\n".join(d["log"]))
    if what == "reset":
        urllib.request.urlopen(base + "reset").read()
