"""The server and the Python sides of tests/bench/remote.sh (object storage, issue 17).

  remote.py serve [SERVER BIN DATA_DIR]
      starts an S3 server on 127.0.0.1 (a free port, in a child process) and, in this
      process, a counting HTTP proxy in front of it (another free port); prints
      "PROXY_PORT SERVER_PORT" and serves until its stdin closes (or after two hours); the
      server ends with it (on a closed stdin, on this process's death, or after two hours).
      SERVER is moto (the default: moto's server in memory, run by this Python), s3s (BIN is
      s3s-fs, the s3s project's server over the files of DATA_DIR, credentials
      AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY of the environment) or s3rver (BIN is
      s3rver, Node.js, over the files of DATA_DIR, credentials S3RVER / S3RVER); their
      stderr goes to DATA_DIR.log.
      The proxy (tests/bench/bench_proxy.py) forwards every request unchanged and counts,
      since its last reset, the
      requests by method (GETs with a Range header apart), the response body bytes, the
      request body bytes, the seconds in which the server had at least one request in hand
      (server_busy_s: what no client can go below), and the CPU seconds (user + system) of
      the server process and of the proxy itself. With RANGES=slice in the environment,
      moto serves a ranged GET by reading only the range, as S3 does (ranged_moto.py);
      without it, moto reads the whole object for every ranged GET. Control (bucket names cannot hold '_', so no S3 name is taken):
        GET /_proxy/reset          zero the counts
        GET /_proxy/stats          the counts as JSON
        GET /_proxy/stats?log=1    ... with one line per request (method, path, range,
                                   status, response bytes)
  remote.py stats PROXY_PORT [reset|log]
      prints the counts ("requests get_ranged get head put post delete list bytes_out
      bytes_in server_busy_s server_cpu_s proxy_cpu_s"), then resets them (reset), or prints the request log (log)
  remote.py upload ENDPOINT BUCKET KEY FILE
      makes BUCKET if needed and uploads FILE as KEY (boto3; multipart above 64 MiB)
  remote.py rm URL
      removes every object whose key begins with URL's (s3://bucket/prefix), one DELETE per
      key (s3s-fs answers a DeleteObjects naming a "directory", as s3fs's recursive rm
      sends, with 500)
  remote.py hs_h5py URL       (s3://bucket/key, through s3fs at AWS_ENDPOINT_URL)
  remote.py hs_h5netcdf URL
      what ncdump -hs shows of every variable: h5py (or h5netcdf) over an s3fs file object
      opened with s3fs's defaults; every attribute value, dimension, chunk shape, filter
      (compression, options, shuffle, fletcher32), fill value and dtype is read (dimension
      lengths once per dimension, as -h prints them); prints a one-line summary (variables,
      attributes)
  remote.py xarray_copy URL OUT_URL FORMAT LEVEL
      xarray.open_dataset(s3fs file object, engine="h5netcdf").to_zarr(FsspecStore at
      OUT_URL, zarr_format=FORMAT) with the source's chunks and zstd LEVEL for every array
      (numcodecs Zstd for v2, ZstdCodec for v3)
  remote.py check SRC.nc OUT_URL
      every variable of the Zarr store at OUT_URL equals SRC's (raw values, no scale/offset
      or masking); prints "equal" or what differs, exit 1 on a difference
"""

import http.client
import os
import subprocess
import sys
import threading
import time
import warnings

import bench_proxy
from same_values import same_values

warnings.simplefilter("ignore")

MOTO = """import os, sys, threading
from moto.server import ThreadedMotoServer
if os.environ.get("RANGES") == "slice":
    import ranged_moto
    ranged_moto.install()
s = ThreadedMotoServer(ip_address='127.0.0.1', port=0, verbose=False)
s.start()
print(s.get_host_and_port()[1], flush=True)
threading.Timer(7200, lambda: os._exit(0)).start()
sys.stdin.read()
os._exit(0)
"""

class Counts(bench_proxy.Counts):
    def zero(self):
        self.by = dict(get=0, get_ranged=0, head=0, put=0, post=0, delete=0, list=0)
        self.bytes_out = 0
        self.bytes_in = 0

    def counts(self):
        return dict(requests=sum(self.by.values()), **self.by, bytes_out=self.bytes_out, bytes_in=self.bytes_in)

    def add(self, method, path, rng, status, n_out, n_in, t0, t1):
        with self.lock:
            m = method.lower()
            if m == "get" and rng:
                m = "get_ranged"
            elif m == "get" and path.split("?")[0].rstrip("/").count("/") <= 1:
                m = "list"
            self.by[m] = self.by.get(m, 0) + 1
            self.bytes_out += n_out
            self.bytes_in += n_in
            self.note(f"{method} {path} {rng or '-'} {status} {n_out} {t1 - t0:.3f}s", t0, t1)


class Handler(bench_proxy.ProxyHandler):
    """Forwards every request unchanged (its body read whole), over one kept-alive
    connection to the server per proxy thread."""

    local = threading.local()

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                n = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if n == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                out += self.rfile.read(n)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def forward(self):
        local = self.local
        data = self.body()
        headers = self.forwarded_headers()
        headers.pop("Expect", None)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            headers["Content-Length"] = str(len(data))
        t0 = time.monotonic()
        for attempt in (0, 1):
            conn = getattr(local, "conn", None)
            if conn is None:
                conn = local.conn = http.client.HTTPConnection("127.0.0.1", self.server.upstream, timeout=600)
            try:
                conn.request(self.command, self.path, body=data or None, headers=headers)
                resp = conn.getresponse()
                out = resp.read()
                t1 = time.monotonic()
                break
            except (http.client.HTTPException, OSError):
                conn.close()
                local.conn = None
                if attempt:
                    raise
        self.send_response(resp.status, resp.reason)
        n_out = 0
        for k, v in resp.getheaders():
            if k.lower() not in bench_proxy.HOP and k.lower() != "content-length":
                self.send_header(k, v)
        if self.command == "HEAD":
            self.send_header("Content-Length", resp.getheader("Content-Length", "0"))
        else:
            self.send_header("Content-Length", str(len(out)))
            n_out = len(out)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(out)
        self.server.counts.add(self.command, self.path, self.headers.get("Range"), resp.status, n_out, len(data),
                               t0, t1)


def start_server(kind, binary, data):
    """The server process and its port: moto in a child Python, or BIN over DATA."""
    if kind == "moto":
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.abspath(__file__)))
        child = subprocess.Popen(
            [sys.executable, "-c", MOTO], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=env, preexec_fn=bench_proxy.die_with_parent,
        )
        return child, int(child.stdout.readline())
    port = bench_proxy.free_port()
    os.makedirs(data, exist_ok=True)
    env = dict(os.environ)
    if kind == "s3s":
        cmd = [binary, "--host", "127.0.0.1", "--port", str(port), "--access-key", os.environ["AWS_ACCESS_KEY_ID"],
               "--secret-key", os.environ["AWS_SECRET_ACCESS_KEY"], data]
    elif kind == "s3rver":
        cmd = [binary, "--directory", data, "--address", "127.0.0.1", "--port", str(port), "--silent"]
        # s3rver 3.7 makes ListObjectsV2 continuation tokens with DES, which Node 17+ (OpenSSL
        # 3) refuses without this: a listing of more than 1000 keys is answered with 500
        env["NODE_OPTIONS"] = (env.get("NODE_OPTIONS", "") + " --openssl-legacy-provider").strip()
    else:
        sys.exit(f"unknown server {kind} (moto, s3s or s3rver)")
    with open(data.rstrip("/") + ".log", "ab") as log:
        child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=log, stderr=log, env=env,
                                 preexec_fn=bench_proxy.die_with_parent)
    deadline = time.monotonic() + 60
    while True:
        try:
            http.client.HTTPConnection("127.0.0.1", port, timeout=5).connect()
            return child, port
        except OSError:
            if child.poll() is not None or time.monotonic() > deadline:
                child.kill()
                sys.exit(f"{' '.join(cmd)} did not start (exit {child.poll()}): see {data.rstrip('/')}.log")
            time.sleep(0.1)


def serve(kind="moto", binary="", data=""):
    child, server_port = start_server(kind, binary, data)

    def stop():
        # moto's child ends when its stdin closes
        bench_proxy.stop_child(child, close_stdin=kind == "moto")

    bench_proxy.run(Handler, server_port, Counts(child.pid), stop, server_port)


def stats(port, what=""):
    keys = ("requests", "get_ranged", "get", "head", "put", "post", "delete", "list", "bytes_out", "bytes_in",
            "server_busy_s", "server_cpu_s", "proxy_cpu_s")
    bench_proxy.stats(port, keys, what)


def s3fs_fs():
    import s3fs

    return s3fs.S3FileSystem(endpoint_url=os.environ["AWS_ENDPOINT_URL"])


def upload(endpoint, bucket, key, path):
    import boto3
    from boto3.s3.transfer import TransferConfig

    s3 = boto3.client("s3", endpoint_url=endpoint)
    try:
        s3.create_bucket(Bucket=bucket)
    # s3s-fs answers BucketAlreadyExists for a bucket of its one account
    except (s3.exceptions.BucketAlreadyOwnedByYou, s3.exceptions.BucketAlreadyExists):
        pass
    s3.upload_file(path, bucket, key, Config=TransferConfig(multipart_threshold=64 << 20, multipart_chunksize=64 << 20))


def rm(url):
    import boto3
    from concurrent.futures import ThreadPoolExecutor

    bucket, _, prefix = url.removeprefix("s3://").partition("/")
    s3 = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    keys = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys += [o["Key"] for o in page.get("Contents", [])]

    def delete(key):
        try:
            s3.delete_object(Bucket=bucket, Key=key)
        except Exception:
            return key

    with ThreadPoolExecutor(8) as pool:
        failed = [k for k in pool.map(delete, keys) if k]
    # s3rver 3.7 answers 500 to a DELETE whose object's emptied directory another DELETE
    # removed first (rmdir ENOENT); one at a time there is no such race
    for key in failed:
        s3.delete_object(Bucket=bucket, Key=key)


def walk_h5py(f):
    import h5py

    nvars = natts = 0

    def visit(obj):
        nonlocal nvars, natts
        for k in obj.attrs:
            obj.attrs[k]
            natts += 1
        if isinstance(obj, h5py.Dataset):
            nvars += 1
            (obj.shape, obj.dtype, obj.chunks, obj.compression, obj.compression_opts)
            (obj.shuffle, obj.fletcher32, obj.fillvalue, obj.dims and [d.keys() for d in obj.dims])
            obj.id.get_create_plist().get_nfilters()
        if isinstance(obj, h5py.Group):
            for k in obj:
                visit(obj[k])

    visit(f)
    return nvars, natts


def hs_h5py(url):
    import h5py

    with s3fs_fs().open(url, "rb") as fo, h5py.File(fo, "r") as f:
        nvars, natts = walk_h5py(f)
    print(f"h5py: {nvars} datasets, {natts} attributes")


def hs_h5netcdf(url):
    import h5netcdf

    nvars = natts = 0
    with s3fs_fs().open(url, "rb") as fo, h5netcdf.File(fo, "r") as f:

        def visit(g):
            nonlocal nvars, natts
            for k in g.attrs:
                g.attrs[k]
                natts += 1
            for d in g.dimensions.values():
                (d.size, d.isunlimited())
            for v in g.variables.values():
                nvars += 1
                for k in v.attrs:
                    v.attrs[k]
                    natts += 1
                # v.shape and v.chunks (which asks v.shape) are not asked: h5netcdf works out
                # an unlimited dimension's length from every variable's, quadratic in 2000
                # variables (> 5 min here); -h does not print it; the chunks come from h5py
                (v.dimensions, v.dtype, v._h5ds.chunks, v.compression, v.compression_opts)
                (v.shuffle, v.fletcher32, v._h5ds.fillvalue, v.filters())
            for sub in g.groups.values():
                visit(sub)

        visit(f)
    print(f"h5netcdf: {nvars} variables, {natts} attributes")


CF_KEYS = ("dtype", "scale_factor", "add_offset", "_FillValue", "units", "calendar")


def xarray_copy(url, out, fmt, level):
    import xarray as xr
    import zarr

    fmt, level = int(fmt), int(level)
    fs = s3fs_fs()
    store = zarr.storage.FsspecStore.from_url(
        out, storage_options=dict(endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    )
    with fs.open(url, "rb") as fo:
        ds = xr.open_dataset(fo, engine="h5netcdf")
        enc = {}
        for name in ds.variables:
            e = {k: v for k, v in ds[name].encoding.items() if k in CF_KEYS}
            chunks = ds[name].encoding.get("chunksizes")
            if chunks:
                e["chunks"] = tuple(chunks)
            if fmt == 3:
                from zarr.codecs import ZstdCodec

                e["compressors"] = [ZstdCodec(level=level)]
            else:
                from numcodecs import Zstd

                e["compressors"] = [Zstd(level=level)]
            enc[name] = e
        ds.to_zarr(store, mode="w", zarr_format=fmt, encoding=enc, consolidated=False)


def check(src, out):
    import netCDF4
    import zarr

    nc = netCDF4.Dataset(src)
    nc.set_auto_maskandscale(False)
    g = zarr.open_group(out, mode="r", storage_options=dict(endpoint_url=os.environ["AWS_ENDPOINT_URL"]))
    return same_values(nc, lambda n: g[n][...])


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    fns = dict(serve=serve, stats=stats, upload=upload, rm=rm, hs_h5py=hs_h5py, hs_h5netcdf=hs_h5netcdf,
               xarray_copy=xarray_copy)
    if cmd == "check":
        sys.exit(check(*args))
    if cmd not in fns:
        sys.exit("unknown command " + cmd)
    fns[cmd](*args)
