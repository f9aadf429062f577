"""A DAP4 server for the tests: the variables of the netCDF files of a directory, read whole
into numpy arrays, served as DAP4 (Volume 1: the DMR, the chunked data response; Volume 2:
constraint expressions). pydap 3.5 answers `.dmr` but serves no `.dap` data, so this one
writes both with the standard library.

    /NAME.dmr, /NAME.dmr.xml    the DMR of the whole file
    /NAME.dap                   every variable: the DMR, then the data chunk
    /NAME.dap?dap4.ce=CE        the variables CE projects, each cut by its slices:
                                `/v[first:stride:last][i][first:last];/w` (inclusive bounds)

A first path component changes the server's manners, for the failure tests:

    /ignore/NAME...             `.dap` ignores any constraint (answers every variable whole)
    /fail/NAME...               a constrained `.dap` answers with a DAP4 error chunk

Data is little-endian; each top-level variable's data is followed by its CRC-32 (zlib's, in
the data's byte order), also given in the DMR as its `_DAP4_Checksum_CRC32` attribute. A
sliced shared dimension keeps its name with the slice's size when every projected variable
slices it alike; otherwise those variables get anonymous `<Dim size="N"/>`s.

usage: python3 dap4_numpy.py DIR PORT LOG
Every request's path and query is appended to LOG, one line each, as it arrives.
"""

import re
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote
from xml.sax.saxutils import quoteattr

import netCDF4
import numpy as np

TYPES = {
    "i1": "Int8",
    "u1": "UInt8",
    "i2": "Int16",
    "u2": "UInt16",
    "i4": "Int32",
    "u4": "UInt32",
    "i8": "Int64",
    "u8": "UInt64",
    "f4": "Float32",
    "f8": "Float64",
    "S1": "Char",
}

CHUNK_LAST, CHUNK_ERROR, CHUNK_LITTLE = 1, 2, 4


class BadRequest(Exception):
    pass


def dap4_type(dtype):
    if dtype is str or dtype == np.dtype("O"):
        return "String"
    key = dtype.str[1:]
    if key not in TYPES:
        raise BadRequest(f"type {dtype} is not served")
    return TYPES[key]


def load(path):
    """(dimensions {name: size}, variables [(name, dims, dtype, attributes, data)]) of a file."""
    nc = netCDF4.Dataset(path)
    nc.set_auto_maskandscale(False)
    dims = {n: len(d) for n, d in nc.dimensions.items()}
    variables = []
    for name, v in nc.variables.items():
        data = np.asarray(v[...]) if v.dtype is not str else np.asarray(v[...], dtype=object)
        atts = [(k, v.getncattr(k)) for k in v.ncattrs()]
        variables.append((name, list(v.dimensions), v.dtype, atts, data))
    gatts = [(k, nc.getncattr(k)) for k in nc.ncattrs()]
    nc.close()
    return dims, variables, gatts


def attribute_xml(name, value, indent):
    if isinstance(value, str):
        t, values = "String", [value]
    else:
        a = np.atleast_1d(np.asarray(value))
        t = dap4_type(a.dtype)
        if t == "Float32":
            values = ["%.9g" % x for x in a]
        elif t == "Float64":
            values = [repr(float(x)) for x in a]
        elif t == "Char":
            t, values = "String", [b"".join(a).decode()]
        else:
            values = [str(int(x)) for x in a]
    out = f"{indent}<Attribute name={quoteattr(name)} type=\"{t}\">\n"
    for v in values:
        out += f"{indent}    <Value value={quoteattr(v)}/>\n"
    return out + f"{indent}</Attribute>\n"


def parse_ce(ce, variables, dims):
    """{variable name: [(first, stride, last) per dimension]} of a constraint expression."""
    by_name = {v[0]: v for v in variables}
    chosen = {}
    for clause in filter(None, (c.strip() for c in ce.split(";"))):
        m = re.fullmatch(r"/?([^\[/]+)((?:\[[^\]]*\])*)", clause)
        if not m or m.group(1) not in by_name:
            raise BadRequest(f"no variable {clause!r}")
        name = m.group(1)
        shape = [dims[d] for d in by_name[name][1]]
        slices = re.findall(r"\[([^\]]*)\]", m.group(2))
        if slices and len(slices) != len(shape):
            raise BadRequest(f"{clause}: {len(slices)} slices for rank {len(shape)}")
        cut = []
        for n, s in zip(shape, slices or [""] * len(shape)):
            parts = s.split(":") if s else ["0", str(n - 1)]
            if len(parts) == 1:
                parts = [parts[0], parts[0]]
            if len(parts) == 2:
                parts = [parts[0], "1", parts[1]]
            first, stride = int(parts[0]), int(parts[1])
            last = int(parts[2]) if parts[2] else n - 1
            if not (0 <= first <= last < n and stride > 0):
                raise BadRequest(f"{clause}: slice [{s}] outside 0..{n - 1}")
            cut.append((first, stride, last))
        chosen[name] = cut
    return chosen


def encode(dtype, data):
    if dap4_type(data.dtype if data.dtype != object else dtype) == "String":
        out = b""
        for s in data.ravel():
            b = (s or "").encode()
            out += len(b).to_bytes(8, "little") + b
        return out
    return np.ascontiguousarray(data, dtype=data.dtype.newbyteorder("<")).tobytes()


def response(name, dims, variables, gatts, chosen, with_data):
    """The DMR text and (when with_data) the data bytes of the variables chosen."""
    picked = [v for v in variables if chosen is None or v[0] in chosen]
    # each dimension's size in the answer, or None when the variables slice it differently
    sizes = {}
    cut_data = []
    for vname, vdims, dtype, atts, data in picked:
        cut = chosen.get(vname) if chosen else None
        counts = []
        if cut:
            data = data[tuple(slice(a, b + 1, s) for a, s, b in cut)]
        for d, n in zip(vdims, data.shape):
            if sizes.get(d, n) != n:
                sizes[d] = None
            else:
                sizes.setdefault(d, n)
            counts.append(n)
        cut_data.append((vname, vdims, dtype, atts, data, counts))
    text = '<?xml version="1.0" encoding="UTF-8"?>\n'
    text += (
        f"<Dataset name={quoteattr(name)} dapVersion=\"4.0\" dmrVersion=\"1.0\" "
        'xmlns="http://xml.opendap.org/ns/DAP/4.0#">\n'
    )
    for d, n in dims.items():
        shown = sizes.get(d, n if chosen is None else None)
        if shown is not None:
            text += f"    <Dimension name={quoteattr(d)} size=\"{shown}\"/>\n"
    body = b""
    for vname, vdims, dtype, atts, data, counts in cut_data:
        t = dap4_type(dtype if dtype is not str else np.dtype("O"))
        text += f"    <{t} name={quoteattr(vname)}>\n"
        for d, n in zip(vdims, counts):
            if sizes.get(d) is None:
                text += f"        <Dim size=\"{n}\"/>\n"
            else:
                text += f"        <Dim name={quoteattr('/' + d)}/>\n"
        for k, v in atts:
            text += attribute_xml(k, v, "        ")
        if with_data:
            b = encode(dtype, data)
            crc = zlib.crc32(b) & 0xFFFFFFFF
            body += b + crc.to_bytes(4, "little")
            text += attribute_xml("_DAP4_Checksum_CRC32", np.uint32(crc), "        ")
        text += f"    </{t}>\n"
    for k, v in gatts:
        text += attribute_xml(k, v, "    ")
    if with_data:
        text += attribute_xml("_DAP4_Little_Endian", np.uint8(1), "    ")
    text += "</Dataset>\n"
    return text, body


def chunk(flags, body):
    n = len(body)
    return bytes([flags, (n >> 16) & 0xFF, (n >> 8) & 0xFF, n & 0xFF]) + body


def chunked(dmr, data):
    out = chunk(CHUNK_LITTLE, dmr.replace("\n", "\r\n").encode())
    pieces = [data[i : i + 0xFFFFFF] for i in range(0, len(data), 0xFFFFFF)] or [b""]
    for i, p in enumerate(pieces):
        last = CHUNK_LAST if i == len(pieces) - 1 else 0
        out += chunk(CHUNK_LITTLE | last, p)
    return out


def error_xml(code, message):
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<Error httpcode="{code}">\n'
        f"    <Message>{message}</Message>\n</Error>\n"
    )


class Handler(BaseHTTPRequestHandler):
    root = "."
    log = "requests.log"
    lock = threading.Lock()
    files = {}

    def log_message(self, *args):
        pass

    def reply(self, status, ctype, body):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path, _, query = self.path.partition("?")
        with self.lock:
            with open(self.log, "a") as f:
                f.write(f"{self.path}\n")
        mode = ""
        for m in ("ignore", "fail"):
            if path.startswith(f"/{m}/"):
                mode, path = m, path[len(m) + 1 :]
        m = re.fullmatch(r"/(.+?)\.(dmr|dmr\.xml|dap)", unquote(path))
        if not m:
            return self.reply(404, "text/plain", b"not a DAP4 request\n")
        name, ext = m.group(1), m.group(2)
        with self.lock:
            if name not in self.files:
                try:
                    self.files[name] = load(f"{self.root}/{name}")
                except OSError:
                    return self.reply(404, "text/plain", b"no such dataset\n")
            dims, variables, gatts = self.files[name]
        ce = parse_qs(query).get("dap4.ce", [None])[0]
        # netCDF-C 4.9.0 escapes its constraint more than once (`[` as `%25255b`): decoded
        # until nothing is left to decode
        while ce and unquote(ce) != ce:
            ce = unquote(ce)
        try:
            if ext == "dap" and ce is not None and mode == "fail":
                raise BadRequest(f"the server failed while reading {ce}")
            chosen = parse_ce(ce, variables, dims) if ce and mode != "ignore" else None
            dmr, data = response(name, dims, variables, gatts, chosen, ext == "dap")
        except BadRequest as e:
            err = error_xml(400, str(e)).encode()
            if ext == "dap":
                # an error after the response began: an error chunk
                body = chunk(CHUNK_ERROR | CHUNK_LAST, err)
                return self.reply(200, "application/vnd.opendap.dap4.data", body)
            return self.reply(400, "application/vnd.opendap.dap4.error+xml", err)
        if ext == "dap":
            self.reply(200, "application/vnd.opendap.dap4.data", chunked(dmr, data))
        else:
            self.reply(200, "application/vnd.opendap.dap4.dataset-metadata+xml", dmr.encode())


def main():
    root, port, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    Handler.root, Handler.log = root, log
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print("serving", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
