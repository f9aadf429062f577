"""The interop corpus (issue 14): files and stores written by the real Python clients.

Every writer is one function below; `build(outdir)` runs them all and returns the manifest, one
entry per file: its name (the row of docs/interop.md), the writer, the path, the URL the netCDF
tools take, and the client whose view of the values is the truth for it (`native`).
Small arrays and fixed seeds: the same bytes of data on every run. Nothing here is committed as
binary; the test writes the corpus into a temporary directory each time.
"""

import os

import numpy as np

SEED = 14


def rng(k):
    return np.random.default_rng(SEED * 1000 + k)


# ---------------------------------------------------------------- h5py


def h5py_files(out):
    import h5py

    files = []

    def add(name, note):
        files.append(entry(name, "h5py", os.path.join(out, name), "h5py", note))

    # groups, compact and dense attributes, hard and soft links, numeric types
    with h5py.File(os.path.join(out, "h5py_groups.h5"), "w", libver="latest") as f:
        r = rng(1)
        f.attrs["title"] = "h5py groups"  # vlen str attribute
        f.attrs["fixed"] = np.bytes_(b"fixed text")  # fixed-length string attribute
        f.attrs["ints"] = np.array([1, -2, 3], dtype="i4")
        f.attrs["pi"] = np.float64(np.pi)
        g = f.create_group("g1")
        g2 = g.create_group("g2")
        for i in range(20):  # > 8 attributes: dense storage (fractal heap + B-tree v2)
            g.attrs[f"a{i:02d}"] = np.int16(i * 3 - 7)
        d = g2.create_dataset("temp", data=r.normal(10, 5, (4, 5)).astype("f4"))
        d.attrs["units"] = "K"
        d.attrs["valid_range"] = np.array([-50.0, 50.0], dtype="f4")
        big = g.create_dataset("dense_atts", data=np.arange(6, dtype="u2"))
        for i in range(12):
            big.attrs[f"att{i:02d}"] = np.arange(i + 1, dtype="f8") / 3
        f.create_dataset("i1", data=np.arange(-5, 5, dtype="i1"))
        f.create_dataset("u1", data=np.arange(250, 256, dtype="u1"))
        f.create_dataset("i2be", data=np.arange(-3, 3, dtype=">i2"))
        f.create_dataset("u4", data=np.array([0, 1, 4294967295], dtype="u4"))
        f.create_dataset("i8", data=np.array([-(2**62), 0, 2**62], dtype="i8"))
        f.create_dataset("u8be", data=np.array([0, 2**64 - 1], dtype=">u8"))
        f.create_dataset("f8be", data=np.array([0.1, -0.0, np.inf, np.nan], dtype=">f8"))
        f.create_dataset("f4", data=np.array([1.5, -np.inf, 3.4e38, 1e-45], dtype="f4"))
        f.create_dataset("scalar", data=np.float64(2.5))
        f["hardlink"] = f["g1/g2/temp"]
        f["softlink"] = h5py.SoftLink("/i1")
    add("h5py_groups.h5", "groups, compact + dense attributes, hard + soft links, numeric types")

    # strings
    with h5py.File(os.path.join(out, "h5py_strings.h5"), "w") as f:
        f.create_dataset("fixed", data=np.array([b"one", b"two\x00x", b"", b"four4444"], dtype="S8"))
        f.create_dataset("fixed2d", data=np.array([[b"ab", b"c"], [b"", b"def"]], dtype="S3"))
        f.create_dataset("vlen", data=np.array(["alpha", "", "gamma δ"], dtype=h5py.string_dtype()))
        f.create_dataset(
            "vlen_ascii",
            data=np.array([b"x", b"yy"], dtype=object),
            dtype=h5py.string_dtype("ascii"),
        )
        f.create_dataset("vlen2d", data=np.array([["a", "bc"], ["def", "g"]], dtype=h5py.string_dtype()))
        f.create_dataset("char", data=np.array([b"h", b"i", b"!"], dtype="S1"))
        f.create_dataset("vlen_scalar", data="just one", dtype=h5py.string_dtype())
        f.attrs["vlen_list"] = np.array(["p", "qq"], dtype=h5py.string_dtype())
        f.attrs["utf8"] = "é"
    add("h5py_strings.h5", "fixed (NUL-padded) and vlen strings, ASCII and UTF-8, 1-D/2-D/scalar")

    # user-defined types
    with h5py.File(os.path.join(out, "h5py_types.h5"), "w") as f:
        color = h5py.enum_dtype({"RED": 0, "GREEN": 1, "BLUE": 42}, basetype="i1")
        f["color_t"] = color  # committed type
        f.create_dataset("committed_enum", data=np.array([0, 42, 1, 0], dtype="i1"), dtype=f["color_t"])
        f.create_dataset(
            "anon_enum",
            data=np.array([3, 1, 2], dtype="u2"),
            dtype=h5py.enum_dtype({"one": 1, "two": 2, "three": 3}, basetype="u2"),
        )
        f.create_dataset("bool", data=np.array([True, False, True]))
        cmp = np.dtype([("id", "i4"), ("x", "f8"), ("tag", "S4")])
        f["point_t"] = cmp
        f.create_dataset(
            "compound",
            data=np.array([(1, 0.5, b"ab"), (2, -1.25, b"cdef")], dtype=cmp),
            dtype=f["point_t"],
        )
        f.create_dataset(
            "anon_compound",
            data=np.array([(7, 1.5), (8, 2.5), (9, 3.5)], dtype=[("n", "u1"), ("v", "f4")]),
        )
        vl = h5py.vlen_dtype(np.dtype("i4"))
        d = f.create_dataset("vlen_int", (3,), dtype=vl)
        d[0] = [1, 2, 3]
        d[1] = []
        d[2] = [-7]
        f.create_dataset("opaque", data=np.array([b"\x01\x02\x03\x04", b"\xff\x00\xfe\x01"], dtype="V4"))
        f.create_dataset("half", data=np.array([0.5, -2.0, 65504.0], dtype="f2"))
        f.create_dataset("complex", data=np.array([1 + 2j, -0.5j], dtype="c8"))
    add("h5py_types.h5", "enums (committed, anonymous, bool), compounds, vlen int, opaque, half float, complex")

    # chunking and filters
    with h5py.File(os.path.join(out, "h5py_filters.h5"), "w") as f:
        r = rng(2)
        a = r.integers(-1000, 1000, (12, 10)).astype("i4")
        x = np.round(r.normal(0, 100, (12, 10)), 3).astype("f8")
        f.create_dataset("gzip", data=a, chunks=(5, 4), compression="gzip", compression_opts=6)
        f.create_dataset("shuffle_gzip", data=a, chunks=(4, 10), shuffle=True, compression="gzip")
        f.create_dataset("fletcher32", data=x, chunks=(6, 5), fletcher32=True)
        f.create_dataset("all3", data=x, chunks=(3, 3), shuffle=True, fletcher32=True, compression="gzip")
        f.create_dataset("scaleoffset_int", data=a, chunks=(6, 5), scaleoffset=0)
        f.create_dataset("scaleoffset_float", data=x, chunks=(6, 5), scaleoffset=3)
        t = h5py.h5t.STD_I16LE.copy()
        t.set_precision(12)
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((6, 5))
        dcpl.set_filter(5, 0, ())  # nbit
        h5py.h5d.create(f.id, b"nbit", t, h5py.h5s.create_simple((12, 10)), dcpl).write(
            h5py.h5s.ALL, h5py.h5s.ALL, (a * 2).astype("i2")
        )
        try:
            import hdf5plugin

            f.create_dataset("zstd", data=x, chunks=(6, 5), **hdf5plugin.Zstd(clevel=5))
            f.create_dataset("blosc_lz4", data=a, chunks=(6, 5), **hdf5plugin.Blosc(cname="lz4", clevel=5))
            f.create_dataset("blosc_zstd_bit", data=x, chunks=(6, 5), **hdf5plugin.Blosc(cname="zstd", shuffle=2))
            f.create_dataset("lz4", data=a, chunks=(6, 5), **hdf5plugin.LZ4())
            f.create_dataset("bzip2", data=x, chunks=(6, 5), **hdf5plugin.BZip2(blocksize=9))
        except ImportError:
            pass
        f.create_dataset("compact", data=np.arange(4, dtype="i2"), compression=None)
    add("h5py_filters.h5", "chunked: gzip, shuffle, fletcher32, lzf, scaleoffset, nbit, hdf5plugin zstd/blosc/lz4/bzip2")

    # h5py's own lzf filter (32000): no netCDF-C plugin, so 4.9.0 refuses the whole file
    with h5py.File(os.path.join(out, "h5py_lzf.h5"), "w") as f:
        f.create_dataset("lzf", data=rng(5).integers(-9, 9, (12, 10)).astype("i4"), chunks=(6, 5), compression="lzf")
        f.create_dataset("lzf_shuffle", data=np.linspace(0, 1, 30), chunks=(7,), compression="lzf", shuffle=True)
    add("h5py_lzf.h5", "h5py's lzf filter, with and without shuffle")

    # fill values, partial and extendible datasets
    with h5py.File(os.path.join(out, "h5py_fill.h5"), "w") as f:
        d = f.create_dataset("partial", (10, 8), dtype="i2", chunks=(4, 4), fillvalue=-99)
        d[0:3, 0:5] = 7
        d = f.create_dataset("nofill_written", (4,), dtype="f4", fillvalue=np.float32(np.nan))
        d[1] = 2.0
        d = f.create_dataset("extendible", (3, 4), maxshape=(None, 4), dtype="f8", chunks=(2, 4))
        d[...] = np.arange(12).reshape(3, 4)
        d.resize((5, 4))
        d[4] = -1
        d = f.create_dataset("unlimited_1d", (0,), maxshape=(None,), dtype="i8", chunks=(3,))
        d.resize((7,))
        d[:] = np.arange(7) * 10**12
        f.create_dataset("never_written", (5,), dtype="u4", chunks=(2,), fillvalue=17)
    add("h5py_fill.h5", "fill values, partly written chunks, extendible and unlimited-like datasets")

    # dimension scales
    with h5py.File(os.path.join(out, "h5py_dimscales.h5"), "w") as f:
        f["lat"] = np.linspace(-60, 60, 5).astype("f4")
        f["lon"] = np.arange(0, 360, 60).astype("f4")
        f["lat"].make_scale("lat")
        f["lon"].make_scale("lon")
        d = f.create_dataset("field", data=rng(3).integers(0, 100, (5, 6)).astype("i4"))
        d.dims[0].attach_scale(f["lat"])
        d.dims[1].attach_scale(f["lon"])
        f["lat"].attrs["units"] = "degrees_north"
        g = f.create_group("sub")
        g["t"] = np.arange(3, dtype="f8")
        g["t"].make_scale("t")
        v = g.create_dataset("series", data=np.array([[1, 2, 3, 4, 5, 6]] * 3, dtype="u1"))
        v.dims[0].attach_scale(g["t"])
        v.dims[1].attach_scale(f["lon"])
    add("h5py_dimscales.h5", "dimension scales, shared across groups")

    # storage layouts and orders: compact, empty, creation-ordered groups, attribute types
    with h5py.File(os.path.join(out, "h5py_layouts.h5"), "w", track_order=True) as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        h5py.h5d.create(f.id, b"compact", h5py.h5t.STD_I16LE, h5py.h5s.create_simple((6,)), dcpl).write(
            h5py.h5s.ALL, h5py.h5s.ALL, np.arange(6, dtype="i2") * 11
        )
        f.create_dataset("zero_len", (0,), dtype="f8")
        f.create_dataset("zero_len_chunked", (0, 3), maxshape=(None, 3), dtype="i4", chunks=(4, 3))
        f.create_dataset("edge_chunks", data=np.arange(35, dtype="u2").reshape(7, 5), chunks=(3, 2), compression="gzip")
        g = f.create_group("zeta_first", track_order=True)  # created before alpha: creation order != name order
        g["b"] = np.array([2], "i1")
        g["a"] = np.array([1], "i1")
        g.attrs["z"] = 1
        g.attrs["y"] = 2
        f.create_group("alpha_second")
        d = f["compact"]
        d.attrs["i8"] = np.int64(-(2**40))
        d.attrs["u8"] = np.uint64(2**63)
        d.attrs["u1s"] = np.array([0, 255], "u1")
        d.attrs["f4"] = np.float32(np.nan)
        d.attrs["f8s"] = np.array([np.inf, -0.0, 1e-300])
        d.attrs["bool"] = np.bool_(True)
        d.attrs["str_list_fixed"] = np.array([b"ab", b"cde"], dtype="S3")
        d.attrs["multi_line"] = "line one\nline two"
        d.attrs["empty_str"] = ""
    add("h5py_layouts.h5", "compact layout, 0-length datasets, partial edge chunks, creation-ordered groups and attributes, attribute types")

    # PyTables-style bookkeeping (issue 31): CLASS/TITLE/VERSION on every group and dataset,
    # and netCDF-C's reserved names written by another program; netCDF-C hides the reserved
    # ones on groups and variables alike
    with h5py.File(os.path.join(out, "h5py_reserved_atts.h5"), "w") as f:
        for obj, cls in ((f, b"GROUP"), (f.create_group("tables"), b"GROUP")):
            obj.attrs["CLASS"] = np.bytes_(cls)
            obj.attrs["TITLE"] = np.bytes_(b"")
            obj.attrs["VERSION"] = np.bytes_(b"1.0")
        f.attrs["PYTABLES_FORMAT_VERSION"] = np.bytes_(b"2.1")
        d = f["tables"].create_dataset("arr", data=np.arange(5, dtype="i4"))
        d.attrs["CLASS"] = np.bytes_(b"ARRAY")
        d.attrs["FLAVOR"] = np.bytes_(b"numpy")
        g = f.create_group("reserved")
        for n in ("NAME", "REFERENCE_LIST", "_Netcdf4Dimid", "_nc3_strict", "_IsNetcdf4", "_Format", "_SuperblockVersion", "_NCProperties"):
            g.attrs[n] = np.bytes_(b"v")
            f["tables/arr"].attrs[n] = np.bytes_(b"v")
        g.attrs["kept"] = np.int32(7)
        # fixed-length strings in an array, even of one element, are string attributes in
        # netCDF-C; a scalar one is char text
        f.attrs["one_fixed"] = np.array([b"abc"], dtype="S3")
        f.attrs["three_s1"] = np.array([b"a", b"b", b"c"], dtype="S1")
        f.attrs["one_by_one"] = np.array([[b"xyz"]], dtype="S3")
        f.attrs["scalar_fixed"] = np.bytes_(b"char text")
        # a short variable with a float _FillValue (ROMS output after NCO): kept as written;
        # not the variable's fill value, so the type's default (-32767) prints as `_`
        m = f.create_dataset("mistyped_fill", data=np.array([1, 2, -32767], dtype="i2"))
        m.attrs["_FillValue"] = np.float32(1e37)
        # variables named as CDL section keywords: `data :units` but `data:_Storage`
        for n in ("data", "dimensions", "group", "types", "variables"):
            k = f.create_dataset(n, data=np.arange(3, dtype="i2"), chunks=(3,))
            k.attrs["units"] = "m"
    add("h5py_reserved_atts.h5", "PyTables-style CLASS/TITLE/VERSION attributes, netCDF-C's reserved attribute names on groups and variables, fixed-length string arrays as attributes, variables named as CDL section keywords")

    # virtual datasets (sources in this file and in another) and external raw storage
    with h5py.File(os.path.join(out, "h5py_vds_source.h5"), "w") as f:
        f["src"] = np.arange(100, 108, dtype="i4")
    with h5py.File(os.path.join(out, "h5py_virtual.h5"), "w") as f:
        f["a"] = np.arange(4, dtype="i4")
        f["b"] = np.arange(10, 14, dtype="i4")
        layout = h5py.VirtualLayout(shape=(3, 4), dtype="i4")
        layout[0] = h5py.VirtualSource(f["a"])
        layout[1] = h5py.VirtualSource(f["b"])
        layout[2] = h5py.VirtualSource("h5py_vds_source.h5", "src", shape=(8,))[::2]
        f.create_virtual_dataset("vds", layout, fillvalue=-1)
        part = h5py.VirtualLayout(shape=(6,), dtype="i4")
        part[0:4] = h5py.VirtualSource(f["a"])
        f.create_virtual_dataset("vds_partial", part, fillvalue=-7)
    add("h5py_virtual.h5", "virtual datasets (same-file and other-file sources, strided, unmapped fill)")

    with h5py.File(os.path.join(out, "h5py_external.h5"), "w") as f:
        raw = np.arange(6, dtype="<f8") / 8
        raw.tofile(os.path.join(out, "h5py_external.bin"))
        f.create_dataset("external", shape=(6,), dtype="<f8", external=[("h5py_external.bin", 0, 48)])
        (np.arange(4) - 2).astype(">i2").tofile(os.path.join(out, "h5py_external2.bin"))
        f.create_dataset("two_files", shape=(2, 4), dtype=">i2", external=[("h5py_external2.bin", 0, 8), ("h5py_external2.bin", 0, 8)])
    add("h5py_external.h5", "external raw storage (one and two segments, big-endian)")

    # what netCDF cannot show: references, dangling soft link, external link
    with h5py.File(os.path.join(out, "h5py_unshown.h5"), "w") as f:
        f["data"] = np.arange(3, dtype="i4")
        r = f.create_dataset("objref", (1,), dtype=h5py.ref_dtype)
        r[0] = f["data"].ref
        f["dangling"] = h5py.SoftLink("/nowhere")
        f["ext"] = h5py.ExternalLink("h5py_groups.h5", "/i1")
    add("h5py_unshown.h5", "object reference, dangling soft link, external link")

    # what real writers make (issue 31): chunked compressed compounds with char-array and
    # float members, a chunked enum dataset, a vlen of fixed-length strings, a fill value
    # property without _FillValue on a partly written chunked dataset, integers with unused
    # bits; and current HDF5's virtual dataset encoding (libver latest: one-block selections,
    # mapping block version 1 with the file's own datasets as sources), which 4.9.0 cannot read
    with h5py.File(os.path.join(out, "h5py_real_writers.h5"), "w") as f:
        f["color_t"] = h5py.enum_dtype({"RED": 0, "GREEN": 1, "BLUE": 2}, basetype="i1")
        rec = np.dtype([("id", "<i4"), ("tag", "S3"), ("val", "<f8")])
        f["rec_t"] = rec
        vals = np.zeros(10, dtype=rec)
        vals["id"] = np.arange(10) * 7 - 20
        vals["tag"] = [b"abc", b"de", b"", b"xyz", b"q", b"rs", b"tuv", b"w", b"ab", b"c"]
        vals["val"] = np.arange(10) / 4
        f.create_dataset("records", data=vals, dtype=f["rec_t"], chunks=(4,), compression="gzip", shuffle=True)
        f.create_dataset("colors", data=np.arange(7, dtype="i1") % 3, dtype=f["color_t"], chunks=(3,), compression="gzip")
        vs = f.create_dataset("vlen_fixed", shape=(3,), dtype=h5py.vlen_dtype(np.dtype("S3")))
        vs[0] = np.array([b"ab", b"cde"], dtype="S3")
        vs[1] = np.array([], dtype="S3")
        vs[2] = np.array([b"x"], dtype="S3")
        p = f.create_dataset("prop_fill", shape=(6, 8), chunks=(3, 4), dtype="f4", fillvalue=5.0)
        p[:3, :4] = np.arange(12, dtype="f4").reshape(3, 4)
        t = h5py.h5t.STD_I32LE.copy()
        t.set_precision(12)
        t.set_offset(4)
        dset = h5py.h5d.create(f.id, b"int12", t, h5py.h5s.create_simple((5,)))
        dset.write(h5py.h5s.ALL, h5py.h5s.ALL, np.array([-5, 0, 7, 2047, -2048], dtype="<i4"))
    add("h5py_real_writers.h5", "what real writers make: chunked compressed compounds with char-array members, chunked enums, vlen of fixed strings, fill value property without _FillValue, 12-bit integers")
    with h5py.File(os.path.join(out, "h5py_vds_latest.h5"), "w", libver="latest") as f:
        f["a"] = np.arange(4, dtype="i4")
        f["b"] = np.arange(10, 14, dtype="i4")
        layout = h5py.VirtualLayout(shape=(2, 4), dtype="i4")
        layout[0] = h5py.VirtualSource(".", "a", shape=(4,))
        layout[1] = h5py.VirtualSource(".", "b", shape=(4,))
        f.create_virtual_dataset("vds", layout, fillvalue=-1)
        part = h5py.VirtualLayout(shape=(3, 4), dtype="i4")
        part[0, 1:3] = h5py.VirtualSource(".", "b", shape=(4,))[1:3]
        f.create_virtual_dataset("vds_partial", part, fillvalue=-7)
    add("h5py_vds_latest.h5", "virtual datasets in current HDF5's encoding (libver latest: one-block selections, mapping block version 1, the file's own datasets as sources); 4.9.0 cannot read them")
    return files


# ---------------------------------------------------------------- h5netcdf


def h5netcdf_files(out):
    import h5netcdf
    import h5py

    files = []
    for libver in ["earliest", "latest"]:
        name = f"h5netcdf_{libver}.nc"
        path = os.path.join(out, name)
        r = rng(10)
        with h5netcdf.File(path, "w", libver=libver, invalid_netcdf=False) as f:
            f.dimensions = {"time": None, "x": 4, "y": 3}
            f.attrs["Conventions"] = "CF-1.8"
            f.attrs["count"] = np.int32(3)
            t = f.create_variable("time", ("time",), "f8")
            t.attrs["units"] = "days since 2000-01-01"
            f.resize_dimension("time", 5)
            t[:] = np.arange(5) * 0.5
            x = f.create_variable("x", ("x",), "i4", data=np.arange(4))
            x.attrs["axis"] = "X"
            v = f.create_variable(
                "data",
                ("time", "x", "y"),
                "f4",
                chunks=(1, 4, 3),
                compression="gzip",
                compression_opts=4,
                shuffle=True,
                fillvalue=np.float32(-1e30),
            )
            v[...] = r.normal(0, 1, (5, 4, 3)).astype("f4")
            v[2, 1, :] = np.float32(-1e30)
            v.attrs["long_name"] = "random data"
            s = f.create_variable("names", ("x",), dtype=h5py.string_dtype())
            s[:] = np.array(["a", "bb", "", "dddd"], dtype=object)
            g = f.create_group("grp")
            g.dimensions = {"z": 2}
            gv = g.create_variable("zv", ("z", "y"), "i2", fillvalue=np.int16(-1))
            gv[0, :] = [1, 2, 3]
            g.attrs["info"] = "subgroup"
        files.append(entry(name, "h5netcdf", path, "netCDF4", f"libver={libver}, unlimited dim, groups, strings, gzip+shuffle, fill"))
    return files


# ---------------------------------------------------------------- netCDF4-python


def netcdf4_files(out):
    import netCDF4

    files = []
    r = rng(20)

    path = os.path.join(out, "nc4_types.nc")
    with netCDF4.Dataset(path, "w", format="NETCDF4") as f:
        f.createDimension("n", 4)
        f.createDimension("rec", None)
        f.title = "every netCDF-4 type"
        f.setncattr_string("str_att", ["one", "two"])
        for t in ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8"]:
            v = f.createVariable(f"v_{t}", t, ("n",))
            info = np.iinfo(t) if t[0] in "iu" else np.finfo(t)
            v[:] = np.array([info.min, info.max, 0, 1], dtype=t)
            v.setncattr("att", np.array([info.max], dtype=t))
        v = f.createVariable("f8_nan", "f8", ("n",))
        v[:] = [np.nan, -np.nan, -0.0, 5e-324]
        v = f.createVariable("big_i4", ">i4", ("n",), endian="big")
        v[:] = [1, -1, 2**31 - 1, 256]
        v = f.createVariable("big_f4", ">f4", ("n",), endian="big", fill_value=np.float32(-1.5))
        v[:2] = [3.25, -0.125]
        v = f.createVariable("char", "S1", ("rec", "n"))
        v[0:2] = netCDF4.stringtochar(np.array(["ab", "cdef"], dtype="S4"))
        v = f.createVariable("str", str, ("n",))
        v[:] = np.array(["x", "", "zz z", "ünï"], dtype=object)
        v = f.createVariable("filled", "i4", ("rec",), fill_value=-7)
        v[1] = 5
        v = f.createVariable("scalar", "f4")
        v.assignValue(np.float32(0.75))
        et = f.createEnumType("u1", "mood_t", {"happy": 1, "sad": 2, "meh": 255})
        v = f.createVariable("mood", et, ("n",), fill_value=255)
        v[:] = np.array([1, 2, 255, 1], dtype="u1")
        vt = f.createVLType("i2", "vshort_t")
        v = f.createVariable("ragged", vt, ("n",))
        data = np.empty(4, object)
        data[:] = [np.array([1, 2], "i2"), np.array([], "i2"), np.array([-3], "i2"), np.array([4, 5, 6], "i2")]
        v[:] = data
        ct = f.createCompoundType(np.dtype([("a", "i2"), ("b", "f8"), ("c", "u1", (3,))]), "rec_t")
        v = f.createVariable("cmpd", ct, ("n",))
        v[:] = np.array([(1, 1.5, [1, 2, 3]), (2, -2.5, [4, 5, 6]), (3, 0.0, [0, 0, 0]), (-4, 1e10, [9, 9, 9])], dtype=ct.dtype)
        g = f.createGroup("sub")
        g.createDimension("m", 2)
        gv = g.createVariable("gmood", et, ("m",))
        gv[:] = np.array([2, 1], "u1")
        gv.setncattr("from_parent_dim", np.int64(-1))
        g2 = g.createGroup("deeper")
        g2.createVariable("uses_n", "u2", ("n",))[:] = [1, 2, 3, 4]
    files.append(entry("nc4_types.nc", "netCDF4", path, "netCDF4", "every atomic type, big-endian, char, string, enum, vlen, compound, groups, fill values, scalar (netCDF4-python cannot write opaque types: h5py_types.h5 has one)"))

    path = os.path.join(out, "nc4_compress.nc")
    # compressible data: netCDF-C's blosc filter fails on a chunk blosc cannot shrink
    # (and on chunks under 128 bytes, which blosc leaves uncompressed)
    a = np.repeat(np.repeat(r.integers(-500, 500, (8, 6)), 2, axis=1), 2, axis=0).astype("i4")
    x = np.repeat(np.repeat(np.round(r.normal(0, 10, (8, 6)), 1), 2, axis=1), 2, axis=0).astype("f8")
    with netCDF4.Dataset(path, "w", format="NETCDF4") as f:
        f.createDimension("y", 16)
        f.createDimension("x", 12)
        specs = [
            ("zlib", dict(compression="zlib", complevel=5)),
            ("zlib_shuffle_f32", dict(compression="zlib", shuffle=True, fletcher32=True)),
            ("zstd", dict(compression="zstd", complevel=4)),
            ("bzip2", dict(compression="bzip2", complevel=9)),
            ("blosc_lz4", dict(compression="blosc_lz4", blosc_shuffle=1)),
            ("blosc_zstd", dict(compression="blosc_zstd", blosc_shuffle=2)),
            ("blosc_zlib", dict(compression="blosc_zlib", blosc_shuffle=0)),
            ("blosc_lz4hc", dict(compression="blosc_lz4hc", blosc_shuffle=1)),
            ("szip", dict(compression="szip", szip_coding="nn", szip_pixels_per_block=8)),
        ]
        for name, kw in specs:
            f.createVariable("i_" + name, "i4", ("y", "x"), chunksizes=(8, 6), **kw)[:] = a
            f.createVariable("d_" + name, "f8", ("y", "x"), chunksizes=(16, 6), **kw)[:] = x
        v = f.createVariable("bitgroom", "f8", ("y", "x"), compression="zlib", significant_digits=3)
        v[:] = x
        v = f.createVariable("granular", "f4", ("y", "x"), significant_digits=4, quantize_mode="GranularBitRound")
        v[:] = x.astype("f4")
        v = f.createVariable("bitround", "f8", ("y", "x"), significant_digits=9, quantize_mode="BitRound")
        v[:] = x
    files.append(entry("nc4_compress.nc", "netCDF4", path, "netCDF4", "compression=: zlib, zstd, bzip2, blosc_*, szip; shuffle, fletcher32; quantize (BitGroom, GranularBitRound, BitRound)"))

    for fmt, name in [
        ("NETCDF3_CLASSIC", "nc3_classic.nc"),
        ("NETCDF3_64BIT_OFFSET", "nc3_64bit_offset.nc"),
        ("NETCDF3_64BIT_DATA", "nc3_64bit_data.nc"),
        ("NETCDF4_CLASSIC", "nc4_classic.nc"),
    ]:
        path = os.path.join(out, name)
        with netCDF4.Dataset(path, "w", format=fmt) as f:
            f.createDimension("time", None)
            f.createDimension("lat", 3)
            f.createDimension("len", 5)
            f.history = "written by netCDF4-python"
            f.setncattr("scale", np.float32(0.5))
            f.setncattr("shorts", np.array([1, -2], "i2"))
            t = f.createVariable("time", "f8", ("time",))
            t.units = "hours since 1970-01-01"
            t[:] = [0, 6, 12, 18]
            v = f.createVariable("temp", "f4", ("time", "lat"), fill_value=np.float32(-999))
            v[:3] = r.normal(280, 5, (3, 3)).astype("f4")
            v.valid_min = np.float32(100)
            f.createVariable("b", "i1", ("lat",))[:] = [-128, 0, 127]
            f.createVariable("s", "i2", ("lat",))[:] = [-32768, 1, 32767]
            c = f.createVariable("label", "S1", ("lat", "len"))
            c[:] = netCDF4.stringtochar(np.array(["abc", "", "vwxyz"], dtype="S5"))
            f.createVariable("d", "f8", ())[...] = np.pi
            if fmt == "NETCDF3_64BIT_DATA":
                f.createVariable("ub", "u1", ("lat",))[:] = [0, 128, 255]
                f.createVariable("us", "u2", ("lat",))[:] = [0, 1, 65535]
                f.createVariable("ui", "u4", ("lat",))[:] = [0, 1, 4294967295]
                f.createVariable("i64", "i8", ("lat",))[:] = [-(2**63), 0, 2**63 - 1]
                f.createVariable("u64", "u8", ("lat",))[:] = [0, 1, 2**64 - 1]
            if fmt == "NETCDF4_CLASSIC":
                f.createVariable("packed", "i2", ("time", "lat"), zlib=True, complevel=2, shuffle=True)[:] = np.arange(12).reshape(4, 3)
        files.append(entry(name, "netCDF4", path, "netCDF4", f"format={fmt}"))

    # nested user-defined types, typed attributes
    path = os.path.join(out, "nc4_nested.nc")
    with netCDF4.Dataset(path, "w", format="NETCDF4") as f:
        f.createDimension("n", 3)
        f.createDimension("empty", None)
        inner = f.createCompoundType(np.dtype([("lo", "i2"), ("hi", "i2")]), "range_t")
        outer_dt = np.dtype([("id", "u4"), ("r", inner.dtype), ("w", "f4", (2,))])
        outer = f.createCompoundType(outer_dt, "obs_t")
        v = f.createVariable("obs", outer, ("n",))
        data = np.zeros(3, outer_dt)
        data["id"] = [10, 20, 30]
        data["r"]["lo"] = [-1, -2, -3]
        data["r"]["hi"] = [1, 2, 3]
        data["w"] = [[0.5, 1.5], [2.5, 3.5], [np.nan, -np.inf]]
        v[:] = data
        v.setncattr("default_range", np.array([(0, 9)], dtype=inner.dtype)[0])
        et = f.createEnumType("i2", "level_t", {"low": -1, "mid": 0, "high": 1})
        ev = f.createVariable("level", et, ("n",))
        ev[:] = np.array([-1, 1, 0], "i2")
        ev.setncattr("worst", np.array([1], "i2"))
        f.createVariable("never", "f8", ("empty",))
        f.createVariable("scalar_str", str, ())[...] = "one string"
        f.setncattr_string("single_string", "typed string")
        f.setncattr("empty_text", "")
    files.append(entry("nc4_nested.nc", "netCDF4", path, "netCDF4", "nested compound (compound and array fields), compound attribute, enum with negative values, 0-length unlimited, scalar string"))

    # NCZarr as netCDF-C 4.10.1 (the wheel's) writes it
    name = "nc4_nczarr.zarr"
    path = os.path.join(out, name)
    url = zarr_url(path, "nczarr")
    with netCDF4.Dataset(url, "w", format="NETCDF4") as f:
        f.createDimension("t", None)
        f.createDimension("x", 5)
        f.source = "netCDF4-python NCZarr"
        f.setncattr("ints", np.array([3, -4], "i4"))
        v = f.createVariable("temp", "f4", ("t", "x"), zlib=True, complevel=3, shuffle=True, chunksizes=(2, 5), fill_value=np.float32(-1))
        v[0:3] = r.normal(0, 1, (3, 5)).astype("f4")
        v.units = "K"
        f.createVariable("idx", "i8", ("x",))[:] = np.arange(5) * -3
        c = f.createVariable("code", "S1", ("x",))
        c[:] = np.array(list("abcde"), dtype="S1")
        s_ = f.createVariable("name", str, ("x",))
        s_[:] = np.array(["a", "bb", "", "d", "e e"], dtype=object)
        g = f.createGroup("sub")
        g.createDimension("y", 2)
        gv = g.createVariable("u", "u2", ("y", "x"), fill_value=np.uint16(9))
        gv[1, :] = [1, 2, 3, 4, 5]
        g.note = "written by netCDF-C 4.10"
    files.append(entry(name, "netCDF4", path, "netCDF4", "NCZarr written by netCDF-C 4.10.1 (netCDF4-python): unlimited dim, zlib+shuffle, char, string, group, fill values", url=url))
    return files


# ---------------------------------------------------------------- xarray


def xarray_dataset():
    import pandas as pd
    import xarray as xr

    r = rng(30)
    temp = r.normal(15, 8, (4, 3, 2)).astype("f4")
    temp[1, 1, 1] = np.nan
    ds = xr.Dataset(
        {
            "temp": (("time", "lat", "lon"), temp, {"units": "degC", "long_name": "temperature"}),
            "count": (("lat",), np.array([3, 0, 9], dtype="i2")),
            "flag": (("time",), np.array([True, False, True, True])),
            "station": (("lon",), np.array(["north", "south pole"], dtype=object)),
        },
        coords={
            "time": pd.date_range("2020-01-01", periods=4, freq="6h"),
            "lat": ("lat", np.array([-10.0, 0.0, 10.0]), {"units": "degrees_north"}),
            "lon": ("lon", np.array([100.5, 101.5], dtype="f4")),
        },
        attrs={"title": "xarray corpus", "version": np.int32(2)},
    )
    ds["count"].encoding["_FillValue"] = np.int16(-1)
    return ds


def xarray_files(out):
    files = []
    ds = xarray_dataset()
    for engine in ["netcdf4", "h5netcdf", "scipy"]:
        name = f"xr_{engine}.nc"
        path = os.path.join(out, name)
        try:
            d = ds if engine != "scipy" else ds.drop_vars(["station"])
            d.to_netcdf(path, engine=engine)
        except (ImportError, ValueError) as e:
            files.append(entry(name, f"xarray/{engine}", None, "netCDF4", f"to_netcdf(engine={engine}) not available: {e}"))
            continue
        files.append(entry(name, f"xarray/{engine}", path, "netCDF4", f"to_netcdf(engine={engine!r}): time coordinate, NaN, bool, object strings"))
    name = "xr_zarr2.zarr"
    path = os.path.join(out, name)
    ds.to_zarr(path, zarr_format=2, consolidated=True, mode="w")
    files.append(entry(name, "xarray/zarr", path, "zarr", "to_zarr(zarr_format=2), consolidated metadata", url=zarr_url(path, "zarr")))
    return files


# ---------------------------------------------------------------- zarr-python


def zarr_codecs():
    import numcodecs as nc

    c = []
    blosc = nc.Blosc
    for cname in ["blosclz", "lz4", "lz4hc", "zlib", "zstd"]:
        for sh, sn in [(blosc.NOSHUFFLE, "noshuf"), (blosc.SHUFFLE, "shuf"), (blosc.BITSHUFFLE, "bitshuf")]:
            c.append((f"blosc_{cname}_{sn}", "f8", blosc(cname=cname, clevel=5, shuffle=sh), None))
    c += [
        ("zstd", "i4", nc.Zstd(level=3), None),
        ("lz4", "i4", nc.LZ4(acceleration=1), None),
        ("zlib", "f4", nc.Zlib(level=6), None),
        ("gzip", "i2", nc.GZip(level=5), None),
        ("bz2", "f8", nc.BZ2(level=9), None),
        ("lzma", "i8", nc.LZMA(preset=1), None),
        ("delta", "i4", None, [nc.Delta(dtype="i4")]),
        ("delta_zlib", "i8", nc.Zlib(level=1), [nc.Delta(dtype="i8")]),
        ("fixedscaleoffset", "f8", None, [nc.FixedScaleOffset(offset=10, scale=100, dtype="f8", astype="i4")]),
        ("quantize", "f8", nc.Zlib(), [nc.Quantize(digits=3, dtype="f8")]),
        ("bitround", "f4", None, [nc.BitRound(keepbits=8)]),
        ("packbits", "bool", None, [nc.PackBits()]),
        ("astype", "f8", None, [nc.AsType(encode_dtype="f4", decode_dtype="f8")]),
        ("shuffle", "i8", nc.Zlib(level=1), [nc.Shuffle(elementsize=8)]),
        ("fletcher32", "u2", None, [nc.Fletcher32()]),
        # zarr-python 3 writes strings only with vlen-utf8 first, so it cannot write categorize
        ("vlen_utf8", "str", None, [nc.VLenUTF8()]),
    ]
    return c


def zarr_files(out):
    import zarr

    files = []
    name = "zarr_codecs.zarr"
    path = os.path.join(out, name)
    root = zarr.open_group(path, mode="w", zarr_format=2)
    r = rng(40)
    for aname, dt, comp, filt in zarr_codecs():
        shape, chunks = (7, 5), (3, 4)
        if dt == "bool":
            data = r.integers(0, 2, shape).astype(bool)
        elif dt == "str":
            data = np.array(["red", "green", "blue"] * 12, dtype=object)[:35].reshape(shape)
        elif dt[0] == "f":
            data = r.normal(0, 50, shape).astype(dt)
        else:
            data = r.integers(-30000, 30000, shape).astype(dt)
        dtype = str if dt == "str" else dt
        z = root.create_array(aname, shape=shape, chunks=chunks, dtype=dtype, compressors=comp, filters=filt, attributes={"_ARRAY_DIMENSIONS": ["y", "x"]})
        z[...] = data
    root.attrs["title"] = "one array per numcodecs codec"
    files.append(entry(name, "zarr", path, "zarr", "directory store, v2, one array per numcodecs codec (blosc blosclz/lz4/lz4hc/zlib/zstd x no/byte/bit shuffle, zstd, lz4, zlib, gzip, bz2, lzma, delta, fixedscaleoffset, quantize, bitround, packbits, astype, shuffle, fletcher32, vlen-utf8; not categorize: zarr-python 3 writes strings only with vlen-utf8 first)", url=zarr_url(path, "zarr")))

    name = "zarr_groups.zarr"
    path = os.path.join(out, name)
    root = zarr.open_group(path, mode="w", zarr_format=2)
    root.attrs.update({"int": 5, "float": 0.25, "text": "hello", "list": [1, 2, 3], "mixed_list": [1.5, 2]})
    a = root.create_array("partial", shape=(6, 4), chunks=(2, 2), dtype="<i2", fill_value=-5)
    a[0:3, 1:3] = 11
    a.attrs["_ARRAY_DIMENSIONS"] = ["row", "col"]
    b = root.create_array("bigend", shape=(4,), chunks=(4,), dtype=">f8", fill_value=np.nan)
    b[1:3] = [1.0, -0.0]
    b.attrs["_ARRAY_DIMENSIONS"] = ["col"]
    s = root.create_array("text", shape=(3,), dtype="|S6", compressors=None)
    s[...] = np.array([b"abc", b"", b"sixsix"])
    s.attrs["_ARRAY_DIMENSIONS"] = ["three"]
    g = root.create_group("inner")
    g.attrs["level"] = 1
    h = g.create_array("u8", shape=(5,), chunks=(2,), dtype="<u8")
    h[...] = np.array([0, 1, 2**63, 2**64 - 1, 7], dtype="u8")
    h.attrs["_ARRAY_DIMENSIONS"] = ["five"]
    gg = g.create_group("deepest")
    z = gg.create_array("f", shape=(2, 3), chunks=(1, 3), dtype="<f4", order="F")
    z[...] = np.arange(6, dtype="f4").reshape(2, 3) / 7
    z.attrs["_ARRAY_DIMENSIONS"] = ["two", "three3"]
    files.append(entry(name, "zarr", path, "zarr", "directory store, v2: nested groups, attributes, fill values, big-endian, fixed strings, F order", url=zarr_url(path, "zarr")))

    name = "zarr_more.zarr"
    path = os.path.join(out, name)
    root = zarr.open_group(path, mode="w", zarr_format=2)
    a = root.create_array("scalar", shape=(), dtype="<f8", attributes={"_ARRAY_DIMENSIONS": []})
    a[...] = 42.5
    a = root.create_array("slash", shape=(5, 4), chunks=(2, 3), dtype="<i2", chunk_key_encoding={"name": "v2", "separator": "/"}, attributes={"_ARRAY_DIMENSIONS": ["p", "q"]})
    a[...] = np.arange(20).reshape(5, 4) - 10
    a = root.create_array("unicode", shape=(3,), dtype="<U4", attributes={"_ARRAY_DIMENSIONS": ["r"]})
    a[...] = np.array(["ab", "çé", "wxyz"])
    a = root.create_array("flags", shape=(4,), dtype="|b1", attributes={"_ARRAY_DIMENSIONS": ["s"]})
    a[...] = [True, False, False, True]
    a = root.create_array("no_dims", shape=(2, 2), dtype="<u4")
    a[...] = [[1, 2], [3, 4]]
    a = root.create_array("missing_chunks", shape=(6,), chunks=(2,), dtype="<f4", fill_value=np.float32(-9.5), attributes={"_ARRAY_DIMENSIONS": ["t6"]})
    a[2:4] = [1.0, 2.0]
    files.append(entry(name, "zarr", path, "zarr", "directory store, v2: 0-d array, '/' chunk keys, unicode <U4, bool, no _ARRAY_DIMENSIONS, chunks never written", url=zarr_url(path, "zarr")))

    name = "zarr_zip.zip"
    path = os.path.join(out, name)
    store = zarr.storage.ZipStore(path, mode="w")
    root = zarr.open_group(store, mode="w", zarr_format=2)
    # attributes given at creation: a zip entry cannot be rewritten
    a = root.create_array("v", shape=(4, 4), chunks=(2, 2), dtype="<i4", attributes={"_ARRAY_DIMENSIONS": ["a", "b"], "units": "m"})
    a[...] = np.arange(16).reshape(4, 4)
    g = root.create_group("g", attributes={"level": 2})
    w = g.create_array("w", shape=(3,), dtype="<f8", attributes={"_ARRAY_DIMENSIONS": ["c"]})
    w[...] = [0.5, 1.5, 2.5]
    store.close()
    files.append(entry(name, "zarr", path, "zarr", "zip store, v2", url=zarr_url(path, "zarr", "zip")))

    # a store that is one array (zarr.save): no root group (issue 31)
    name = "zarr_root_array.zarr"
    path = os.path.join(out, name)
    a = zarr.create_array(path, shape=(3, 4), chunks=(2, 2), dtype="<i4", fill_value=-1, zarr_format=2, attributes={"_ARRAY_DIMENSIONS": ["y", "x"], "units": "m"})
    a[:2, :] = np.arange(8).reshape(2, 4)
    files.append(entry(name, "zarr", path, "zarr", "directory store, v2, whose root is one array (zarr.save): a dataset of that one variable, named as the store", url=zarr_url(path, "zarr")))
    return files


def zarr3_files(out):
    """Zarr v3 stores as zarr-python 3 and xarray write them (issue 16)."""
    import warnings

    import numcodecs.zarr3 as nz
    import zarr
    from zarr.codecs import BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec, TransposeCodec, ZstdCodec

    warnings.simplefilter("ignore")  # zarr-python 3's warnings on numcodecs.* and fixed-length strings
    files = []
    name = "zarr3_codecs.zarr"
    path = os.path.join(out, name)
    root = zarr.open_group(path, mode="w", zarr_format=3)
    root.attrs.update({"title": "one array per Zarr v3 codec", "n": 3, "x": 0.5})
    r = rng(50)
    shape, chunks, dims = (7, 5), (3, 4), ["y", "x"]
    arrays = [
        ("gzip", "i2", dict(compressors=GzipCodec(level=5))),
        ("zstd", "f4", dict(compressors=ZstdCodec(level=3, checksum=True))),
        ("blosc_lz4_shuf", "f8", dict(compressors=BloscCodec(cname="lz4", clevel=5, shuffle="shuffle"))),
        ("blosc_zstd_bitshuf", "i4", dict(compressors=BloscCodec(cname="zstd", clevel=3, shuffle="bitshuffle"))),
        ("crc32c", "u2", dict(compressors=[ZstdCodec(level=1), Crc32cCodec()])),
        ("transpose_big", "i8", dict(filters=[TransposeCodec(order=[1, 0])], serializer=BytesCodec(endian="big"), compressors=None)),
        ("nc_delta_zlib", "i4", dict(filters=[nz.Delta(dtype="<i4")], compressors=[nz.Zlib(level=3)])),
        ("nc_bz2", "f8", dict(compressors=[nz.BZ2(level=9)])),
        ("nc_lzma", "i8", dict(compressors=[nz.LZMA(preset=1)])),
        ("nc_fixedscaleoffset", "f8", dict(filters=[nz.FixedScaleOffset(offset=10, scale=100, dtype="<f8", astype="<i4")], compressors=None)),
        ("nc_bitround", "f4", dict(filters=[nz.BitRound(keepbits=8)], compressors=[ZstdCodec(level=3)])),
        ("nc_shuffle", "i8", dict(filters=[], compressors=[nz.Shuffle(elementsize=8), nz.Zlib(level=1)])),
        ("half", "float16", dict(compressors=None)),
    ]
    for aname, dt, kw in arrays:
        if dt[0] == "f":
            data = r.normal(0, 50, shape).astype(dt)
        else:
            info = np.iinfo(dt)
            data = r.integers(max(info.min, -30000), min(info.max, 30000), shape).astype(dt)
        z = root.create_array(aname, shape=shape, chunks=chunks, dtype=dt, dimension_names=dims, **kw)
        z[...] = data
    sh = root.create_array("sharded", shape=(10, 12), chunks=(2, 3), shards=(4, 6), dtype="f4", dimension_names=["row", "col"], fill_value=np.nan, compressors=ZstdCodec(level=3))
    sh[:7, :9] = r.normal(0, 1, (7, 9)).astype("f4")
    st = root.create_array(
        "shard_start", shape=(9, 7), chunks=(4, 4), dtype="i8", dimension_names=["r", "c"], fill_value=-5, compressors=None,
        serializer=ShardingCodec(chunk_shape=(2, 2), index_location="start", codecs=[BytesCodec(endian="big"), GzipCodec(level=4)], index_codecs=[BytesCodec(endian="little")]),
    )
    st[:5, :3] = np.arange(15).reshape(5, 3) - 7
    files.append(entry(name, "zarr3", path, "zarr", "directory store, v3: one array per codec (gzip, zstd with checksum, blosc, crc32c, transpose + big-endian bytes, numcodecs.delta/zlib/bz2/lzma/fixedscaleoffset/bitround/shuffle), float16, sharded (index at end with crc32c, at start without), partial shards", url=zarr_url(path, "zarr,v3")))

    name = "zarr3_types.zarr"
    path = os.path.join(out, name)
    root = zarr.open_group(path, mode="w", zarr_format=3)
    for dt in ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8"]:
        info = np.iinfo(dt) if dt[0] in "iu" else np.finfo(dt)
        z = root.create_array(dt, shape=(4,), dtype=dt, dimension_names=["four"])
        z[...] = np.array([info.min, 0, 1, info.max], dtype=dt)
    z = root.create_array("flags", shape=(5,), chunks=(2,), dtype=bool, dimension_names=["five"])
    z[...] = [True, False, True, True, False]
    z = root.create_array("vlen", shape=(3,), dtype=str, dimension_names=["three"])
    z[...] = ["a", "bé", "ccc"]
    z = root.create_array("fixed", shape=(3,), dtype="S4", dimension_names=["three"])
    z[...] = [b"ab", b"cdef", b""]
    z = root.create_array("ucs", shape=(3,), dtype="U3", dimension_names=["three"])
    z[...] = ["x", "yz", "élé"]
    z = root.create_array("nanfill", shape=(4,), chunks=(2,), dtype="f8", fill_value=np.nan, dimension_names=["four"])
    z[:2] = [1.5, 2.5]
    z = root.create_array("scalar", shape=(), dtype="i4", fill_value=-9)
    z[...] = 42
    z = root.create_array("v2keys", shape=(7,), chunks=(3,), dtype="i2", fill_value=-1, chunk_key_encoding={"name": "v2", "separator": "."}, dimension_names=["seven"])
    z[:5] = [1, 2, 3, 4, 5]
    g = root.create_group("sub", attributes={"level": 2})
    z = g.create_array("t", shape=(12,), chunks=(3,), shards=(6,), dtype="f8", dimension_names=["t12"])
    z[...] = np.linspace(0, 1, 12)
    zarr.consolidate_metadata(path)
    files.append(entry(name, "zarr3", path, "zarr", "directory store, v3: every numeric type at its limits, bool, vlen/fixed/UCS-4 strings, NaN fill, 0-d, v2 chunk keys, nested group with a sharded array, consolidated metadata", url=zarr_url(path, "zarr,v3")))

    name = "zarr3_zip.zip"
    path = os.path.join(out, name)
    store = zarr.storage.ZipStore(path, mode="w")
    root = zarr.open_group(store, mode="w", zarr_format=3)
    a = root.create_array("x", shape=(8,), chunks=(2,), shards=(4,), dtype="f8", dimension_names=["t"], attributes={"units": "s"})
    a[...] = np.arange(8) / 4
    store.close()
    files.append(entry(name, "zarr3", path, "zarr", "zip store, v3, sharded", url=zarr_url(path, "zarr,v3", "zip")))

    name = "xr_zarr3.zarr"
    path = os.path.join(out, name)
    xarray_dataset().to_zarr(path, zarr_format=3, consolidated=True, mode="w")
    files.append(entry(name, "xarray/zarr", path, "zarr", "to_zarr(zarr_format=3), consolidated metadata", url=zarr_url(path, "zarr,v3")))
    return files


def zarr_url(path, mode, store="file"):
    return f"file://{os.path.abspath(path)}#mode={mode},{store}"


def build(out):
    """Write the whole corpus into `out`; return the manifest (a list of entries)."""
    files = []
    for writer in [h5py_files, h5netcdf_files, netcdf4_files, xarray_files, zarr_files, zarr3_files]:
        files += writer(out)
    return files


def entry(name, writer, path, native, note, url=None):
    return {"name": name, "writer": writer, "path": path, "url": url or path, "native": native, "note": note}
