"""Issue 18.3: kerchunk references written by `ncdump-rs --kerchunk`, read by xarray through
fsspec's ReferenceFileSystem, against netCDF4-python reading the file itself.

Usage: python3 check.py NCDUMP_RS OUTDIR

Writes the inputs into OUTDIR at run time (nothing binary is committed):
  - small equivalents of the benchmark corpus (netCDF-4 raw and shuffle+deflate chunked
    1 x lat x lon, CDF-2, many small deflated variables), CF attributes, packed shorts;
  - files that exercise the references (netCDF4-python and h5py): every type, shuffle, zlib,
    zstd, bzip2, blosc (hdf5plugin), fletcher32, unlimited dimensions grown by another
    variable, groups, fill values and never-written chunks, contiguous / compact / chunked,
    big-endian, a user block, a chunk whose filters were skipped, an external link, classic
    CDF-1/2/5 with record variables;
  - the interop corpus (tests/interop/corpus.py): its HDF5 and classic files.

For each file, ncdump-rs --kerchunk writes the references; a variable it refuses is recorded
with the message, and the run repeated with -v naming the others. Then, group by group,
xarray.open_dataset("reference://", engine="zarr", ...) over the reference file must give the
variables netCDF4-python reads from the file (raw values: no masking, scaling, time or
character decoding), bit for bit, with the same dimensions and attributes; for the corpus
files also the decoded (CF) values xarray reads from the file with its netcdf4 engine.

Prints one JSON report: files, variables compared, refused variables with their reasons,
attributes left out (warnings), and failures (file, variable, what differs).
"""

import json
import os
import re
import subprocess
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
warnings.simplefilter("ignore")


# ---------------------------------------------------------------- inputs


def corpus_files(out):
    """Small equivalents of the benchmark corpus (make_corpus.py's layout, fewer steps)."""
    import netCDF4

    nlat, nlon, ntime = 18, 36, 5
    lat = np.linspace(-85, 85, nlat)
    lon = np.linspace(5, 355, nlon)
    rng = np.random.default_rng(2026)
    tas = (280 + 20 * np.cos(np.deg2rad(lat))[None, :, None] + rng.normal(0, 0.35, (ntime, nlat, nlon))).astype("f4")
    psl = np.round(rng.normal(2650, 600, (ntime, nlat, nlon))).astype("i2")
    zg = (5600 + rng.normal(0, 100, (ntime, nlat, nlon))).astype("f8")
    tas[1, 2, 3] = 1e20  # a fill value in the data
    files = []
    for kind, fmt in [("raw", "NETCDF4"), ("d1s", "NETCDF4"), ("cdf2", "NETCDF3_64BIT_OFFSET")]:
        path = os.path.join(out, f"corpus_{kind}.nc")
        with netCDF4.Dataset(path, "w", format=fmt) as ds:
            ds.Conventions = "CF-1.8"
            ds.title = f"corpus {kind}"
            ds.createDimension("time", None if kind == "raw" else ntime)
            ds.createDimension("lat", nlat)
            ds.createDimension("lon", nlon)
            ds.createDimension("bnds", 2)
            t = ds.createVariable("time", "f8", ("time",))
            t.units = "days since 2000-01-01 00:00:00"
            t.calendar = "noleap"
            t[:] = np.arange(ntime) + 0.5
            la = ds.createVariable("lat", "f8", ("lat",))
            la.units = "degrees_north"
            la.bounds = "lat_bnds"
            la[:] = lat
            lo = ds.createVariable("lon", "f8", ("lon",))
            lo.units = "degrees_east"
            lo[:] = lon
            ds.createVariable("lat_bnds", "f8", ("lat", "bnds"))[:] = np.stack([lat - 2.5, lat + 2.5], axis=1)
            kw = {}
            if kind != "cdf2":
                kw = dict(chunksizes=(1, nlat, nlon), contiguous=False)
            if kind == "d1s":
                kw.update(zlib=True, complevel=1, shuffle=True)
            dims = ("time", "lat", "lon")
            v = ds.createVariable("tas", "f4", dims, fill_value=np.float32(1e20), **kw)
            v.units = "K"
            v.cell_methods = "time: mean"
            v.set_auto_maskandscale(False)
            v[:] = tas
            v = ds.createVariable("psl", "i2", dims, fill_value=np.int16(-32767), **kw)
            v.scale_factor = np.float32(0.5)
            v.add_offset = np.float32(100000)
            v.set_auto_maskandscale(False)
            v[:] = psl
            v = ds.createVariable("zg500", "f8", dims, fill_value=1e20, **kw)
            v.set_auto_maskandscale(False)
            v[:] = zg
        files.append((f"corpus_{kind}.nc", path, True))
    path = os.path.join(out, "manyvars.nc")
    with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
        ds.title = "many small variables"
        ds.createDimension("time", None)
        ds.createDimension("y", 6)
        ds.createDimension("x", 8)
        ds.createVariable("time", "f8", ("time",))[:] = np.arange(4.0)
        for i in range(60):
            dt = ("f4", "f8", "i2", "i4")[i % 4]
            v = ds.createVariable(f"var_{i:04d}", dt, ("time", "y", "x"), chunksizes=(1, 6, 8), zlib=True, complevel=1, shuffle=bool(i % 2))
            v.set_auto_maskandscale(False)
            v.long_name = f"synthetic diagnostic number {i}"
            v.units = ("K", "m s-1", "kg m-2 s-1", "1")[i % 4]
            v.valid_range = np.array([-1000, 1000], dtype=dt)
            v[:] = (100 * np.random.default_rng(i).standard_normal((4, 6, 8))).astype(dt)
    files.append(("manyvars.nc", path, True))
    return files


def reference_files(out):
    """What the references must get right, one file per theme."""
    import h5py
    import netCDF4

    files = []
    r = np.random.default_rng(18)

    # every netCDF-4 type, filters, endianness, fill values, unlimited dimensions, groups
    path = os.path.join(out, "k_nc4.nc")
    with netCDF4.Dataset(path, "w", format="NETCDF4") as f:
        f.createDimension("t", None)
        f.createDimension("n", 7)
        f.createDimension("m", 4)
        f.title = "kerchunk interop"
        f.setncattr("nums", np.array([1.5, np.nan, -np.inf], "f8"))
        f.setncattr_string("strs", ["a", "béta"])
        for t in ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8"]:
            info = np.iinfo(t) if t[0] in "iu" else np.finfo(t)
            v = f.createVariable(f"t_{t}", t, ("n",), zlib=True, shuffle=True, chunksizes=(3,))
            v[:] = np.array([info.min, info.max, 0, 1, 2, 3, 4], dtype=t)
            v.att = np.array([info.max], dtype=t)
            v = f.createVariable(f"be_{t}", t, ("n",), endian="big", contiguous=True)
            v[:] = np.array([info.min, info.max, 0, 1, 2, 3, 4], dtype=t)
        x = r.normal(0, 100, (9, 7)).astype("f8")
        for name, kw in [
            ("zlib9", dict(compression="zlib", complevel=9)),
            ("shuffle_zlib", dict(compression="zlib", shuffle=True)),
            ("zstd", dict(compression="zstd", complevel=4)),
            ("bzip2", dict(compression="bzip2", complevel=9)),
            ("blosc_lz4", dict(compression="blosc_lz4", blosc_shuffle=1)),
            ("blosc_zstd", dict(compression="blosc_zstd", blosc_shuffle=2)),
            ("fletcher_f4", dict(compression="zlib", shuffle=True, fletcher32=True)),
            ("fletcher_only", dict(fletcher32=True)),
        ]:
            dt = "f4" if name == "fletcher_f4" else "f8"
            v = f.createVariable(name, dt, ("t", "n"), chunksizes=(4, 7), **kw)
            v[:] = np.round(x, 1).astype(dt)
        # fletcher32 before shuffle on 8-byte values: numcodecs' shuffle refuses the buffer
        v = f.createVariable("fletcher_f8", "f8", ("t", "n"), chunksizes=(4, 7), zlib=True, shuffle=True, fletcher32=True)
        v[:] = x
        # grows t to 9 while `short_t` keeps 2 records: its chunk straddles its extent
        v = f.createVariable("short_t", "i4", ("t", "m"), chunksizes=(3, 4), fill_value=-5)
        v[0:2] = [[1, 2, 3, 4], [5, 6, 7, 8]]
        v = f.createVariable("partial", "i2", ("n", "m"), chunksizes=(2, 2), fill_value=-99)
        v[0:3, 0:3] = 7
        f.createVariable("never", "f4", ("n",), chunksizes=(3,))
        f.createVariable("never_contig", "f8", ("m",), contiguous=True)
        v = f.createVariable("nofill", "i4", ("m",), fill_value=False)
        v[:] = [1, 2, 3, 4]
        v = f.createVariable("nanfill", "f4", ("n",), chunksizes=(3,), fill_value=np.float32(np.nan))
        v[0:2] = [1, 2]
        v = f.createVariable("chars", "S1", ("t", "m"))
        v[0:3] = netCDF4.stringtochar(np.array(["ab", "cdef", ""], dtype="S4"))
        v = f.createVariable("strings", str, ("n",))
        v[:] = np.array(["x", "", "zz z", "ünï", "a" * 300, "b", "end"], dtype=object)
        v = f.createVariable("strings_chunked", str, ("t",), chunksizes=(2,))
        v[0:5] = np.array(["one", "two", "three", "four", "five"], dtype=object)
        f.createVariable("scalar", "f4", ())[...] = np.float32(0.75)
        f.createVariable("scalar_str", str, ())[...] = "one string"
        et = f.createEnumType("u1", "mood_t", {"happy": 1, "sad": 2, "meh": 255})
        v = f.createVariable("mood", et, ("m",), fill_value=255)
        v[:] = np.array([1, 2, 255, 1], dtype="u1")
        v.worst = np.array([2], "u1")
        ct = f.createCompoundType(np.dtype([("a", "i2"), ("b", "f8"), ("c", "u1")]), "flat_t")
        v = f.createVariable("flat", ct, ("m",))
        v[:] = np.array([(1, 1.5, 3), (2, -2.5, 4), (3, 0.0, 5), (-4, 1e10, 9)], dtype=ct.dtype)
        ct2 = f.createCompoundType(np.dtype([("a", "i2"), ("c", "u1", (3,))]), "arr_t")
        v = f.createVariable("with_array", ct2, ("m",))
        v[:] = np.array([(1, [1, 2, 3])] * 4, dtype=ct2.dtype)
        vt = f.createVLType("i2", "vshort_t")
        v = f.createVariable("ragged", vt, ("m",))
        data = np.empty(4, object)
        data[:] = [np.array([1, 2], "i2"), np.array([], "i2"), np.array([-3], "i2"), np.array([4, 5, 6], "i2")]
        v[:] = data
        v = f.createVariable("szip", "i4", ("n", "m"), compression="szip", szip_coding="nn", szip_pixels_per_block=8)
        v[:] = np.arange(28).reshape(7, 4)
        g = f.createGroup("grp")
        g.createDimension("k", 3)
        g.note = "subgroup"
        gv = g.createVariable("gv", "f8", ("k", "m"), zlib=True)
        gv[:] = np.arange(12).reshape(3, 4) / 3
        gv.units = "m"
        g2 = g.createGroup("deeper")
        g2.createVariable("uses_n", "u2", ("n",))[:] = np.arange(7)
    files.append(("k_nc4.nc", path, False))

    # h5py: compact, contiguous, user block, skipped filters, external link, opaque, lz4
    import hdf5plugin

    path = os.path.join(out, "k_h5py.h5")
    with h5py.File(path, "w", userblock_size=512) as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        h5py.h5d.create(f.id, b"compact", h5py.h5t.STD_I16BE, h5py.h5s.create_simple((6,)), dcpl).write(
            h5py.h5s.ALL, h5py.h5s.ALL, (np.arange(6) * 11).astype(">i2")
        )
        f.create_dataset("contig", data=np.arange(12, dtype="<f4").reshape(3, 4) / 4)
        f.create_dataset("half", data=np.array([0.5, -2.0, 65504.0], dtype="f2"))
        f.create_dataset("opaque", data=np.array([b"\x01\x02\x03\x04", b"\xff\x00\xfe\x01"], dtype="V4"))
        f.create_dataset("lz4", data=np.arange(40, dtype="i4").reshape(8, 5), chunks=(4, 5), **hdf5plugin.LZ4())
        f.create_dataset("bitshuffle", data=np.arange(40, dtype="i4").reshape(8, 5), chunks=(4, 5), **hdf5plugin.Bitshuffle())
        f.create_dataset("scaleoffset", data=np.arange(40, dtype="i4").reshape(8, 5), chunks=(4, 5), scaleoffset=0)
        # chunk (1, 0) written with the deflate filter skipped (filter mask bit 0)
        d = f.create_dataset("skipped", shape=(4, 3), dtype="<i4", chunks=(2, 3), compression="gzip")
        import zlib

        a = np.arange(6, dtype="<i4").reshape(2, 3)
        d.id.write_direct_chunk((0, 0), zlib.compress(a.tobytes()), filter_mask=0)
        d.id.write_direct_chunk((2, 0), (a + 100).tobytes(), filter_mask=1)
    files.append(("k_h5py.h5", path, False))

    target = os.path.join(out, "k_linked.h5")
    with h5py.File(target, "w") as f:
        f.create_dataset("far", data=np.arange(5, dtype="f8") * 1.5, chunks=(2,), compression="gzip")
    path = os.path.join(out, "k_extlink.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("near", data=np.arange(3, dtype="i2"))
        f["ext"] = h5py.ExternalLink("k_linked.h5", "/far")
    files.append(("k_extlink.h5", path, False))

    # classic formats: several record variables, a single one (records back to back), CDF-5 types
    for fmt, name in [("NETCDF3_CLASSIC", "k_cdf1.nc"), ("NETCDF3_64BIT_OFFSET", "k_cdf2.nc"), ("NETCDF3_64BIT_DATA", "k_cdf5.nc")]:
        path = os.path.join(out, name)
        with netCDF4.Dataset(path, "w", format=fmt) as f:
            f.createDimension("rec", None)
            f.createDimension("x", 3)
            f.createDimension("len", 5)
            f.history = "classic"
            f.setncattr("shorts", np.array([1, -2], "i2"))
            f.createVariable("rb", "i1", ("rec",))[:] = np.arange(7, dtype="i1") - 3
            v = f.createVariable("rf", "f4", ("rec", "x"), fill_value=np.float32(-999))
            v[:6] = r.normal(280, 5, (6, 3)).astype("f4")
            f.createVariable("rs", "i2", ("rec", "x"))[:] = np.arange(21).reshape(7, 3)
            c = f.createVariable("label", "S1", ("x", "len"))
            c[:] = netCDF4.stringtochar(np.array(["abc", "", "vwxyz"], dtype="S5"))
            f.createVariable("d", "f8", ())[...] = np.pi
            f.createVariable("fixed", "i4", ("x",))[:] = [-1, 0, 2147483647]
            if fmt == "NETCDF3_64BIT_DATA":
                f.createVariable("ub", "u1", ("x",))[:] = [0, 128, 255]
                f.createVariable("us", "u2", ("x",))[:] = [0, 1, 65535]
                f.createVariable("ui", "u4", ("x",))[:] = [0, 1, 4294967295]
                f.createVariable("i64", "i8", ("x",))[:] = [-(2**63), 0, 2**63 - 1]
                f.createVariable("u64", "u8", ("x",))[:] = [0, 1, 2**64 - 1]
        files.append((name, path, False))
    path = os.path.join(out, "k_onerec.nc")
    with netCDF4.Dataset(path, "w", format="NETCDF3_CLASSIC") as f:
        f.createDimension("rec", None)
        f.createDimension("x", 3)
        f.createVariable("only", "i2", ("rec", "x"))[:] = np.arange(30 * 3).reshape(30, 3)
        f.createVariable("fixed", "f8", ("x",))[:] = [1, 2, 3]
    files.append(("k_onerec.nc", path, False))
    return files


def interop_files(out):
    """The interop corpus's HDF5 and classic files (tests/interop/corpus.py)."""
    sys.path.insert(0, os.path.join(HERE, "..", "interop"))
    import corpus

    entries = []
    for writer in [corpus.h5py_files, corpus.h5netcdf_files, corpus.netcdf4_files, corpus.xarray_files]:
        entries += writer(out)
    files = []
    for e in entries:
        p = e["path"]
        if not p or not os.path.isfile(p):
            continue
        with open(p, "rb") as fh:
            head = fh.read(8)
        if head[:3] == b"CDF" or head == b"\x89HDF\r\n\x1a\n":
            files.append((e["name"], p, False))
    return files


# ---------------------------------------------------------------- the truth


def nc_groups(ds, path="/"):
    yield path, ds
    for name, g in ds.groups.items():
        yield from nc_groups(g, (path.rstrip("/") + "/" + name))


def truth_vars(path):
    """{group path: {var name: netCDF4 variable}} and the open dataset (netCDF4-python)."""
    import netCDF4

    ds = netCDF4.Dataset(path)
    return ds, {g: dict(grp.variables) for g, grp in nc_groups(ds)}


def truth_child(client, path, out, skip):
    """In a child process: the raw values of every variable of `path` read by `client`
    (netCDF4-python, or h5py for what netCDF-C cannot read), pickled to `out`. A client that
    crashes takes only its child down; the parent then knows which variable it was reading."""
    import pickle

    got = {}
    if client == "netCDF4":
        import netCDF4

        with netCDF4.Dataset(path) as ds:
            for gpath, grp in nc_groups(ds):
                for vname, v in grp.variables.items():
                    vpath = gpath.rstrip("/") + "/" + vname
                    if vpath in skip:
                        continue
                    print(vpath, file=sys.stderr, flush=True)
                    try:
                        v.set_auto_maskandscale(False)
                        v.set_auto_chartostring(False)
                        got[vpath] = (np.asarray(v[...]), "netCDF4")
                    except Exception as e:  # noqa: BLE001 - the library's refusal, kept as text
                        got[vpath] = (None, f"netCDF4: {type(e).__name__}: {e}")
    else:
        import h5py
        import hdf5plugin  # noqa: F401 - registers the plugins

        with h5py.File(path, "r") as f:
            for vpath in skip:
                try:
                    got[vpath] = (np.asarray(f[vpath][...]), "h5py")
                except Exception as e:  # noqa: BLE001
                    got[vpath] = (None, f"h5py: {type(e).__name__}: {e}")
    with open(out, "wb") as fh:
        pickle.dump(got, fh)


def h5py_truth(path, vpath, out):
    """h5py's raw values of one dataset (in a child process)."""
    import pickle

    pkl = out + ".h5py.pkl"
    p = subprocess.run([sys.executable, __file__, "--truth", "h5py", path, pkl, vpath], capture_output=True, text=True, cwd=os.path.dirname(path))
    if p.returncode != 0:
        return None, "h5py: crashed"
    with open(pkl, "rb") as fh:
        return pickle.load(fh)[vpath]


def read_truth(path, out):
    """{var path: (raw values or None, how)}: netCDF4-python in a child process, h5py in
    another for the variables netCDF-C cannot read (or crashes on)."""
    import pickle

    pkl = out + ".truth.pkl"
    crashed = []
    got = {}
    for _ in range(20):
        p = subprocess.run([sys.executable, __file__, "--truth", "netCDF4", path, pkl, ",".join(crashed)], capture_output=True, text=True, cwd=os.path.dirname(path))
        if p.returncode == 0:
            with open(pkl, "rb") as fh:
                got = pickle.load(fh)
            break
        last = p.stderr.strip().splitlines()
        reading = [x for x in last if x.startswith("/")]
        if not reading:
            raise RuntimeError(f"netCDF4-python cannot open {path}: {p.stderr[-500:]}")
        crashed.append(reading[-1])
    again = [v for v, (a, _) in got.items() if a is None] + crashed
    if again:
        p = subprocess.run([sys.executable, __file__, "--truth", "h5py", path, pkl, ",".join(again)], capture_output=True, text=True, cwd=os.path.dirname(path))
        if p.returncode == 0:
            with open(pkl, "rb") as fh:
                for v, (a, how) in pickle.load(fh).items():
                    first = got.get(v, (None, "netCDF4: crashed"))[1]
                    got[v] = (a, how) if a is not None else (None, f"{first}; {how}")
    for v in crashed:
        got.setdefault(v, (None, "netCDF4: crashed; h5py: crashed"))
    return got


# ---------------------------------------------------------------- comparisons


def as_text(x):
    if isinstance(x, bytes):
        return x.decode("utf-8", "replace")
    return "" if x is None else str(x)


def same_values(a, b):
    """None when equal (bitwise for floats, NaN and -0.0 included), else a description."""
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape:
        return f"shape {a.shape} vs {b.shape}"
    if a.dtype.names:
        if not b.dtype.names or list(a.dtype.names) != list(b.dtype.names):
            return f"fields {a.dtype.names} vs {b.dtype.names}"
        for n in a.dtype.names:
            d = same_values(a[n], b[n])
            if d:
                return f"field {n}: {d}"
        return None
    if a.dtype.kind in "OUT" or b.dtype.kind in "OUT":
        la = [as_text(x) for x in a.ravel()]
        lb = [as_text(x) for x in b.ravel()]
        if la != lb:
            i = next(i for i, (x, y) in enumerate(zip(la, lb)) if x != y)
            return f"string {i}: {la[i]!r} vs {lb[i]!r}"
        return None
    if a.dtype.kind in "SV" or b.dtype.kind in "SV":
        if a.dtype.itemsize != b.dtype.itemsize or a.tobytes() != b.tobytes():
            return f"bytes {a.ravel()[:4]!r} vs {b.ravel()[:4]!r}"
        return None
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        x = a.astype("f8")
        y = b.astype("f8")
        ok = (np.isnan(x) & np.isnan(y)) | ((x == y) & (np.signbit(x) == np.signbit(y)))
        if not ok.all():
            i = int(np.argmin(ok.ravel()))
            return f"element {i}: {x.ravel()[i]!r} vs {y.ravel()[i]!r}"
        return None
    if not np.array_equal(a.astype(object), b.astype(object)):
        ne = np.nonzero((a.astype(object) != b.astype(object)).ravel())[0]
        i = int(ne[0])
        return f"element {i}: {a.ravel()[i]!r} vs {b.ravel()[i]!r}"
    return None


def same_dtype(a, b):
    """The stored kinds agree (byte order aside; a half float reads as float in netCDF-C)."""
    a, b = np.asarray(a).dtype, np.asarray(b).dtype
    if a.names or b.names:
        return True
    if a.kind in "OUTS" and b.kind in "OUTS":
        return True
    if a.kind == "f" and b == np.dtype("f2"):
        return True
    if a.kind == "b" or b.kind == "b":
        return a.itemsize == b.itemsize
    return a.kind == b.kind and a.itemsize == b.itemsize


def same_attr(a, b):
    if isinstance(a, (str, bytes)) or isinstance(b, (str, bytes)):
        return as_text(a) == as_text(b)
    if np.asarray(a).dtype == np.float32:
        # JSON numbers carry no width: a float attribute reads back as a double
        b = np.asarray(b, dtype="f8").astype("f4")
    if isinstance(a, (list, tuple)) and a and isinstance(a[0], str):
        return [as_text(x) for x in a] == [as_text(x) for x in np.atleast_1d(b)]
    try:
        return same_values(np.atleast_1d(np.asarray(a, dtype="f8")), np.atleast_1d(np.asarray(b, dtype="f8"))) is None
    except (TypeError, ValueError):
        return same_values(np.atleast_1d(a), np.atleast_1d(b)) is None


# ---------------------------------------------------------------- the run

REFUSED = re.compile(r'variable "([^"]+)" cannot be referenced as Zarr chunks: (.*)')
LEFT_OUT = re.compile(r'attribute "([^"]+)" of (variable "([^"]+)"|group (\S+)) left out')


def references(tool, name, path, out, report):
    """Run the tool until it succeeds, leaving out the variables it refuses. Returns the refs
    file, the refused {var path: reason}, and the attributes left out {(owner, att)}."""
    refused = {}
    every = None
    for _ in range(40):
        args = [tool, "--kerchunk"]
        if refused:
            args += ["-v", ",".join(v for v in every if v not in refused)]
        p = subprocess.run(args + [path], capture_output=True, text=True, cwd=os.path.dirname(path))
        if p.returncode == 0:
            refs = os.path.join(out, name + ".refs.json")
            with open(refs, "w") as fh:
                fh.write(p.stdout)
            left = set()
            for line in p.stderr.splitlines():
                m = LEFT_OUT.search(line)
                if m:
                    left.add((m.group(3) or m.group(4), m.group(1)))
                elif "left out: netCDF has no type" in line:
                    pass  # the HDF5 reader's own warning (netCDF-C does not see them either)
                elif line.strip():
                    report["failures"].append([name, "", f"unexpected stderr: {line}"])
            return refs, refused, left
        m = REFUSED.search(p.stderr)
        if m and every is not None and all(v in refused for v in every if v != m.group(1)):
            refused[m.group(1)] = m.group(2)  # every variable refused: nothing to reference
            return None, refused, set()
        if not m or p.returncode != 1:
            report["failures"].append([name, "", f"ncdump-rs --kerchunk failed (exit {p.returncode}): {p.stderr.strip()}"])
            return None, refused, set()
        if every is None:
            ds, groups = truth_vars(path)
            every = [(g.rstrip("/") + "/" + v) for g, vs in groups.items() for v in vs]
            ds.close()
        if m.group(1) in refused or m.group(1) not in every:
            report["failures"].append([name, m.group(1), f"refused twice or unknown: {m.group(2)}"])
            return None, refused, set()
        refused[m.group(1)] = m.group(2)
    report["failures"].append([name, "", "too many refusals"])
    return None, refused, set()


def check_json(name, refs_path, path, report):
    """Strict JSON (no NaN tokens outside the metadata strings); ranges inside their files."""
    def bad_constant(c):
        raise ValueError(f"bare {c} in the reference file")

    with open(refs_path) as fh:
        doc = json.load(fh, parse_constant=bad_constant)
    if doc.get("version") != 1 or not isinstance(doc.get("refs"), dict):
        report["failures"].append([name, "", "not a version 1 reference file"])
        return doc
    for key, v in doc["refs"].items():
        if isinstance(v, list):
            url, off, ln = v
            if not os.path.isabs(url) or not os.path.isfile(url):
                report["failures"].append([name, key, f"URL {url!r} is not an absolute path of a file"])
            elif off + ln > os.path.getsize(url):
                report["failures"].append([name, key, f"range {off}+{ln} past the end of {url}"])
            elif os.path.dirname(os.path.realpath(url)) != os.path.dirname(os.path.realpath(path)):
                report["failures"].append([name, key, f"URL {url!r} is not the input or a file beside it"])
            elif os.path.realpath(url) != os.path.realpath(path):
                report["other_files"].append([name, key, os.path.basename(url)])
        elif not isinstance(v, str):
            report["failures"].append([name, key, f"value of type {type(v).__name__}"])
        elif key.rsplit("/", 1)[-1].startswith(".z"):
            json.loads(v)  # the metadata is JSON too (NaN allowed, as Python writes it)
        elif not v.startswith("base64:"):
            report["failures"].append([name, key, "inline data not in base64"])
    return doc


def compare(name, path, refs_path, refused, left, decoded, report):
    import xarray as xr

    truths = read_truth(path, refs_path)
    ds, groups = truth_vars(path)
    try:
        for gpath, vars_ in groups.items():
            # the root as the plain form reads it (no consolidated metadata); a subgroup needs
            # the .zmetadata (zarr-python 3 lists a subgroup of a reference file system wrongly)
            kw = dict(
                engine="zarr",
                group=None if gpath == "/" else gpath.strip("/"),
                backend_kwargs={"consolidated": gpath != "/", "storage_options": {"fo": refs_path}},
            )
            try:
                xd = xr.open_dataset("reference://", decode_cf=False, **kw)
            except Exception as e:  # noqa: BLE001
                report["failures"].append([name, gpath, f"xarray cannot open the group: {type(e).__name__}: {e}"])
                continue
            grp = ds if gpath == "/" else ds[gpath]
            for a in grp.ncattrs():
                if (gpath, a) in left:
                    continue
                if a not in xd.attrs:
                    report["failures"].append([name, gpath, f"group attribute {a} missing"])
                elif not same_attr(grp.getncattr(a), xd.attrs[a]):
                    report["failures"].append([name, gpath, f"group attribute {a}: {grp.getncattr(a)!r} vs {xd.attrs[a]!r}"])
            for vname, v in vars_.items():
                vpath = gpath.rstrip("/") + "/" + vname
                if vpath in refused:
                    continue
                if vname not in xd.variables:
                    report["failures"].append([name, vpath, "not in the references"])
                    continue
                truth, how = truths.get(vpath, (None, "not read"))
                if truth is None:
                    report["unreadable"].append([name, vpath, how])
                    continue
                xv = xd[vname]
                if tuple(xv.dims) != tuple(v.dimensions):
                    report["failures"].append([name, vpath, f"dimensions {v.dimensions} vs {xv.dims}"])
                try:
                    got = xv.values
                except Exception as e:  # noqa: BLE001 - a reference that does not decode
                    report["failures"].append([name, vpath, f"xarray cannot read it: {type(e).__name__}: {e}"])
                    continue
                d = same_values(truth, got)
                if d is None and not same_dtype(truth, got):
                    d = f"dtype {truth.dtype} vs {got.dtype}"
                if d and how == "netCDF4" and path.endswith((".h5", ".nc")):
                    # netCDF-C reads some HDF5 constructs wrongly (a fixed-string compound field
                    # keeps its first byte): h5py's reading of the file is then the truth
                    h5, _ = h5py_truth(path, vpath, refs_path)
                    if h5 is not None and same_values(h5, got) is None:
                        report["h5py_agrees"].append([name, vpath, d])
                        d = None
                if d:
                    report["failures"].append([name, vpath, f"values ({how}): {d}"])
                else:
                    report["compared"] += 1
                for a in v.ncattrs():
                    if (vpath, a) in left:
                        continue
                    if a == "dtype" and v.getncattr(a) == "bool" and xv.dtype == bool:
                        continue  # xarray's zarr backend takes this attribute as the dtype
                    if a not in xv.attrs:
                        report["failures"].append([name, vpath, f"attribute {a} missing"])
                    elif not same_attr(v.getncattr(a), xv.attrs[a]):
                        report["failures"].append([name, vpath, f"attribute {a}: {v.getncattr(a)!r} vs {xv.attrs[a]!r}"])
                extra = set(xv.attrs) - set(v.ncattrs()) - {"_FillValue"}
                if extra:
                    report["failures"].append([name, vpath, f"extra attributes {sorted(extra)}"])
            if decoded:
                # CF decoding through the references equals xarray reading the file
                xr_refs = xr.open_dataset("reference://", **kw)
                xr_file = xr.open_dataset(path, engine="netcdf4", group=kw["group"])
                for vname in xr_file.variables:
                    try:
                        xr.testing.assert_identical(xr_file[vname], xr_refs[vname])
                    except Exception as e:  # noqa: BLE001 - a difference, or a read failure
                        report["failures"].append([name, vname, f"decoded: {str(e)[:300]}"])
                    else:
                        report["decoded"] += 1
    finally:
        ds.close()


def main(tool, out):
    out = os.path.abspath(out)
    tool = os.path.abspath(tool)
    os.makedirs(out, exist_ok=True)
    report = {"files": [], "compared": 0, "decoded": 0, "refused": [], "left_out": [], "unreadable": [], "unopenable": [], "h5py_agrees": [], "other_files": [], "failures": []}
    # the interop corpus first: its h5py files need hdf5plugin's blosc before netCDF4-python
    # (whose wheel brings its own plugins) is imported
    files = interop_files(out) + corpus_files(out) + reference_files(out)
    only = os.environ.get("KERCHUNK_ONLY", "").split(",")
    for name, path, decoded in files:
        if only != [""] and name not in only:
            continue
        opens = subprocess.run([sys.executable, "-c", "import netCDF4, sys; netCDF4.Dataset(sys.argv[1]).close()", path], capture_output=True, text=True, cwd=os.path.dirname(path))
        if opens.returncode != 0:
            report["unopenable"].append([name, opens.stderr.strip().splitlines()[-1]])
            continue
        refs, refused, left = references(tool, name, path, out, report)
        report["files"].append(name)
        report["refused"] += [[name, v, why] for v, why in refused.items()]
        report["left_out"] += [[name, o, a] for o, a in sorted(left)]
        if refs is None:
            continue
        check_json(name, refs, path, report)
        compare(name, path, refs, refused, left, decoded, report)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    if sys.argv[1] == "--truth":
        truth_child(sys.argv[2], sys.argv[3], sys.argv[4], [x for x in sys.argv[5].split(",") if x])
    else:
        main(sys.argv[1], sys.argv[2])
