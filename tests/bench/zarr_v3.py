"""The Python sides of tests/bench/zarr_v3.sh (zarr-python 3, xarray) and its value checks.

  zarr_v3.py xarray_to_v3 SRC.nc OUT.zarr LAYOUT.zarr
      xarray.open_dataset(SRC).to_zarr(OUT, zarr_format=3) with, for every array, the inner
      chunks and shards LAYOUT (the nccopy-rs output of the same job) has, and zstd level 3
  zarr_v3.py xarray_to_nc4 IN.zarr OUT.nc
      xarray.open_zarr(IN).to_netcdf(OUT, engine="netcdf4") with zstd level 3 and the store's
      inner chunks
  zarr_v3.py zarr_reshard IN.zarr OUT.zarr CHUNKS SHARDS LEVEL VARS
      zarr-python 3: zarr.from_array for each of VARS (comma list) with the new inner chunks
      and shards (comma lists) and zstd LEVEL; the other arrays copied as they are
  zarr_v3.py check SRC.nc OUT
      every variable of OUT (a Zarr store or a netCDF file) equals SRC's, raw values (no
      scale/offset, no masking); prints "equal" or what differs, exit 1 on a difference
"""

import json
import os
import sys
import warnings

from same_values import same_values

warnings.simplefilter("ignore")


def layout(store, name):
    """(inner chunks, shards) of array NAME of the v3 store at STORE."""
    meta = json.load(open(os.path.join(store, name, "zarr.json")))
    outer = meta["chunk_grid"]["configuration"]["chunk_shape"]
    first = meta["codecs"][0]
    if first["name"] == "sharding_indexed":
        return tuple(first["configuration"]["chunk_shape"]), tuple(outer)
    return tuple(outer), None


CF_KEYS = ("dtype", "scale_factor", "add_offset", "_FillValue", "units", "calendar")


def xarray_to_v3(src, out, like):
    import xarray as xr
    from zarr.codecs import ZstdCodec

    ds = xr.open_dataset(src)
    enc = {}
    for name in ds.variables:
        inner, shards = layout(like, name)
        # the source's CF encoding (packing, time units, fill) kept, as to_zarr would without
        # an encoding argument, so the stored values are the source's
        e = {k: v for k, v in ds[name].encoding.items() if k in CF_KEYS}
        e.update({"chunks": inner, "compressors": [ZstdCodec(level=3)]})
        if shards:
            e["shards"] = shards
        enc[name] = e
    ds.to_zarr(out, mode="w", zarr_format=3, encoding=enc, consolidated=False)


def xarray_to_nc4(src, out):
    import xarray as xr

    ds = xr.open_zarr(src, consolidated=False)
    enc = {}
    for name in ds.variables:
        inner, _ = layout(src, name)
        e = {k: v for k, v in ds[name].encoding.items() if k in CF_KEYS}
        e.update({"compression": "zstd", "complevel": 3, "chunksizes": inner})
        enc[name] = e
    ds.to_netcdf(out, engine="netcdf4", encoding=enc)


def zarr_reshard(src, out, chunks, shards, level, names):
    import zarr
    from zarr.codecs import ZstdCodec

    chunks = tuple(int(x) for x in chunks.split(","))
    shards = tuple(int(x) for x in shards.split(","))
    names = names.split(",")
    g = zarr.open_group(src, mode="r")
    o = zarr.open_group(out, mode="w", zarr_format=3)
    o.attrs.update(dict(g.attrs))
    for name, a in g.arrays():
        if name in names:
            kw = dict(chunks=chunks, shards=shards, compressors=[ZstdCodec(level=int(level))])
        else:
            kw = dict(chunks="keep", shards="keep", compressors="keep")
        zarr.from_array(o.store, name=name, data=a, zarr_format=3, **kw)


def check(src, out):
    import netCDF4

    nc = netCDF4.Dataset(src)
    nc.set_auto_maskandscale(False)
    if out.endswith(".nc"):
        o = netCDF4.Dataset(out)
        o.set_auto_maskandscale(False)
        get = lambda n: o[n][...]  # noqa: E731
    else:
        import zarr

        g = zarr.open_group(out, mode="r")
        get = lambda n: g[n][...]  # noqa: E731
    return same_values(nc, get)


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "xarray_to_v3":
        xarray_to_v3(*args)
    elif cmd == "xarray_to_nc4":
        xarray_to_nc4(*args)
    elif cmd == "zarr_reshard":
        zarr_reshard(*args)
    elif cmd == "check":
        sys.exit(check(*args))
    else:
        sys.exit("unknown command " + cmd)
