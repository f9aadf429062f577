#!/usr/bin/env bash
# Many files as one (issue 34), side by side in one run:
#   references for many small files: ncdump-rs --kerchunk IN1 IN2 ... against kerchunk
#   (SingleHdf5ToZarr / NetCDF3ToZarr + MultiZarrToZarr) and VirtualiZarr (open_virtual_dataset
#   + xr.concat + .vz.to_kerchunk); joins: nccopy-rs IN1 ... OUT against NCO's ncrcat.
#
# Usage: tests/bench/many.sh [-n RUNS] [-j JOBS] TOOLS_DIR [WORK_DIR]
#   TOOLS_DIR   directory holding the release ncdump-rs and nccopy-rs (e.g. target/release)
#   WORK_DIR    where the files are made (kept between runs) and the outputs written
#               (default /tmp/many_bench)
#   -n RUNS     timed runs of ours and of ncrcat (default 3, medians reported); kerchunk and
#               VirtualiZarr take minutes at these counts and run once
#   -j JOBS     comma list of jobs (default: all):
#               refs_nc4   references for NC4 netCDF-4 files (default 10000; NC4=...)
#               refs_nc3   references for NC3 classic files of 24 records each (default 1000)
#               join_nc3   nccopy-rs against ncrcat joining the NC3 classic files
#               join_nc4   nccopy-rs against ncrcat joining the first 1000 netCDF-4 files
#
# The files come from tests/bench/many_files.py make (tas and pr, 32 x 64 floats per step;
# netCDF-4 deflated with one step per file, classic with 24 records per file). Columns: wall
# seconds (median for ours and ncrcat), peak RSS in MiB, the number of references each tool
# made, the ratios (theirs / ours), and same: for references, ours agree with theirs chunk key
# by chunk key (file, offset, length) and xarray through ours equals the files at 20 steps
# (many_files.py same); for joins, ncdump of the two outputs' data is identical.
# Targets: references >= 20x faster than kerchunk and VirtualiZarr with <= 1/10 of their
# peak memory; joins >= 3x faster than ncrcat.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/bench/bench_lib.sh
. "$here/bench_lib.sh"
runs=3
jobs=refs_nc4,refs_nc3,join_nc3,join_nc4
bench_options "$@"
shift $((OPTIND - 1))
tools=${1:?usage: $0 [-n RUNS] [-j JOBS] TOOLS_DIR [WORK_DIR]}
work=${2:-/tmp/many_bench}
nc4_count=${NC4:-10000}
nc3_count=${NC3:-1000}
ncdump="$tools/ncdump-rs"
nccopy="$tools/nccopy-rs"
py="python3 $here/many_files.py"
for t in "$ncdump" "$nccopy"; do
    [ -x "$t" ] || { echo "no $t (cargo build --release)" >&2; exit 2; }
done
command -v ncrcat >/dev/null || { echo "needs ncrcat (apt-get install nco)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)" >&2; exit 2; }
# the references jobs run kerchunk and VirtualiZarr; the joins need only the files' maker
case ",$jobs," in
*,refs_*)
    python3 -c 'import kerchunk, virtualizarr, obstore, xarray, netCDF4, ujson' ||
        { echo "needs python3 with kerchunk virtualizarr obstore xarray netCDF4 ujson" >&2; exit 2; }
    ;;
*) python3 -c 'import netCDF4, numpy' || { echo "needs python3 with netCDF4" >&2; exit 2; } ;;
esac
mkdir -p "$work"

# files KIND COUNT: make WORK/KIND_COUNT once (kept), print its directory
files() {
    local d="$work/$1_$2"
    if [ "$(find "$d" -name '*.nc' 2>/dev/null | wc -l)" != "$2" ]; then
        rm -rf "$d"
        $py make "$1" "$2" "$d"
    fi
    echo "$d"
}

# timed NAME CMD...: run CMD under GNU time (stdout to WORK/NAME.out), print "wall rss_mib"
timed() {
    local name=$1
    shift
    /usr/bin/time -f "%e %M" -o "$work/$name.time" "$@" >"$work/$name.out" 2>"$work/$name.err" ||
        { cat "$work/$name.err" >&2; return 1; }
    awk '{printf "%s %.0f\n", $1, $2 / 1024}' "$work/$name.time"
}

refs() { python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["refs"]))' "$1"; }

# ours RUNS NAME CMD...: RUNS timed runs, print "median_wall rss_of_last"
ours() {
    local n=$1 name=$2
    shift 2
    : >"$work/$name.list"
    for _ in $(seq "$n"); do append_time "$work/$name.list" timed "$name" "$@"; done
    echo "$(cut -d' ' -f1 "$work/$name.list" | median_lines) $(tail -1 "$work/$name.list" | cut -d' ' -f2)"
}

refs_job() {
    local kind=$1 count=$2 d o k v
    d=$(files "$kind" "$count")
    mapfile -t inputs < <(find "$d" -name '*.nc' | sort)
    read -r o orss < <(ours "$runs" ours_$kind "$ncdump" --kerchunk "${inputs[@]}")
    read -r k krss < <(timed kc_$kind $py kerchunk "$kind" "$d" "$work/kc_$kind.json")
    read -r v vrss < <(timed vz_$kind $py virtualizarr "$kind" "$d" "$work/vz_$kind.json")
    local same=no
    if [ "$($py same "$work/ours_$kind.out" "$work/kc_$kind.json" "$d")" = yes ] &&
        [ "$($py same "$work/ours_$kind.out" "$work/vz_$kind.json" "$d")" = yes ]; then
        same=yes
    fi
    awk -v j="refs_$kind" -v f="$count" -v o="$o" -v k="$k" -v v="$v" -v or="$orss" -v kr="$krss" \
        -v vr="$vrss" -v no="$(refs "$work/ours_$kind.out")" -v nk="$(refs "$work/kc_$kind.json")" \
        -v nv="$(refs "$work/vz_$kind.json")" -v same="$same" \
        'BEGIN {printf "%-9s %6d %8.2f %8.2f %8.2f %7.0fx %7.0fx %14s %8.0fx %8.0fx %20s %5s\n",
            j, f, o, k, v, k / o, v / o, or "/" kr "/" vr, kr / or, vr / or, no "/" nk "/" nv, same}'
}

join_job() {
    local kind=$1 count=$2 d o n
    d=$(files "$kind" "$count")
    mapfile -t inputs < <(find "$d" -name '*.nc' | sort | head -1000)
    local out="$work/join_$kind.nc" theirs="$work/ncrcat_$kind.nc"
    read -r o orss < <(ours "$runs" join_ours_$kind sh -c 'rm -f "$0"; exec "$@" "$0"' "$out" \
        "$nccopy" "${inputs[@]}")
    read -r n nrss < <(ours "$runs" join_ncrcat_$kind ncrcat -O "${inputs[@]}" "$theirs")
    local same=no
    if cmp -s <(ncdump "$out" | sed -n '/^data:/,$p') <(ncdump "$theirs" | sed -n '/^data:/,$p'); then
        same=yes
    fi
    awk -v j="join_$kind" -v f="${#inputs[@]}" -v o="$o" -v n="$n" -v or="$orss" -v nr="$nrss" \
        -v same="$same" 'BEGIN {printf "%-9s %6d %8.2f %8.2f %8s %7.1fx %8s %14s %8s %8s %20s %5s\n",
            j, f, o, n, "-", n / o, "-", or "/" nr, "-", "-", "-", same}'
}

printf '%-9s %6s %8s %8s %8s %8s %8s %14s %9s %9s %20s %5s\n' job files ours_s kc/nco_s vz_s \
    kc/ours vz/ours rss_o/k/v_MiB kc_rss/o vz_rss/o refs_o/k/v same
for job in ${jobs//,/ }; do
    case $job in
        refs_nc4) refs_job nc4 "$nc4_count" ;;
        refs_nc3) refs_job nc3 "$nc3_count" ;;
        join_nc3) join_job nc3 "$nc3_count" ;;
        join_nc4) join_job nc4 "$nc4_count" ;;
        *) echo "unknown job $job" >&2; exit 2 ;;
    esac
done
