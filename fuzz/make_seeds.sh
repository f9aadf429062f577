#!/usr/bin/env bash
# Seed corpora for the fuzz targets, made at run time (nothing binary is committed):
#   hdf5_file:    netCDF-4 files of the repository's netCDF-4 CDL files (ncgen-rs -4), and,
#                 when h5py is installed, files h5py writes with libver earliest and latest
#                 (v1/v2 object headers, dense attributes, fixed/extensible array and B-tree v2
#                 chunk indexes, compact/contiguous/chunked layouts, soft and hard links).
#   filter_specs: filter lists, -F rules and codec JSON.
#   codec_decode: chunks encoded by each built-in codec (from the netCDF-4 seeds' chunks is
#                 left to the fuzzer; a few hand-made headers are enough to start).
# Usage: bash fuzz/make_seeds.sh [TOOLS_DIR]   (TOOLS_DIR defaults to target/release)
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLS=${1:-target/release}
C=fuzz/corpus
mkdir -p "$C/hdf5_file" "$C/filter_specs" "$C/codec_decode"

n=0
for cdl in testdata/cdl/nc4/*.cdl testdata/cdl/nccopy/*.cdl; do
    [ -f "$cdl" ] || continue
    out="$C/hdf5_file/$(basename "${cdl%.cdl}").nc"
    # seeds stay small: the fuzzer mutates bytes, big files only slow it down
    if "$TOOLS/ncgen-rs" -4 -o "$out" "$cdl" 2>/dev/null && [ "$(stat -c %s "$out")" -lt 200000 ]; then
        n=$((n + 1))
    else
        rm -f "$out"
    fi
done
echo "hdf5_file: $n files from CDL"

if python3 -c 'import h5py, numpy' 2>/dev/null; then
    python3 - "$C/hdf5_file" <<'PY'
import sys, h5py, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(20)
for libver in ("earliest", "latest"):
    with h5py.File(f"{d}/h5py_{libver}.h5", "w", libver=libver, track_order=True) as f:
        f.attrs["title"] = "seed"
        for i in range(12):  # dense attribute storage with libver latest
            f.attrs[f"a{i}"] = i
        f.create_dataset("contig", data=np.arange(12, dtype="i4").reshape(3, 4))
        f.create_dataset("fixed", data=rng.random((20, 10)), chunks=(5, 5),
                         compression="gzip", shuffle=True, fletcher32=True)
        f.create_dataset("ea", data=np.arange(30, dtype="f4").reshape(10, 3), chunks=(4, 3),
                         maxshape=(None, 3))
        f.create_dataset("bt2", data=np.arange(20, dtype="i8").reshape(4, 5), chunks=(2, 2),
                         maxshape=(None, None))
        f.create_dataset("so", data=rng.integers(0, 1000, 50).astype("i4"), chunks=(10,),
                         scaleoffset=0)
        f.create_dataset("s", data=np.array([b"ab", b"cde"], dtype="S4"))
        f.create_dataset("vs", data=["x", "yz"], dtype=h5py.string_dtype())
        g = f.create_group("g")
        g["hard"] = f["contig"]
        g["soft"] = h5py.SoftLink("/contig")
PY
    echo "hdf5_file: h5py files"
fi

printf '1,5' > "$C/filter_specs/deflate"
printf '2|32015,3' > "$C/filter_specs/pipeline"
printf 'zstd,-1|bzip2,9|32001,0,0,0,0,5,1,1' > "$C/filter_specs/named"
printf '307,0x9u|32015,-3i|32004,2u' > "$C/filter_specs/tagged"
printf '*,32015,3\nv|w,none\n/g/x,1,9' > "$C/filter_specs/rules"
printf '[{"id": "zlib", "level": 1}, {"id": "shuffle", "elementsize": 4}, {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}]' > "$C/filter_specs/codecs"
printf '{"id": "delta", "dtype": "<i4", "astype": "<i2"}' > "$C/filter_specs/delta"

# codec_decode: [codec index][p0 4 bytes][p1 4 bytes][type size | object type << 4][chunk]
for i in 0 1 2 3 4 5 6 7 8 9 10 11; do
    printf "\\x$(printf %02x "$i")\\x01\\x00\\x00\\x00\\x40\\x00\\x00\\x00\\x04" > "$C/codec_decode/hdr$i"
    head -c 64 /dev/zero >> "$C/codec_decode/hdr$i"
done
# LZO streams written by liblzo itself (index 11 is filter 305), with and without PyTables'
# trailer, when Python can load liblzo2 (Debian's liblzo2-2)
if python3 -c 'import ctypes; ctypes.CDLL("liblzo2.so.2")' 2>/dev/null; then
    python3 - "$C/codec_decode" <<'PY'
import ctypes, sys, zlib
d = sys.argv[1]
lzo = ctypes.CDLL("liblzo2.so.2")
# lzo_init(): version, then sizeof short, int, long, lzo_uint32_t, lzo_uint, dict entry,
# char *, lzo_voidp, lzo_callback_t (LP64)
assert lzo.__lzo_init_v2(ctypes.c_uint(lzo.lzo_version()), 2, 4, 8, 4, 8, 8, 8, 8, 48) == 0
wrk = ctypes.create_string_buffer(1 << 20)
datas = [bytes(range(256)) * 4, b"abc" * 300 + bytes(200), bytes((i * i) % 251 for i in range(3000))]
for k, data in enumerate(datas):
    for name, fn in (("1", lzo.lzo1x_1_compress), ("999", lzo.lzo1x_999_compress)):
        dst = ctypes.create_string_buffer(len(data) * 2 + 64)
        n = ctypes.c_size_t(len(dst))
        assert fn(data, ctypes.c_size_t(len(data)), dst, ctypes.byref(n), wrk) == 0
        stream = dst.raw[:n.value]
        # p0 = 1 (complevel), p1 = the chunk's length in 1-byte elements (the target's chunk
        # shape), byte 9: element size 1, object type 4 (a CArray)
        head = bytes([11]) + (1).to_bytes(4, "little") + (len(data)).to_bytes(4, "little") + bytes([0x41])
        trailer = zlib.adler32(data).to_bytes(4, "little") + len(data).to_bytes(4, "little")
        open(f"{d}/lzo{k}_{name}", "wb").write(head + stream)
        open(f"{d}/lzo{k}_{name}_trailer", "wb").write(head + stream + trailer)
PY
fi
# OPeNDAP responses (dap_response): netCDF-C's DAP2 and DAP4 test responses from the
# conformance corpus (SHARED, default ../shared), framed as the target reads them: byte 0 odd
# for DAP2 (u32 LE length + DDS, u32 LE length + DAS, then the .dods), even for DAP4 (.dap)
DAP=${SHARED:-../shared}/conformance/cases
if [ -d "$DAP/dap2/testdata3" ]; then
    mkdir -p "$C/dap_response"
    python3 - "$DAP" "$C/dap_response" <<'PY'
import glob, os, struct, sys
cases, out = sys.argv[1], sys.argv[2]
n = 0
for dds in sorted(glob.glob(f"{cases}/dap2/testdata3/*.dds")):
    base = dds[:-4]
    parts = [open(base + ext, "rb").read() if os.path.exists(base + ext) else b"" for ext in (".dds", ".das", ".dods")]
    if len(parts[2]) > 100_000:
        continue
    blob = b"\x01" + struct.pack("<I", len(parts[0])) + parts[0] + struct.pack("<I", len(parts[1])) + parts[1] + parts[2]
    open(f"{out}/dap2_{os.path.basename(base)}", "wb").write(blob)
    n += 1
for dap in sorted(glob.glob(f"{cases}/dap4/*/*.dap")):
    body = open(dap, "rb").read()
    if len(body) > 100_000:
        continue
    open(f"{out}/dap4_{os.path.basename(dap)}", "wb").write(b"\x00" + body)
    n += 1
print(f"dap_response: {n} responses")
PY
fi
echo "seeds in $C"
