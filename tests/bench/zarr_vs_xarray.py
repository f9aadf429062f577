#!/usr/bin/env python3
"""Helper of zarr_vs_xarray.sh: the xarray side of the NCZarr benchmark.

  zarr_vs_xarray.py write CASE SRC.nc OUT.zarr   xarray to_zarr with CASE's numcodecs codecs
  zarr_vs_xarray.py compare A.zarr B.zarr        every variable of both stores, value by value

CASE: `zstd3` (compressor Zstd(3)) or `shuffle_zlib1` (filters [Shuffle(itemsize)],
compressor Zlib(1)). The source is opened without CF decoding (mask_and_scale=False,
decode_times=False) so that xarray writes the stored types, as nccopy-rs does, and chunks
are kept as in the netCDF file (xarray would otherwise write one chunk per variable).
"""

import sys

import numcodecs
import numpy as np
import xarray as xr


def encoding_for(case, ds):
    enc = {}
    for name, var in ds.variables.items():
        e = {}
        if case == "zstd3":
            e["compressor"] = numcodecs.Zstd(level=3)
        elif case == "shuffle_zlib1":
            e["compressor"] = numcodecs.Zlib(level=1)
            e["filters"] = [numcodecs.Shuffle(elementsize=var.dtype.itemsize)]
        else:
            raise SystemExit(f"unknown case {case!r} (zstd3 or shuffle_zlib1)")
        chunks = var.encoding.get("chunksizes")
        if chunks and var.encoding.get("contiguous") is not True:
            e["chunks"] = tuple(chunks)
        enc[name] = e
    return enc


def write(case, src, out):
    ds = xr.open_dataset(src, mask_and_scale=False, decode_times=False)
    enc = encoding_for(case, ds)
    ds.to_zarr(out, mode="w", encoding=enc, consolidated=False)
    ds.close()


def compare(a, b):
    da = xr.open_zarr(a, consolidated=False, decode_cf=False)
    db = xr.open_zarr(b, consolidated=False, decode_cf=False)
    names = sorted(set(da.variables) | set(db.variables))
    bad = []
    total = 0
    for n in names:
        if n not in da.variables or n not in db.variables:
            bad.append(f"{n}: only in {'first' if n in da.variables else 'second'} store")
            continue
        va = da[n].values
        vb = db[n].values
        if va.shape != vb.shape or va.dtype != vb.dtype:
            bad.append(f"{n}: {va.dtype}{va.shape} vs {vb.dtype}{vb.shape}")
            continue
        nan = va.dtype.kind == "f"
        if not np.array_equal(va, vb, equal_nan=nan):
            diff = np.count_nonzero(va != vb)
            bad.append(f"{n}: {diff} values differ")
        total += va.size
    if bad:
        print("values DIFFER:", "; ".join(bad))
        return 1
    print(f"values agree: {len(names)} variables, {total} values")
    return 0


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3], sys.argv[4])
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        return compare(sys.argv[2], sys.argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
