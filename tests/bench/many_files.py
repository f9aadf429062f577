"""Helpers of tests/bench/many.sh (issue 34: many files as one).

    many_files.py make KIND N DIR       N small files in DIR (f00000.nc ...):
        nc4  netCDF-4, one daily step each: tas and pr (time, lat 32, lon 64) float,
             deflate 1 + shuffle, chunks of one step
        nc3  64-bit offset classic, 24 hourly records each of tas and pr (record variables)
    many_files.py kerchunk KIND DIR OUT    SingleHdf5ToZarr / NetCDF3ToZarr for every file, then
                                           MultiZarrToZarr(concat_dims=["time"]), written as JSON
    many_files.py virtualizarr KIND DIR OUT  open_virtual_dataset (HDFParser / NetCDF3Parser)
                                           for every file, xr.concat along time, .vz.to_kerchunk
    many_files.py same OURS THEIRS DIR     prints "yes" when the two reference sets give the same
                                           dataset: the same keys, every chunk reference naming the
                                           same file, offset and length, equal array metadata, and
                                           xarray through both equal to the files themselves at
                                           20 time steps spread over the join

Files are sorted by name; times are days since 2000-01-01 and increase across the files.
"""

import glob
import json
import os
import sys
import warnings

warnings.filterwarnings("ignore")


def make(kind, n, d):
    import numpy as np
    import netCDF4

    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(34)
    lat = np.linspace(-88.59375, 88.59375, 32)
    lon = np.arange(64) * 5.625
    steps = 1 if kind == "nc4" else 24
    for i in range(n):
        fmt = "NETCDF4" if kind == "nc4" else "NETCDF3_64BIT_OFFSET"
        ds = netCDF4.Dataset(os.path.join(d, f"f{i:05d}.nc"), "w", format=fmt)
        ds.createDimension("time", None)
        ds.createDimension("lat", 32)
        ds.createDimension("lon", 64)
        t = ds.createVariable("time", "f8", ("time",))
        t.units = "days since 2000-01-01"
        t.calendar = "standard"
        ds.createVariable("lat", "f8", ("lat",))[:] = lat
        ds.createVariable("lon", "f8", ("lon",))[:] = lon
        kw = {}
        if kind == "nc4":
            kw = dict(zlib=True, complevel=1, shuffle=True, chunksizes=(1, 32, 64))
        for name in ("tas", "pr"):
            v = ds.createVariable(name, "f4", ("time", "lat", "lon"), **kw)
            v.units = "K" if name == "tas" else "kg m-2 s-1"
            v[:] = (rng.random((steps, 32, 64)) * 10 + i).astype("f4")
        t[:] = i + np.arange(steps) / steps
        ds.close()


def files_of(d):
    return sorted(glob.glob(os.path.join(d, "*.nc")))


def kerchunk(kind, d, out):
    import ujson
    from kerchunk.combine import MultiZarrToZarr

    if kind == "nc4":
        from kerchunk.hdf import SingleHdf5ToZarr as Single
    else:
        from kerchunk.netCDF3 import NetCDF3ToZarr as Single
    singles = [Single(f, inline_threshold=0).translate() for f in files_of(d)]
    refs = MultiZarrToZarr(singles, concat_dims=["time"], identical_dims=["lat", "lon"]).translate()
    with open(out, "w") as fh:
        ujson.dump(refs, fh)


def virtualizarr(kind, d, out):
    import xarray as xr
    from obstore.store import LocalStore
    from virtualizarr import open_virtual_dataset
    from virtualizarr.registry import ObjectStoreRegistry

    if kind == "nc4":
        from virtualizarr.parsers import HDFParser as Parser
    else:
        from virtualizarr.parsers import NetCDF3Parser as Parser
    registry = ObjectStoreRegistry({"file://": LocalStore()})
    parser = Parser()
    virtual = [
        open_virtual_dataset(
            url="file://" + os.path.abspath(f),
            parser=parser,
            registry=registry,
            loadable_variables=["time", "lat", "lon"],
        )
        for f in files_of(d)
    ]
    joined = xr.concat(virtual, dim="time", coords="minimal", compat="override",
                       combine_attrs="override")
    joined.vz.to_kerchunk(out, format="json")


def open_refs(refs):
    import xarray as xr

    return xr.open_dataset(
        "reference://",
        engine="zarr",
        backend_kwargs={
            "consolidated": False,
            "storage_options": {"fo": refs, "remote_protocol": "file"},
        },
        decode_times=False,
    )


def same(ours_path, theirs_path, d):
    import numpy as np
    import xarray as xr

    ours = json.load(open(ours_path))["refs"]
    theirs = json.load(open(theirs_path))["refs"]
    why = []
    # chunk keys (VAR/i.j.k) must agree; the metadata of arrays whose chunks are references too
    # (inline arrays, the coordinates, may be encoded differently: their values are compared)
    def chunks(refs):
        return {k for k in refs if not os.path.basename(k).startswith(".")}

    if chunks(ours) != chunks(theirs):
        why.append(f"chunk keys differ: {sorted(chunks(ours) ^ chunks(theirs))[:5]}")
    referenced = set()
    for k in sorted(chunks(ours) & chunks(theirs)):
        a, b = ours[k], theirs[k]
        if isinstance(a, list) and isinstance(b, list):
            referenced.add(os.path.dirname(k))
            if (os.path.basename(a[0]), a[1:]) != (os.path.basename(b[0]), b[1:]):
                why.append(f"{k}: {a} != {b}")
    for var in sorted(referenced):
        a = json.loads(ours[var + "/.zarray"])
        b = json.loads(theirs[var + "/.zarray"])
        keys = ("shape", "chunks", "dtype", "compressor", "filters", "order")
        if any(a.get(x) != b.get(x) for x in keys):
            why.append(f"{var}/.zarray: {a} != {b}")
    files = files_of(d)
    with open_refs(ours_path) as o:
        t = o["time"].values
        steps = len(t) // len(files)
        for i in np.linspace(0, len(t) - 1, 20).astype(int):
            with xr.open_dataset(files[i // steps], decode_times=False) as f:
                for name in ("time", "tas", "pr"):
                    got = o[name].isel(time=i).values
                    want = f[name].isel(time=i % steps).values
                    if not np.array_equal(got, want):
                        why.append(f"{name} at time {i} differs")
    for w in why[:10]:
        print(w, file=sys.stderr)
    print("no" if why else "yes")


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "make":
        make(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif what == "kerchunk":
        kerchunk(*sys.argv[2:5])
    elif what == "virtualizarr":
        virtualizarr(*sys.argv[2:5])
    elif what == "same":
        same(*sys.argv[2:5])
    else:
        sys.exit(__doc__)
