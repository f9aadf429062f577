"""Checks `ncdump-rs -j` against the Python clients, for tests/tests/json.rs.

usage: check.py NCDUMP SCHEMA FILE...   (run in the directory holding the files)

For every file: the output parses with Python's json (no key twice in an object), validates
against the JSON Schema, and every value equals what the client reads from the file, bit for
bit for floats (NaN bits included), exactly for 64-bit integers, byte for byte for text. The
client is netCDF4-python for .nc files, h5py for .h5 files and for attributes of user-defined
types (netCDF4-python cannot read opaque or vlen attributes), zarr-python for .zarr stores.
Prints one `FILE: N values` line per file; any difference raises.
"""
import json
import re
import subprocess
import sys

import jsonschema
import numpy as np

NAN = {np.dtype('f4'): {'NaN': 0x7fc00000, '-NaN': 0xffc00000},
       np.dtype('f8'): {'NaN': 0x7ff8000000000000, '-NaN': 0xfff8000000000000}}
UINT = {np.dtype('f4'): np.uint32, np.dtype('f8'): np.uint64}
ATOMIC = {'byte': 'i1', 'ubyte': 'u1', 'short': 'i2', 'ushort': 'u2', 'int': 'i4', 'uint': 'u4',
          'int64': 'i8', 'uint64': 'u8', 'float': 'f4', 'double': 'f8'}


class Count:
    n = 0


def fail(where, msg):
    raise AssertionError(f'{where}: {msg}')


def no_dup_keys(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise AssertionError(f'a key twice in one object: {keys}')
    return dict(pairs)


def dump(ncdump, path, *opts):
    out = subprocess.run([ncdump, '-j', *opts, path], capture_output=True)
    if out.returncode != 0:
        fail(path, f'ncdump-rs -j exited {out.returncode}: {out.stderr.decode(errors="replace")}')
    return json.loads(out.stdout, object_pairs_hook=no_dup_keys)


def text(j):
    """JSON text (a string or {"hex": ...}) as bytes."""
    if isinstance(j, str):
        return j.encode()
    if isinstance(j, dict) and set(j) == {'hex'}:
        return bytes.fromhex(j['hex'])
    raise AssertionError(f'not text: {j!r}')


def real(j, dt, where):
    """A float or double value from JSON, as the exact numpy value."""
    if isinstance(j, str):
        if j == 'Infinity':
            return dt.type(np.inf)
        if j == '-Infinity':
            return dt.type(-np.inf)
        bits = NAN[dt].get(j)
        if bits is None:
            m = re.fullmatch(r'NaN\(0x([0-9a-f]+)\)', j)
            if not m:
                fail(where, f'bad float text {j!r}')
            bits = int(m[1], 16)
        return np.array([bits], UINT[dt]).view(dt)[0]
    if type(j) is not float:
        fail(where, f'float value written as {j!r} (not a float token)')
    return dt.type(j)


def same_real(a, b):
    dt = np.dtype(type(a)) if not hasattr(a, 'dtype') else a.dtype
    return np.array([a], dt).view(UINT[dt])[0] == np.array([b], dt).view(UINT[dt])[0]


class Types:
    """User types by name, from the JSON `types` sections seen from a group."""

    def __init__(self, doc):
        self.by_path = {}
        self._walk(doc, '')

    def _walk(self, grp, path):
        for name, t in grp.get('types', {}).items():
            self.by_path[f'{path}/{name}'] = t
        for name, g in grp.get('groups', {}).items():
            self._walk(g, f'{path}/{name}')

    def find(self, name, group_path):
        if name.startswith('/'):
            return self.by_path[name]
        parts = [p for p in group_path.split('/') if p]
        while True:
            key = '/' + '/'.join(parts + [name]) if parts else '/' + name
            if key in self.by_path:
                return self.by_path[key]
            if not parts:
                raise KeyError(name)
            parts.pop()


def value(j, x, ty, types, gpath, where):
    """Compare one JSON element with one client value of netCDF type `ty`."""
    Count.n += 1
    if ty in ('float', 'double'):
        want = np.dtype(ATOMIC[ty]).type(x)
        if not same_real(real(j, np.dtype(ATOMIC[ty]), where), want):
            fail(where, f'{j!r} != {want!r}')
    elif ty in ATOMIC:
        if type(j) is not int or j != int(x):
            fail(where, f'{j!r} != {int(x)!r}')
    elif ty == 'string':
        if x is None:
            if j is not None:
                fail(where, f'{j!r} != null')
        else:
            b = x if isinstance(x, bytes) else str(x).encode()
            if text(j) != b:
                fail(where, f'{j!r} != {b!r}')
    elif ty == 'char':
        b = bytes(x) if not isinstance(x, bytes) else x
        if text(j) != b.rstrip(b'\0'):
            fail(where, f'{j!r} != {b!r}')
    else:
        t = types.find(ty, gpath)
        cls = t['class']
        if cls == 'enum':
            k = t['members'][j] if isinstance(j, str) else j
            if k != int(x):
                fail(where, f'enum {j!r} = {k} != {int(x)}')
        elif cls == 'opaque':
            b = bytes(x) if not isinstance(x, bytes) else x
            if bytes.fromhex(j) != b or len(b) != t['size']:
                fail(where, f'opaque {j!r} != {b.hex()}')
        elif cls == 'vlen':
            if t['base'] == 'char':
                if text(j) != bytes(x):
                    fail(where, f'{j!r} != {bytes(x)!r}')
                return
            x = list(x)
            if not isinstance(j, list) or len(j) != len(x):
                fail(where, f'vlen {j!r} vs {x!r}')
            for k, (a, b) in enumerate(zip(j, x)):
                value(a, b, t['base'], types, gpath, f'{where}[{k}]')
        elif cls == 'compound':
            if list(j) != list(t['fields']):
                fail(where, f'fields {list(j)} != {list(t["fields"])}')
            for name, f in t['fields'].items():
                array(j[name], np.asarray(x[name]), f['type'], f.get('shape', []), types, gpath,
                      f'{where}.{name}')
        else:
            fail(where, f'unknown class {cls}')


def array(j, a, ty, shape, types, gpath, where):
    """Compare nested JSON arrays with a client array of `shape` (char: rows as strings)."""
    a = np.asarray(a)
    if ty == 'char':
        raw = a.tobytes() if a.dtype.kind == 'S' and a.dtype.itemsize == 1 else a
        if isinstance(raw, bytes):
            n = shape[-1] if shape else 1
            rows = [raw[k:k + n] for k in range(0, len(raw), n)]
            eshape = list(shape[:-1])
        else:
            # an 'S<n>' array (h5py compound field): one string per element
            rows = [bytes(r) for r in raw.reshape(-1)]
            eshape = list(shape[:-1])
        flat = []
        nest_flatten(j, eshape, flat, where)
        if len(flat) != len(rows):
            fail(where, f'{len(flat)} strings for {len(rows)} rows')
        for k, (s, r) in enumerate(zip(flat, rows)):
            value(s, r, 'char', types, gpath, f'{where}[{k}]')
        return
    flat = []
    nest_flatten(j, list(shape), flat, where)
    xs = a.reshape(-1) if a.dtype != object else list(a.reshape(-1))
    if len(flat) != len(xs):
        fail(where, f'{len(flat)} values, client has {len(xs)}')
    for k, (v, x) in enumerate(zip(flat, xs)):
        value(v, x, ty, types, gpath, f'{where}[{k}]')


def nest_flatten(j, shape, out, where):
    if not shape:
        out.append(j)
        return
    if not isinstance(j, list) or len(j) != shape[0]:
        fail(where, f'expected {shape[0]} items, got {j!r:.80}')
    for item in j:
        nest_flatten(item, shape[1:], out, where)


def att(j, x, types, gpath, where, check_type=True):
    """Compare a JSON attribute with the client's value."""
    if isinstance(j, dict) and 'type' in j:
        ty, data = j['type'], j['data']
    elif isinstance(j, str):
        ty, data = 'char', j
    elif isinstance(j, float) or (isinstance(j, list) and all(type(v) is float for v in j)):
        ty, data = 'double', j
    elif isinstance(j, int) or (isinstance(j, list) and all(type(v) is int for v in j)):
        ty, data = 'int', j
    else:
        fail(where, f'unreadable attribute {j!r}')
    if ty in ('char', 'string') and isinstance(x, str):
        # netCDF4-python gives text of both as str, without NULs
        vals = data if isinstance(data, list) else [data]
        xs = [x] if ty == 'char' or not isinstance(x, list) else x
        if ty == 'string' and isinstance(x, list):
            xs = x
        for k, (v, s) in enumerate(zip(vals, xs)):
            if text(v) != s.encode():
                fail(where, f'{v!r} != {s!r}')
            Count.n += 1
        return
    if isinstance(x, list):  # netCDF4-python: several strings
        for k, (v, s) in enumerate(zip(data, x)):
            value(v, s, ty, types, gpath, f'{where}[{k}]')
        return
    xa = np.atleast_1d(np.asarray(x))
    if check_type and ty in ATOMIC and xa.dtype != np.dtype(ATOMIC[ty]):
        fail(where, f'type {ty} but the client has {xa.dtype}')
    if ty == 'char':
        if text(data) != xa.tobytes().rstrip(b'\0'):
            fail(where, f'{data!r} != {xa.tobytes()!r}')
        Count.n += 1
        return
    user = ty not in ATOMIC and ty != 'string'
    vals = data if (user or isinstance(data, list)) else [data]
    if len(vals) != len(xa):
        fail(where, f'{len(vals)} values, client has {len(xa)}')
    for k, (v, s) in enumerate(zip(vals, xa)):
        value(v, s, ty, types, gpath, f'{where}[{k}]')


def check_netcdf4(ncdump, path):
    import netCDF4
    doc = dump(ncdump, path)
    types = Types(doc)
    ds = netCDF4.Dataset(path)
    ds.set_auto_maskandscale(False)
    ds.set_auto_chartostring(False)

    def group(jg, g, gpath):
        want_dims = {n: len(d) for n, d in g.dimensions.items()}
        if jg.get('dimensions', {}) != want_dims:
            fail(gpath, f'dimensions {jg.get("dimensions")} != {want_dims}')
        unlim = [n for n, d in g.dimensions.items() if d.isunlimited()]
        if jg.get('unlimited', []) != unlim:
            fail(gpath, f'unlimited {jg.get("unlimited")} != {unlim}')
        if list(jg.get('variables', {})) != list(g.variables):
            fail(gpath, f'variables {list(jg.get("variables", {}))} != {list(g.variables)}')
        for name, jv in jg.get('variables', {}).items():
            v = g.variables[name]
            where = f'{path}:{gpath.rstrip("/")}/{name}'
            if jv.get('shape', []) and [s.rsplit('/', 1)[-1] for s in jv['shape']] != list(v.dimensions):
                fail(where, f'shape {jv["shape"]} != {v.dimensions}')
            for an, aj in jv.get('attributes', {}).items():
                att(aj, v.getncattr(an), types, gpath, f'{where}:{an}')
            if list(jv.get('attributes', {})) != v.ncattrs():
                fail(where, f'attributes {list(jv.get("attributes", {}))} != {v.ncattrs()}')
            array(jv['data'], v[...], jv['type'], list(v.shape), types, gpath, where)
        for an, aj in jg.get('attributes', {}).items():
            att(aj, g.getncattr(an), types, gpath, f'{path}:{gpath}:{an}')
        if list(jg.get('attributes', {})) != g.ncattrs():
            fail(gpath, f'attributes {list(jg.get("attributes", {}))} != {g.ncattrs()}')
        if list(jg.get('groups', {})) != list(g.groups):
            fail(gpath, f'groups {list(jg.get("groups", {}))} != {list(g.groups)}')
        for name, sub in jg.get('groups', {}).items():
            group(sub, g.groups[name], f'{gpath.rstrip("/")}/{name}')

    group(doc, ds, '/')
    return doc


def check_h5py(ncdump, path):
    """Datasets and attributes of the root group, as h5py reads the bytes."""
    import h5py
    doc = dump(ncdump, path)
    types = Types(doc)
    with h5py.File(path, 'r') as f:
        def attrs(jatts, obj, where):
            for an, aj in jatts.items():
                x = obj.attrs[an]
                if isinstance(x, bytes) or (isinstance(x, np.ndarray) and x.dtype.kind == 'S'
                                            and x.ndim == 0):
                    x = np.frombuffer(bytes(x), 'S1')
                elif isinstance(x, np.ndarray) and x.dtype == object and not (
                        isinstance(aj, dict) and types_class(types, aj['type']) == 'vlen'):
                    x = [s if isinstance(s, bytes) else s.encode() for s in x]
                att(aj, x, types, '/', f'{where}:{an}', check_type=False)
        for name, jv in doc.get('variables', {}).items():
            d = f[name]
            where = f'{path}:/{name}'
            attrs({k: v for k, v in jv.get('attributes', {}).items() if not k.startswith('_')},
                  d, where)
            ty = jv['type']
            if ty == 'string':
                xs = [bytes(s) if not isinstance(s, str) else s.encode()
                      for s in d[...].reshape(-1)]
                flat = []
                nest_flatten(jv['data'], list(d.shape), flat, where)
                for k, (v, s) in enumerate(zip(flat, xs)):
                    value(v, s, 'string', types, '/', f'{where}[{k}]')
            elif 'data' in jv:
                array(jv['data'], d[...], ty, list(d.shape), types, '/', where)
        attrs(doc.get('attributes', {}), f, path)
    return doc


def types_class(types, name):
    try:
        return types.find(name, '/')['class']
    except KeyError:
        return None


def check_zarr(ncdump, path):
    import zarr
    doc = dump(ncdump, path)
    g = zarr.open_group(path, mode='r')
    if doc.get('attributes', {}) != dict(g.attrs):
        fail(path, f'attributes {doc.get("attributes")} != {dict(g.attrs)}')
    names = sorted(g.array_keys())
    if sorted(doc['variables']) != names:
        fail(path, f'variables {sorted(doc["variables"])} != {names}')
    for name, jv in doc['variables'].items():
        a = g[name]
        if jv['shape'] != list(a.metadata.dimension_names):
            fail(name, f'shape {jv["shape"]} != {a.metadata.dimension_names}')
        if jv.get('attributes', {}) != dict(a.attrs):
            fail(name, f'attributes {jv.get("attributes")} != {dict(a.attrs)}')
        array(jv['data'], a[...], jv['type'], list(a.shape), None, '/', f'{path}:{name}')
    return doc


def main():
    ncdump, schema_path, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(schema_path) as fh:
        validator = jsonschema.Draft202012Validator(json.load(fh))
    for path in files:
        Count.n = 0
        if path.endswith('.zarr'):
            doc = check_zarr(ncdump, path)
        elif path.endswith('.h5') or path.startswith('h5:'):
            path = path.removeprefix('h5:')
            doc = check_h5py(ncdump, path)
        else:
            doc = check_netcdf4(ncdump, path)
        errors = list(validator.iter_errors(doc))
        if errors:
            fail(path, f'schema: {errors[0].message} at {list(errors[0].absolute_path)}')
        # -s output is valid too
        errors = list(validator.iter_errors(dump(ncdump, path, '-s')))
        if errors:
            fail(path, f'schema (-s): {errors[0].message} at {list(errors[0].absolute_path)}')
        print(f'{path}: {Count.n} values')


main()
