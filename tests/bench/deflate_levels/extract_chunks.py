#!/usr/bin/env python3
"""Write the raw chunks of an unfiltered netCDF-4 file's tas, psl and zg500 (every Nth time
step) as records: u32 LE element size, u32 LE length, the chunk's bytes. Input for
deflate-levels (src/main.rs). Usage: extract_chunks.py IN.nc OUT.bin [EVERY]"""
import struct
import sys

import h5py

src, dst = sys.argv[1], sys.argv[2]
every = int(sys.argv[3]) if len(sys.argv) > 3 else 1
with h5py.File(src, "r") as f, open(dst, "wb") as out:
    for name in ("tas", "psl", "zg500"):
        d = f[name]
        for t in range(0, d.shape[0], every):
            mask, raw = d.id.read_direct_chunk((t, 0, 0))
            if mask or d.compression:
                sys.exit(f"{name}: chunks are filtered; give an unfiltered file")
            out.write(struct.pack("<II", d.dtype.itemsize, len(raw)))
            out.write(raw)
