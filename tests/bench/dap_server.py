"""The dataset, the server and the checks of tests/bench/dap.sh (OPeNDAP copies, issue 32).

  dap_server.py make DIR RECORDS
      writes DIR/bench.nc, a classic (CDF-1) file pydap 3.5 can serve: coordinates time
      (unlimited), lat (180), lon (360), and per record tas, pr (float), zg (double) and
      mask (short, with scale_factor / add_offset / _FillValue): 1,166,400 bytes a record
      (RECORDS=90: 105 MB); no scalar variables, no 2-D char arrays (pydap 3.5 serves
      neither); prints the file's size and its uncompressed data bytes
  dap_server.py serve DIR
      starts pydap (`pydap -b 127.0.0.1 -p PORT -d DIR`: gunicorn, one sync worker) on a
      free port and, in this process, a counting HTTP proxy in front of it (another free
      port; tests/bench/bench_proxy.py) that streams every answer through as it comes (no
      buffering of whole answers);
      prints "PROXY_PORT SERVER_PORT PYDAP_PID" once pydap answers and serves until its
      stdin closes (or after two hours); pydap (and its worker) end with it. The proxy
      counts, since its last reset: requests, response body bytes, busy_s (the seconds in
      which pydap had at least one request in hand: from the request's forwarding to the
      last byte of its answer), the CPU seconds of pydap's processes (gunicorn's arbiter
      and worker, from /proc) and of the proxy itself. Control:
        GET /_proxy/reset          zero the counts
        GET /_proxy/stats          the counts as JSON
        GET /_proxy/stats?log=1    ... with one line per request (method, path, status,
                                   bytes, seconds to the answer's head, seconds in all)
  dap_server.py stats PROXY_PORT [reset|log]
      prints "requests bytes_out busy_s server_cpu_s proxy_cpu_s", then resets (reset) or
      prints the request log (log)
  dap_server.py check SRC.nc COPY.nc
      every variable of COPY equals SRC's (raw values: no scale/offset, no masking); prints
      "equal" or what differs, exit 1 on a difference
"""

import http.client
import os
import subprocess
import sys
import time

import bench_proxy

BLOCK = 1 << 20


def make(directory, records):
    import numpy as np
    import netCDF4

    records = int(records)
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "bench.nc")
    ny, nx = 180, 360
    with netCDF4.Dataset(path, "w", format="NETCDF3_CLASSIC") as d:
        d.title = "OPeNDAP copy benchmark (tests/bench/dap.sh)"
        d.Conventions = "CF-1.8"
        d.createDimension("time", None)
        d.createDimension("lat", ny)
        d.createDimension("lon", nx)
        t = d.createVariable("time", "f8", ("time",))
        t.units = "days since 2000-01-01"
        t.standard_name = "time"
        lat = d.createVariable("lat", "f8", ("lat",))
        lat.units = "degrees_north"
        lat[:] = np.linspace(-89.5, 89.5, ny)
        lon = d.createVariable("lon", "f8", ("lon",))
        lon.units = "degrees_east"
        lon[:] = np.linspace(0.5, 359.5, nx)
        tas = d.createVariable("tas", "f4", ("time", "lat", "lon"), fill_value=np.float32(1e20))
        tas.units = "K"
        tas.long_name = "near-surface air temperature"
        pr = d.createVariable("pr", "f4", ("time", "lat", "lon"))
        pr.units = "kg m-2 s-1"
        zg = d.createVariable("zg", "f8", ("time", "lat", "lon"))
        zg.units = "m"
        zg.long_name = "geopotential height at 500 hPa"
        mask = d.createVariable("mask", "i2", ("time", "lat", "lon"), fill_value=np.int16(-32767))
        mask.scale_factor = 0.01
        mask.add_offset = 0.0
        mask.set_auto_maskandscale(False)
        rng = np.random.default_rng(32)
        yy, xx = np.meshgrid(np.radians(lat[:]), np.radians(lon[:]), indexing="ij")
        for r in range(records):
            t[r] = r * 0.25
            base = 250 + 40 * np.cos(yy) + 5 * np.sin(xx + r / 10)
            tas[r] = (base + rng.normal(0, 1, (ny, nx))).astype("f4")
            tas[r, 0, : r % 7] = np.float32(1e20)
            pr[r] = rng.gamma(0.5, 1e-5, (ny, nx)).astype("f4")
            zg[r] = 5500 + 200 * np.cos(yy) + rng.normal(0, 10, (ny, nx))
            m = rng.integers(-30000, 30000, (ny, nx), dtype="i2")
            m[-1, : r % 5] = -32767
            mask[r] = m
    nc = netCDF4.Dataset(path)
    data = sum(v.size * v.dtype.itemsize for v in nc.variables.values())
    nc.close()
    print(os.path.getsize(path), data)


class Counts(bench_proxy.Counts):
    def zero(self):
        self.requests = 0
        self.bytes_out = 0

    def counts(self):
        return dict(requests=self.requests, bytes_out=self.bytes_out)

    def add(self, method, path, status, n_out, t0, th, t1):
        with self.lock:
            self.requests += 1
            self.bytes_out += n_out
            self.note(f"{method} {path} {status} {n_out} head {th - t0:.3f}s all {t1 - t0:.3f}s", t0, t1)


class Handler(bench_proxy.ProxyHandler):
    """Streams every answer through as it comes (no buffering of whole answers)."""

    def forward(self):
        headers = self.forwarded_headers()
        t0 = time.monotonic()
        # gunicorn's sync worker closes every connection after its answer: one per request
        conn = http.client.HTTPConnection("127.0.0.1", self.server.upstream, timeout=600)
        conn.request(self.command, self.path, headers=headers)
        resp = conn.getresponse()
        th = time.monotonic()
        length = resp.getheader("Content-Length")
        self.send_response(resp.status, resp.reason)
        for k, v in resp.getheaders():
            if k.lower() not in bench_proxy.HOP and k.lower() != "content-length":
                self.send_header(k, v)
        chunked = length is None and self.command != "HEAD"
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", length or "0")
        self.end_headers()
        n = 0
        t1 = None
        try:
            if self.command != "HEAD":
                while True:
                    b = resp.read1(BLOCK) if hasattr(resp, "read1") else resp.read(BLOCK)
                    if not b:
                        break
                    n += len(b)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b) if chunked else b)
                t1 = time.monotonic()
                if chunked:
                    self.wfile.write(b"0\r\n\r\n")
        finally:
            conn.close()
            if t1 is None or (length is not None and n != int(length)):
                # a cut answer (pydap failing mid-way): the client must see the end, not
                # wait for the rest on a kept-alive connection
                self.close_connection = True
            self.server.counts.add(self.command, self.path, resp.status, n, t0, th, t1 or time.monotonic())


def serve(directory):
    port = bench_proxy.free_port()
    log = open(os.path.join(os.path.dirname(os.path.abspath(directory)), "pydap.log"), "ab")
    child = subprocess.Popen(["pydap", "-b", "127.0.0.1", "-p", str(port), "-d", directory],
                             stdin=subprocess.DEVNULL, stdout=log, stderr=log, preexec_fn=bench_proxy.die_with_parent)
    deadline = time.monotonic() + 60
    while True:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            c.request("GET", "/bench.nc.dds")
            if c.getresponse().status == 200:
                break
        except OSError:
            pass
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            sys.exit(f"pydap did not start (exit {child.poll()}): see pydap.log beside {directory}")
        time.sleep(0.2)
    bench_proxy.run(Handler, port, Counts(child.pid), lambda: bench_proxy.stop_child(child), port, child.pid)


def stats(port, what=""):
    bench_proxy.stats(port, ("requests", "bytes_out", "server_busy_s", "server_cpu_s", "proxy_cpu_s"), what)


def check(src, copy):
    import netCDF4

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from same_values import same_values

    a, b = netCDF4.Dataset(src), netCDF4.Dataset(copy)
    for d in (a, b):
        d.set_auto_maskandscale(False)

    def get(name):
        if name not in b.variables:
            raise KeyError(name)
        return b.variables[name][...]

    return same_values(a, get)


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    sys.exit({"make": make, "serve": serve, "stats": stats, "check": check}[cmd](*args))
