#!/usr/bin/env python3
"""Write the periodic float32 field of nc-filters' zlib_levels tests (180 x 360, repeating
every 360 values) as one deflate-levels record, and print stock zlib's sizes for it.
Usage: periodic_field.py OUT.bin"""
import struct
import sys
import zlib

import numpy as np

i = np.arange(180 * 360, dtype=np.uint64)
h = (i * np.uint64(2654435761)) % np.uint64(1000)
v = (np.float32(250) + (i // 360).astype(np.float32) * np.float32(0.25)
     + (i % 360).astype(np.float32) * np.float32(0.1) + h.astype(np.float32) * np.float32(1e-4))
b = v.astype("<f4").tobytes()
with open(sys.argv[1], "wb") as out:
    out.write(struct.pack("<II", 4, len(b)) + b)
sh = np.frombuffer(b, dtype=np.uint8).reshape(-1, 4).T.copy().tobytes()
print("zlib", zlib.ZLIB_RUNTIME_VERSION, "shuffled", [len(zlib.compress(sh, lv)) for lv in range(1, 10)])
print("zlib", zlib.ZLIB_RUNTIME_VERSION, "plain", [len(zlib.compress(b, lv)) for lv in range(1, 10)])
