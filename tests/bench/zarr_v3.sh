#!/usr/bin/env bash
# Zarr v3 (issue 16): nccopy-rs beside zarr-python 3 + xarray and the zarrs tools.
#
# Usage: tests/bench/zarr_v3.sh [-n RUNS] [-j JOBS] CORPUS_DIR TOOLS_DIR [WORK_DIR]
#   CORPUS_DIR  output of ../shared/bench/make_corpus.py (corpus_${SIZE}_raw.nc is used)
#   TOOLS_DIR   directory holding the release nccopy-rs (e.g. target/release)
#   WORK_DIR    scratch directory for the stores (default /tmp/zarr_v3_bench), emptied first
#   -n RUNS     timed runs per tool per job, tools alternating (default 3); medians reported
#   -j JOBS     comma list of jobs (default to_v3,to_nc4,reshard)
# Environment:
#   SIZE            corpus size, S or M (default M)
#   PYTHON          the Python with zarr 3, xarray, netCDF4 (default python3)
#   ZARRS_REENCODE  zarrs_reencode from `cargo install zarrs_tools` (default: found on PATH;
#                   missing: its rows say so)
#
# Jobs (the input of to_nc4 and reshard is the store nccopy-rs writes in to_v3, made once,
# untimed, before them):
#   to_v3    netCDF-4 corpus -> Zarr v3, inner chunks as the input's (1x180x360), shards of
#            about 128 MiB (--shard auto), zstd level 3:
#              nccopy-rs -F '*,32015,3' --shard auto RAW file://OUT#mode=zarr,v3,file
#              xarray: open_dataset(RAW).to_zarr(OUT, zarr_format=3) with the same chunks,
#                      shards (read from nccopy-rs's output) and ZstdCodec(level=3)
#   to_nc4   that v3 store -> netCDF-4, zstd 3, the store's inner chunks:
#              nccopy-rs V3 OUT.nc
#              xarray: open_zarr(V3).to_netcdf(OUT.nc, engine="netcdf4", zstd 3)
#   reshard  that v3 store -> v3 with inner chunks 8x180x360, shards 64x180x360 (the last one
#            partial) and zstd level 1 for tas, psl and zg500 (the coordinates as they are):
#              nccopy-rs -F 'tas|psl|zg500,32015,1' -c VAR:8,180,360 --shard VAR:64,180,360
#              zarrs_reencode --chunk-shape 8,180,360 --shard-shape 64,180,360 zstd 1, once per
#                             array (the coordinates are not copied; times and CPU summed,
#                             peak RSS the largest)
#              zarr-python: zarr.from_array per array with the same chunks, shards and codec
# Each row: median wall seconds, median CPU seconds (user + system), median peak RSS, the
# output's size, and a value check of the output against the netCDF-4 source (raw values).
# The machine may be shared: wall times are noisy, CPU seconds and sizes less so.
set -euo pipefail

runs=3
jobs=to_v3,to_nc4,reshard
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_lib.sh"
bench_options "$@"
shift $((OPTIND - 1))
corpus=${1:?usage: $0 [-n RUNS] [-j JOBS] CORPUS_DIR TOOLS_DIR [WORK_DIR]}
tools=${2:?usage: $0 [-n RUNS] [-j JOBS] CORPUS_DIR TOOLS_DIR [WORK_DIR]}
work=${3:-/tmp/zarr_v3_bench}
size=${SIZE:-M}
src="$corpus/corpus_${size}_raw.nc"
nccopy="$tools/nccopy-rs"
py=${PYTHON:-python3}
reencode=${ZARRS_REENCODE:-$(command -v zarrs_reencode || true)}

[ -f "$src" ] || { echo "no $src" >&2; exit 2; }
[ -x "$nccopy" ] || { echo "no $nccopy (cargo build --release -p nccopy-rs)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)" >&2; exit 2; }
"$py" -c 'import xarray, zarr, netCDF4; assert int(zarr.__version__.split(".")[0]) >= 3' 2>/dev/null ||
    { echo "needs $py with zarr 3, xarray and netCDF4 (set PYTHON)" >&2; exit 2; }

mkdir -p "$work"
rm -rf "${work:?}"/*
echo "source: $src ($(du -m "$src" | cut -f1) MB); nccopy-rs: $nccopy; cpus: $(nproc)"
echo "python: $("$py" -c 'import xarray, zarr, numcodecs, numpy; print("xarray", xarray.__version__, "zarr", zarr.__version__, "numcodecs", numcodecs.__version__, "numpy", numpy.__version__)')"
echo "zarrs_reencode: ${reencode:-missing}${reencode:+ ($("$reencode" --version 2>/dev/null || echo '?'))}"

url() { echo "file://$1#mode=zarr,v3,file"; }
big="tas psl zg500"
input="$work/input_v3.zarr"

# one TOOL JOB OUT: run TOOL's side of JOB once, writing OUT; prints "wall cpu rss_kb"
one() {
    local tool=$1 job=$2 out=$3 tf="$work/t.time" w=0 c=0 m=0
    rm -rf "$out"
    sync
    case $tool/$job in
        nccopy-rs/to_v3)
            /usr/bin/time -f '%e %U %S %M' -o "$tf" "$nccopy" -F '*,32015,3' --shard auto "$src" "$(url "$out")" ;;
        xarray/to_v3)
            /usr/bin/time -f '%e %U %S %M' -o "$tf" "$py" "$here/zarr_v3.py" xarray_to_v3 "$src" "$out" "$input" ;;
        nccopy-rs/to_nc4)
            /usr/bin/time -f '%e %U %S %M' -o "$tf" "$nccopy" "$input" "$out" ;;
        xarray/to_nc4)
            /usr/bin/time -f '%e %U %S %M' -o "$tf" "$py" "$here/zarr_v3.py" xarray_to_nc4 "$input" "$out" ;;
        nccopy-rs/reshard)
            local args=()
            for v in $big; do args+=(-c "$v:8,180,360" --shard "$v:64,180,360"); done
            /usr/bin/time -f '%e %U %S %M' -o "$tf" "$nccopy" -F 'tas|psl|zg500,32015,1' "${args[@]}" "$input" "$(url "$out")" ;;
        zarr-python/reshard)
            /usr/bin/time -f '%e %U %S %M' -o "$tf" "$py" "$here/zarr_v3.py" zarr_reshard "$input" "$out" \
                8,180,360 64,180,360 1 tas,psl,zg500 ;;
        zarrs_reencode/reshard)
            mkdir -p "$out"
            cp "$input/zarr.json" "$out/"
            for v in $big; do
                /usr/bin/time -f '%e %U %S %M' -o "$tf.$v" "$reencode" --chunk-shape 8,180,360 \
                    --shard-shape 64,180,360 \
                    --bytes-to-bytes-codecs '[{"name":"zstd","configuration":{"level":1,"checksum":false}}]' \
                    "$input/$v" "$out/$v"
            done
            # summed wall and CPU, largest RSS
            for v in $big; do cat "$tf.$v"; done | awk '{w+=$1; u+=$2; s+=$3; if ($4>m) m=$4} END {print w, u, s, m}' >"$tf" ;;
    esac >/dev/null 2>>"$work/stderr.log"
    read -r w u s m <"$tf"
    echo "$w $(python3 -c "print(f'{$u + $s:.2f}')") $m"
}

if [[ ,$jobs, == *,to_nc4,* || ,$jobs, == *,reshard,* ]]; then
    "$nccopy" -F '*,32015,3' --shard auto "$src" "$(url "$input")"
fi

status=0
printf '\n%-8s %-15s %8s %8s %8s %9s  %s\n' job tool wall_s cpu_s rss_MB size_MB values
for job in ${jobs//,/ }; do
    case $job in
        to_v3 | to_nc4) sides="nccopy-rs xarray" ;;
        reshard) sides="nccopy-rs zarrs_reencode zarr-python" ;;
        *) echo "unknown job $job" >&2; exit 2 ;;
    esac
    if [ "$job" = to_v3 ] && [ ! -d "$input" ]; then
        # xarray's side takes the layout of nccopy-rs's output
        "$nccopy" -F '*,32015,3' --shard auto "$src" "$(url "$input")"
    fi
    for tool in $sides; do : >"$work/$job.$tool.times"; done
    for ((r = 0; r < runs; r++)); do
        for tool in $sides; do
            [ "$tool" = zarrs_reencode ] && [ -z "$reencode" ] && continue
            ext=zarr
            [ "$job" = to_nc4 ] && ext=nc
            append_time "$work/$job.$tool.times" one "$tool" "$job" "$work/$job.$tool.$ext"
        done
    done
    for tool in $sides; do
        ext=zarr
        [ "$job" = to_nc4 ] && ext=nc
        out="$work/$job.$tool.$ext"
        if [ "$tool" = zarrs_reencode ] && [ -z "$reencode" ]; then
            printf '%-8s %-15s %s\n' "$job" "$tool" "missing (set ZARRS_REENCODE)"
            continue
        fi
        if grep -q failed "$work/$job.$tool.times"; then
            printf '%-8s %-15s %s\n' "$job" "$tool" "FAILED (see $work/stderr.log)"
            status=1
            continue
        fi
        mapfile -t rows <"$work/$job.$tool.times"
        walls=(); cpus=(); rss=()
        for row in "${rows[@]}"; do
            read -r w c m <<<"$row"
            walls+=("$w"); cpus+=("$c"); rss+=("$((m / 1024))")
        done
        if [ "$tool" = zarrs_reencode ]; then
            # only the three big arrays were copied
            values=$("$py" - "$src" "$out" <<'EOF'
import sys, zarr, netCDF4, numpy as np, warnings
warnings.simplefilter("ignore")
nc = netCDF4.Dataset(sys.argv[1]); nc.set_auto_maskandscale(False)
bad = [n for n in ("tas", "psl", "zg500")
       if not np.array_equal(zarr.open_array(sys.argv[2] + "/" + n, mode="r")[...], nc[n][...])]
print("equal (tas, psl, zg500)" if not bad else "DIFFER: " + " ".join(bad))
EOF
)
        else
            values=$("$py" "$here/zarr_v3.py" check "$src" "$out" || true)
        fi
        [[ $values == equal* ]] || status=1
        printf '%-8s %-15s %8s %8s %8s %9s  %s\n' "$job" "$tool" "$(median "${walls[@]}")" "$(median "${cpus[@]}")" \
            "$(median "${rss[@]}")" "$(du -sm "$out" | cut -f1)" "$values"
    done
done
exit $status
