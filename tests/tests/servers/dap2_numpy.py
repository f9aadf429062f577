"""A DAP2 server for the tests: pydap's own responses (DDS, DAS, .dods, constraint parsing)
over the netCDF files of a directory, read whole into numpy arrays.

pydap 3.5's netCDF handler (what `pydap -d DIR` serves) slices wrongly: a constrained
`.dods` answer holds the array's counts but no values (a reshape error in its handler). The
responses of this server are pydap's, from the same pydap model, with the data held by numpy,
which slices right; so constrained URLs can be judged against netCDF-C.

usage: python3 dap2_numpy.py DIR PORT LOG
Every request's path and query is appended to LOG, one line each, as it arrives.
"""

import sys
import threading
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import netCDF4
import numpy as np
from pydap.handlers.lib import BaseHandler
from pydap.model import BaseType, DatasetType


def load(path):
    """The pydap dataset of a classic netCDF file (variables only; DAS from attributes)."""
    nc = netCDF4.Dataset(path)
    nc.set_auto_maskandscale(False)
    ds = DatasetType(path.rsplit("/", 1)[-1])
    ds.attributes["NC_GLOBAL"] = {k: nc.getncattr(k) for k in nc.ncattrs()}
    unlim = [n for n, d in nc.dimensions.items() if d.isunlimited()]
    if unlim:
        ds.attributes["DODS_EXTRA"] = {"Unlimited_Dimension": unlim[0]}
    for name, v in nc.variables.items():
        data = np.asarray(v[...])
        if v.dtype == np.dtype("S1"):
            # one-character strings, as pydap's netCDF handler serves char arrays
            data = data.astype("S1")
        ds[name] = BaseType(
            name,
            data=data,
            dimensions=v.dimensions,
            attributes={k: v.getncattr(k) for k in v.ncattrs()},
        )
    nc.close()
    return ds


class Router:
    """`/NAME.ext?ce` to the handler of file NAME of the directory."""

    def __init__(self, root, log):
        self.root = root
        self.log = log
        self.handlers = {}
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        query = environ.get("QUERY_STRING", "")
        with self.lock:
            with open(self.log, "a") as f:
                f.write(f"{path}?{query}\n" if query else f"{path}\n")
        name = path.lstrip("/").rsplit(".", 1)[0]
        with self.lock:
            if name not in self.handlers:
                try:
                    self.handlers[name] = BaseHandler(load(f"{self.root}/{name}"))
                except OSError:
                    start_response("404 Not Found", [("Content-Type", "text/plain")])
                    return [b"no such dataset\n"]
            handler = self.handlers[name]
        return handler(environ, start_response)


class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


class Threaded(ThreadingMixIn, WSGIServer):
    daemon_threads = True


def main():
    root, port, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    server = make_server(
        "127.0.0.1", port, Router(root, log), server_class=Threaded, handler_class=Quiet
    )
    print("serving", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
