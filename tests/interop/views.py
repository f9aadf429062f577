"""Value views: what each client (h5py, netCDF4-python, zarr-python) returns for a file, and what
an ncdump CDL text shows, in one canonical form so that any two can be compared exactly.

A view is {"vars": {path: var}, "atts": {path: [values]}} where a variable is
{"shape": [...], "values": [flat canonical values], "fills": [...], "enum": {value: name},
"char": bool}. Canonical values: integers as int; floats as "f4:<bits>" / "f8:<bits>" (so the
comparison is bitwise, NaN payloads included; half floats widen exactly to f4); strings as str
(fixed-length ones cut at their first NUL, as netCDF reads them); opaque as "0x<hex>";
compounds, vlens and array fields as lists.
"""

import base64
import os
import re
import struct

import numpy as np

# attributes that are storage plumbing, not user data, in one client or another
HIDDEN_ATTS = {
    "_Netcdf4Dimid",
    "_Netcdf4Coordinates",
    "DIMENSION_LIST",
    "REFERENCE_LIST",
    "CLASS",
    "NAME",
    "_NCProperties",
    "_nc3_strict",
    "_ARRAY_DIMENSIONS",
    "_IsNetcdf4",
    "_SuperblockVersion",
    "_Format",
}
HIDDEN_PREFIXES = ("_nczarr", "_NCZARR", "_Netcdf4")

# netCDF default fill values by canonical kind
DEFAULT_FILL = {
    "i1": -127,
    "u1": 255,
    "i2": -32767,
    "u2": 65535,
    "i4": -2147483647,
    "u4": 4294967295,
    "i8": -9223372036854775806,
    "u8": 18446744073709551614,
    "f4": "f4:" + struct.pack(">f", 9.969209968386869e36).hex(),
    "f8": "f8:" + struct.pack(">d", 9.969209968386869e36).hex(),
    "str": "",
}


def hidden(name):
    return name in HIDDEN_ATTS or name.startswith(HIDDEN_PREFIXES)


def fbits(x, width):
    if width == 4:
        return "f4:" + struct.pack(">f", np.float32(x)).hex()
    return "f8:" + struct.pack(">d", float(x)).hex()


def canon(v):
    """One element (numpy scalar, bytes, str, array, tuple) in canonical form."""
    if isinstance(v, np.ma.core.MaskedConstant):
        return None
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (np.integer, int)):
        return int(v)
    if isinstance(v, np.floating):
        return fbits(v, 8 if v.dtype.itemsize == 8 else 4)
    if isinstance(v, float):
        return fbits(v, 8)
    if isinstance(v, (np.complexfloating, complex)):
        w = 8 if np.dtype(type(v)).itemsize == 16 else 4
        return [fbits(v.real, w), fbits(v.imag, w)]
    if isinstance(v, (bytes, np.bytes_)):
        return bytes(v).split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
    if isinstance(v, str):
        return v
    if isinstance(v, np.void):
        if v.dtype.names:
            return [char_field(v[n], canon(v[n])) for n in v.dtype.names]
        return "0x" + bytes(v).hex()
    if isinstance(v, np.ndarray):
        if v.dtype.kind == "V" and not v.dtype.names and v.ndim == 0:
            return "0x" + v.tobytes().hex()
        return [canon(x) for x in v.ravel()] if v.ndim else canon(v[()])
    if isinstance(v, (list, tuple)):
        return [canon(x) for x in v]
    return repr(v)


def char_field(raw, c):
    """A char array field of a compound (netCDF's form of a fixed-length string field, `S4`
    in h5py) as the one string it holds, so that both forms compare equal."""
    if isinstance(raw, np.ndarray) and raw.dtype.kind == "S" and raw.dtype.itemsize == 1 and raw.ndim == 1:
        return b"".join(bytes(x) for x in raw.ravel()).split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
    return c


def flat(a):
    a = np.asarray(a)
    if a.dtype.kind == "V" and not a.dtype.names:  # opaque: one hex string per element
        n = a.dtype.itemsize
        raw = a.tobytes()
        return ["0x" + raw[i : i + n].hex() for i in range(0, len(raw), n)]
    if a.dtype.names:
        return [canon(x) for x in a.ravel()]
    return [canon(x) for x in a.ravel()]


def kind(dt):
    dt = np.dtype(dt)
    if dt.kind in "iu":
        return f"{dt.kind}{dt.itemsize}"
    if dt.kind == "f":
        return "f8" if dt.itemsize == 8 else "f4"
    if dt.kind == "b":
        return "i1"
    return "str" if dt.kind in "OSU" else dt.kind


def att_values(v):
    """An attribute value as a flat list of canonical values."""
    if isinstance(v, (str, bytes, np.bytes_)):
        return [canon(v)]
    if isinstance(v, (list, tuple)):
        out = [canon(x) for x in v]
        if any(isinstance(x, float) for x in v):  # JSON list with a fraction: all doubles
            out = [fbits(float(x), 8) if isinstance(x, (int, float)) and not isinstance(x, bool) else canon(x) for x in v]
        return out
    a = np.asarray(v)
    if a.dtype.kind == "O":
        return [canon(x) for x in a.ravel()]
    return flat(a)


def var_entry(shape, values, fills, enum=None, char=False, knd=None):
    fl = [f for f in fills if f is not None]
    if knd in DEFAULT_FILL:
        fl.append(DEFAULT_FILL[knd])
    return {"shape": list(shape), "values": values, "fills": fl, "enum": enum or {}, "char": char}


# ---------------------------------------------------------------- clients


def view_netcdf4(url):
    import netCDF4

    out = {"vars": {}, "atts": {}}
    with netCDF4.Dataset(url) as ds:
        ds.set_auto_maskandscale(False)
        ds.set_always_mask(False)
        ds.set_auto_chartostring(False)

        def walk(g, path):
            for n in g.ncattrs():
                if not hidden(n):
                    out["atts"][f"{path}/:{n}"] = att_values(g.getncattr(n))
            for name, v in g.variables.items():
                vp = f"{path}/{name}"
                for n in v.ncattrs():
                    if not hidden(n):
                        out["atts"][f"{vp}:{n}"] = att_values(v.getncattr(n))
                try:
                    data = v[...]
                except RuntimeError as e:
                    if "undefined filter" not in str(e):
                        raise
                    # the wheel has no plugin for this filter (lz4): nothing to compare
                    out.setdefault("unreadable", {})[vp] = str(e)
                    continue
                enum = {}
                dt = v.datatype
                if isinstance(dt, netCDF4.EnumType):
                    enum = {int(val): k for k, val in dt.enum_dict.items()}
                char = v.dtype == np.dtype("S1")
                if dt is str or v.dtype is str:
                    knd = "str"
                elif isinstance(dt, (netCDF4.CompoundType, netCDF4.VLType)):
                    knd = None
                elif isinstance(dt, netCDF4.EnumType):
                    knd = kind(dt.dtype)
                else:
                    knd = kind(v.dtype) if not char else None
                fills = []
                if "_FillValue" in v.ncattrs():
                    fills.append(att_values(v.getncattr("_FillValue"))[0])
                arr = np.asarray(data) if not isinstance(data, np.ndarray) else data
                if arr.dtype.kind == "O":
                    vals = [canon(x) for x in arr.ravel()]
                else:
                    vals = flat(arr)
                if char:
                    vals = ["" if x == "" else x for x in vals]
                out["vars"][vp] = var_entry(v.shape, vals, fills, enum, char, knd)
            for name, sub in g.groups.items():
                walk(sub, f"{path}/{name}")

        walk(ds, "")
    out["client"] = "netCDF4"
    return out


def view_h5py(path):
    import h5py

    out = {"vars": {}, "atts": {}}
    with h5py.File(path, "r") as f:

        def walk(g, gp):
            for n, val in g.attrs.items():
                if not hidden(n):
                    out["atts"][f"{gp}/:{n}"] = att_values(val)
            for name in g:
                link = g.get(name, getlink=True)
                try:
                    obj = g[name]
                except (KeyError, OSError):
                    continue  # dangling soft link, missing external file
                p = f"{gp}/{name}"
                if isinstance(obj, h5py.Group):
                    if not isinstance(link, h5py.SoftLink):
                        walk(obj, p)
                    continue
                if not isinstance(obj, h5py.Dataset):
                    continue
                dt = obj.dtype
                if h5py.check_ref_dtype(dt) is not None:
                    continue  # references: no netCDF type
                if str(obj.attrs.get("CLASS", b"")) == "b'DIMENSION_SCALE'" and str(obj.attrs.get("NAME", b"")).startswith(
                    "b'This is a netCDF dimension but not a netCDF variable"
                ):
                    continue
                for n, val in obj.attrs.items():
                    if not hidden(n):
                        out["atts"][f"{p}:{n}"] = att_values(val)
                enum = {}
                e = h5py.check_enum_dtype(dt)
                if e:
                    enum = {int(v): k for k, v in e.items()}
                if dt.kind == "b":
                    enum = {0: "FALSE", 1: "TRUE"}
                try:
                    data = obj[()]
                    fv = obj.fillvalue
                except Exception as e:  # a dataset h5py refuses: named in the comparison
                    out.setdefault("errors", {})[p] = f"{type(e).__name__}: {str(e)[:150]}"
                    continue
                arr = np.asarray(data)
                if h5py.check_string_dtype(dt) is not None and dt.kind == "O":
                    vals = [canon(x) for x in arr.ravel()]
                elif h5py.check_vlen_dtype(dt) is not None:
                    vals = [canon(np.asarray(x)) if np.asarray(x).ndim else [canon(x)] for x in arr.ravel()]
                else:
                    vals = flat(arr)
                fills = []
                user_fill = obj.id.get_create_plist().fill_value_defined() == h5py.h5d.FILL_VALUE_USER_DEFINED
                if user_fill and fv is not None and dt.kind in "iuf":
                    fills.append(canon(np.asarray(fv, dtype=dt)[()]))
                knd = kind(dt) if dt.kind in "iufSO" and not dt.names else None
                if dt.kind == "S" and dt.itemsize == 1:
                    out["vars"][p] = var_entry(obj.shape, vals, fills, enum, True, None)
                else:
                    out["vars"][p] = var_entry(obj.shape, vals, fills, enum, False, knd)

        walk(f, "")
    out["client"] = "h5py"
    return out


class OneArray:
    """A Zarr store whose root is one array, seen as a group holding it under `name`."""

    class _NoAtts:
        @staticmethod
        def asdict():
            return {}

    def __init__(self, array, name):
        self.array = array
        self.name = name
        self.attrs = OneArray._NoAtts()
        self.metadata = array.metadata

    def keys(self):
        return [self.name]

    def __getitem__(self, key):
        return self.array


def view_zarr(url):
    import zarr

    path, _, frag = url.partition("#")
    path = path.removeprefix("file://")
    if "zip" in frag.split(","):
        store = zarr.storage.ZipStore(path, mode="r")
    else:
        store = path
    out = {"vars": {}, "atts": {}}
    fmt = 3 if "v3" in frag.split(",") else 2
    try:
        root = zarr.open_group(store, mode="r", zarr_format=fmt)
    except Exception:
        # a store that is one array (zarr.save): a dataset holding it as a variable named as
        # the store (x.zarr -> x), as our tools show it
        root = None

    def walk(g, gp):
        for n, val in g.attrs.asdict().items():
            if not hidden(n):
                out["atts"][f"{gp}/:{n}"] = att_values(val)
        for name in sorted(g.keys()):
            p = f"{gp}/{name}"
            try:
                obj = g[name]
            except Exception as e:  # an array zarr-python refuses: named in the comparison
                out.setdefault("errors", {})[p] = f"{type(e).__name__}: {str(e)[:150]}"
                continue
            if isinstance(obj, zarr.Group):
                walk(obj, p)
                continue
            for n, val in obj.attrs.asdict().items():
                if n == "_FillValue" and isinstance(val, str) and root.metadata.zarr_format == 3 and obj.dtype.kind == "f":
                    # xarray's v3 form of a float fill: base64 of a little-endian double,
                    # which xarray decodes (the client here is xarray, not bare zarr-python)
                    val = np.frombuffer(base64.b64decode(val), "<f8").astype(obj.dtype)[0]
                if not hidden(n):
                    out["atts"][f"{p}:{n}"] = att_values(val)
            try:
                arr = np.asarray(obj[...])
            except Exception as e:
                out.setdefault("errors", {})[p] = f"{type(e).__name__}: {str(e)[:150]}"
                continue
            char = arr.dtype == np.dtype("S1")
            vals = [canon(x) for x in arr.ravel()] if arr.dtype.kind == "O" else flat(arr)
            fills = []
            fv = obj.fill_value
            if fv is not None:
                try:
                    fills.append(canon(np.asarray(fv, dtype=arr.dtype)[()]))
                except (TypeError, ValueError):
                    pass
            knd = kind(arr.dtype) if not char else None
            out["vars"][p] = var_entry(obj.shape, vals, fills, {}, char, knd)
            out["vars"][p]["zarr_fill"] = fills[0] if fills else None

    if root is None:
        root = OneArray(zarr.open_array(store, mode="r", zarr_format=fmt), os.path.basename(path.rstrip("/")).removesuffix(".zarr"))
    walk(root, "")
    out["client"] = "zarr"
    out["zarr_format"] = root.metadata.zarr_format
    if hasattr(store, "close"):
        store.close()
    return out


VIEWERS = {"netCDF4": view_netcdf4, "h5py": view_h5py, "zarr": view_zarr}


def view(client, url):
    return VIEWERS[client](url)


# ---------------------------------------------------------------- comparing views


def diff_views(want, got, what, atts=True):
    """Differences between two views (want: the truth), as short readable lines."""
    out = []
    for p, w in want["vars"].items():
        g = got["vars"].get(p)
        if g is None and p in got.get("unreadable", {}):
            continue
        if g is None and p in got.get("errors", {}):
            out.append(f"variable {p}: {got['client']} cannot read it in {what}: {got['errors'][p]}")
            continue
        if g is None and got.get("client") == "netCDF4" and is_opaque(w):
            continue  # netCDF4-python leaves opaque variables out
        if g is None:
            out.append(f"variable {p} missing in {what}")
            continue
        if w["values"] != g["values"]:
            out.append(f"variable {p} values differ in {what}: {first_diff(w['values'], g['values'])}")
        # the store's fill_value is compared where no _FillValue attribute says the fill
        # (xarray's v3 stores keep the two apart: fill_value 0, _FillValue -1)
        # a v3 array always has a fill_value, a v2 one may have none (null)
        has_fill_att = f"{p}:_FillValue" in want["atts"]
        v3_needs_one = w.get("zarr_fill") is None and got.get("zarr_format") == 3
        if "zarr_fill" in w and "zarr_fill" in g and w["zarr_fill"] != g["zarr_fill"] and not (has_fill_att or v3_needs_one):
            out.append(f"variable {p} fill_value differs in {what}: want {w['zarr_fill']!r}, got {g['zarr_fill']!r}")
    extra = sorted(set(got["vars"]) - set(want["vars"]) - set(want.get("errors", {})))
    if extra:
        out.append(f"extra variables in {what}: {', '.join(extra)}")
    if atts:
        for k, w in want["atts"].items():
            g = got["atts"].get(k)
            if g is None:
                out.append(f"attribute {k} missing in {what}")
            elif g != w and not (got.get("client") == "zarr" and narrowed(g, w) == w):
                out.append(f"attribute {k} differs in {what}: want {short(w)}, got {short(g)}")
        extra = sorted(k for k in set(got["atts"]) - set(want["atts"]) if not k.endswith(":_FillValue"))
        if extra:
            out.append(f"extra attributes in {what}: {', '.join(extra)}")
    return out


def is_opaque(var):
    v = var["values"]
    return bool(v) and all(isinstance(x, str) and x.startswith("0x") for x in v)


def narrowed(got, want):
    """zarr-python sees attribute numbers as JSON only: a double where `want` holds a float is
    narrowed to float (the store's JSON holds the shortest text of the float)."""
    if len(got) != len(want):
        return got
    out = []
    for g, w in zip(got, want):
        if isinstance(w, str) and w.startswith("f4:") and isinstance(g, str) and g.startswith("f8:"):
            g = fbits(struct.unpack(">d", bytes.fromhex(g[3:]))[0], 4)
        out.append(g)
    return out


def short(v, n=80):
    s = repr(v)
    return s if len(s) <= n else s[: n - 3] + "..."


def first_diff(a, b):
    if len(a) != len(b):
        return f"{len(a)} values wanted, {len(b)} got (want {short(a, 60)}, got {short(b, 60)})"
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"element {i}: want {short(x, 60)}, got {short(y, 60)}"
    return "?"


# ---------------------------------------------------------------- CDL data section


TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|[{},;=]|[^\s{},;=]+')
FILL = object()


def unescape(s):
    out = bytearray()
    i = 0
    b = s.encode("utf-8", "surrogateescape")
    simple = {ord("n"): 10, ord("t"): 9, ord("r"): 13, ord("b"): 8, ord("f"): 12, ord("v"): 11, ord("a"): 7, ord("0"): 0}
    while i < len(b):
        c = b[i]
        if c == 0x5C and i + 1 < len(b):
            d = b[i + 1]
            m = re.match(rb"[0-7]{1,3}", b[i + 1 : i + 4])
            if m and not (d == ord("0") and len(m.group()) == 1):
                out.append(int(m.group(), 8) & 0xFF)
                i += 1 + len(m.group())
                continue
            if d == ord("x"):
                m = re.match(rb"[0-9a-fA-F]{1,2}", b[i + 2 : i + 4])
                if m:
                    out.append(int(m.group(), 16))
                    i += 2 + len(m.group())
                    continue
            out.append(simple.get(d, d))
            i += 2
            continue
        out.append(c)
        i += 1
    return out.decode("utf-8", "surrogateescape")


def unescape_name(s):
    return re.sub(r"\\(.)", r"\1", s)


def parse_cdl_data(text):
    """{variable path: list of value nodes} from the data sections of an ncdump text. A node is
    a number (int or float), str, ("id", name) for enum names and 0x opaque, FILL, or a list (braces)."""
    out = {}
    stack = []
    chunk = []
    in_data = False

    def flush():
        if chunk:
            parse_entries(" \n".join(chunk), "/".join([""] + stack), out)
            chunk.clear()

    for line in text.split("\n"):
        s = line.strip()
        if s.startswith("group: ") and s.endswith("{"):
            flush()
            in_data = False
            stack.append(unescape_name(s[len("group: ") : -1].strip()))
            continue
        if s.startswith("} // group"):
            flush()
            in_data = False
            stack.pop()
            continue
        if s == "data:":
            in_data = True
            continue
        if in_data:
            if line == "}":
                flush()
                in_data = False
                continue
            chunk.append(line)
    flush()
    return out


def parse_entries(text, gpath, out):
    toks = TOKEN.findall(text)
    i = 0
    while i < len(toks):
        name = unescape_name(toks[i])
        if i + 1 >= len(toks) or toks[i + 1] != "=":
            raise ValueError(f"CDL data: expected '=' after {name!r}, got {toks[i + 1 : i + 3]}")
        i += 2
        vals, i = parse_list(toks, i, ";")
        out[f"{gpath}/{name}"] = vals
        i += 1


def parse_list(toks, i, end):
    vals = []
    while i < len(toks) and toks[i] != end:
        t = toks[i]
        if t == ",":
            i += 1
            continue
        if t == "{":
            sub, i = parse_list(toks, i + 1, "}")
            vals.append(sub)
        else:
            vals.append(atom(t))
        i += 1
    return vals, i


NUMBER_SUFFIX = re.compile(r"(.*?\d\.?|.*(?:NaN|Infinity))(ull|ul|ll|ub|us|b|s|u|l|f|d)", re.IGNORECASE)


def atom(t):
    if t.startswith('"'):
        return unescape(t[1:-1])
    if t == "_":
        return FILL
    m = NUMBER_SUFFIX.fullmatch(t)
    if m and not t.lower().startswith("0x"):  # attribute values carry a type suffix (1b, 2.5f, 7ULL)
        suffix = m.group(2).lower()
        n = atom(m.group(1))
        if suffix in ("f", "d") and isinstance(n, int):
            return float(n)
        return n
    if re.fullmatch(r"-0+", t):
        return -0.0
    if re.fullmatch(r"[+-]?\d+", t):
        return int(t)
    u = t[:-1] if t.endswith("f") and not t.startswith("0x") else t
    low = u.lower()
    if low in ("nan", "-nan", "+nan"):
        return float("nan") if not low.startswith("-") else -float("nan")
    if low in ("infinity", "-infinity", "+infinity"):
        return float(low.replace("infinity", "inf"))
    try:
        return float(u) if re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", u) else ("id", t)
    except ValueError:
        return ("id", t)


def node_matches(node, want, var):
    """Does one CDL value node show the canonical value `want`?"""
    if node is FILL:
        return want in var["fills"] or (isinstance(want, str) and want.startswith("f") and is_nan(want) and any(is_nan(f) for f in var["fills"] if isinstance(f, str)))
    if isinstance(node, tuple):
        name = node[1]
        if name.lower().startswith("0x") and isinstance(want, str):
            return name.lower() == want.lower()
        return var["enum"].get(want) == name or var["enum"].get(str(want)) == name
    if isinstance(want, list):
        if not isinstance(node, list):
            return len(want) == 1 and node_matches(node, want[0], var)
        if len(node) != len(want):
            # a char array field shows as one string
            if all(isinstance(w, str) and not w.startswith(("f4:", "f8:")) for w in want) and len(node) == 1 and isinstance(node[0], str):
                return node[0] == "".join(want)
            return False
        return all(node_matches(n, w, var) for n, w in zip(node, want))
    if isinstance(want, str) and want[:3] in ("f4:", "f8:"):
        if not isinstance(node, (int, float)):
            return False
        got = fbits(node, 4 if want.startswith("f4") else 8)
        return got == want or (is_nan(want) and is_nan(got))
    if isinstance(want, int):
        return (isinstance(node, int) or (isinstance(node, float) and node == 0)) and node == want
    if isinstance(want, str):
        # a fixed-length string field (h5py `S4`) is a char array field: `{"ab"}`
        if isinstance(node, list) and len(node) == 1 and isinstance(node[0], str):
            return node[0] == want
        return node == want
    return False


def is_nan(c):
    if c.startswith("f4:"):
        return bool(np.isnan(struct.unpack(">f", bytes.fromhex(c[3:]))[0]))
    if c.startswith("f8:"):
        return bool(np.isnan(struct.unpack(">d", bytes.fromhex(c[3:]))[0]))
    return False


def parse_cdl_atts(text):
    """{attribute key: (type word or None, value nodes)} from the header of an ncdump text; keys
    as in views: "/grp/:name" for group attributes, "/grp/var:name" for variable ones."""
    out = {}
    stack = []
    chunk = []
    in_hdr = False

    def flush():
        if chunk:
            parse_att_statements("\n".join(chunk), "/".join([""] + stack), out)
            chunk.clear()

    for line in text.split("\n"):
        s = line.strip()
        if s.startswith("group: ") and s.endswith("{"):
            flush()
            in_hdr = False
            stack.append(unescape_name(s[len("group: ") : -1].strip()))
            continue
        if s.startswith("} // group"):
            flush()
            in_hdr = False
            stack.pop()
            continue
        if s == "variables:" or (s.startswith("// ") and s.endswith("attributes:")):
            in_hdr = True
            continue
        if s in ("data:", "types:", "dimensions:") or (line == "}"):
            flush()
            in_hdr = False
            continue
        if in_hdr:
            chunk.append(line)
    flush()
    return out


def parse_att_statements(text, gpath, out):
    toks = TOKEN.findall(text)
    stmt = []
    for t in toks + [";"]:
        if t != ";":
            stmt.append(t)
            continue
        if "=" in stmt:
            k = stmt.index("=")
            lhs, rhs = stmt[:k], stmt[k + 1 :]
            if len(lhs) > 1 and lhs[-1].startswith(":") and lhs[-2] != "string":
                # `data :att`: ncdump spaces a variable named like a CDL keyword
                lhs = lhs[:-2] + [lhs[-2] + lhs[-1]]
            typ = lhs[0] if len(lhs) > 1 else None
            m = re.match(r"((?:\\.|[^:\\])*):(.*)", lhs[-1])
            if m:
                var, att = unescape_name(m.group(1)), unescape_name(m.group(2))
                key = f"{gpath}/:{att}" if var == "" else f"{gpath}/{var}:{att}"
                nodes, _ = parse_list(rhs + [";"], 0, ";")
                out[key] = (typ, nodes)
        stmt = []


def diff_cdl_atts(want, text, what):
    atts = parse_cdl_atts(text)
    out = []
    ctx = {"fills": [], "enum": {}}
    for key, w in want["atts"].items():
        got = atts.get(key)
        if got is None:
            out.append(f"attribute {key} missing in {what}")
            continue
        typ, nodes = got
        var = want["vars"].get(key.split(":")[0])
        ctx = {"fills": [], "enum": var["enum"] if var and typ not in (None, "string") else {}}
        if typ != "string" and nodes and all(isinstance(n, str) for n in nodes):
            nodes = ["".join(nodes)]  # char text, split by ncdump at newlines
        if len(nodes) != len(w) or not all(node_matches(n, v, ctx) for n, v in zip(nodes, w)):
            out.append(f"attribute {key} in {what}: want {short(w, 70)}, shown {short(nodes, 70)}")
    return out


def diff_cdl(want, text, what):
    """Differences between a view's variables and the data of an ncdump text."""
    try:
        data = parse_cdl_data(text)
    except (ValueError, IndexError) as e:
        return [f"{what}: data section not parsed: {e}"]
    out = []
    for p, w in want["vars"].items():
        nodes = data.get(p)
        if nodes is None and not w["values"] and (not w["shape"] or 0 in w["shape"]):
            continue  # ncdump prints no data line for a variable of no elements
        if nodes is None:
            out.append(f"variable {p} missing in {what}")
            continue
        vals = w["values"]
        if w["char"]:
            got = "".join(n for n in nodes if isinstance(n, str))
            rows = w["shape"][-1] if w["shape"] else 1
            text_rows = ["".join(vals[i : i + rows]) for i in range(0, len(vals), max(rows, 1))]
            wanted = "".join(r.split("\0")[0] if False else r.rstrip("\0") for r in text_rows)
            if got != wanted:
                out.append(f"variable {p} text differs in {what}: want {short(wanted)}, got {short(got)}")
            continue
        if len(nodes) != len(vals):
            out.append(f"variable {p} in {what}: {len(vals)} values wanted, {len(nodes)} shown ({short(nodes, 60)})")
            continue
        for i, (n, v) in enumerate(zip(nodes, vals)):
            if not node_matches(n, v, w):
                shown = "_" if n is FILL else n
                out.append(f"variable {p} element {i} in {what}: want {short(v, 60)}, shown {short(shown, 60)}")
                break
    extra = sorted(set(data) - set(want["vars"]) - set(want.get("errors", {})))
    if extra:
        out.append(f"extra variables in {what}: {', '.join(extra)}")
    return out + diff_cdl_atts(want, text, what)
