#!/usr/bin/env bash
# Subsets (issue 33): nccopy-rs --dimension against NCO's ncks -d and xarray's
# isel(...).to_netcdf(), cutting 1 % out of the M corpus's variables, timed side by side.
#
# Usage: tests/bench/subset.sh [-n RUNS] [-j JOBS] CORPUS_DIR TOOLS_DIR [WORK_DIR]
#   CORPUS_DIR  output of ../shared/bench/make_corpus.py (corpus_M_raw.nc, corpus_M_d1s.nc)
#   TOOLS_DIR   directory holding the release nccopy-rs (e.g. target/release)
#   WORK_DIR    where the outputs are written (default /tmp/subset_bench); emptied first
#   -n RUNS     timed runs of each tool per job, alternating (default 5; medians reported)
#   -j JOBS     comma list of jobs (default: all):
#               time_raw   --dimension time,0,5 (6 of 592 steps)      corpus_M_raw.nc
#               time_d1s   --dimension time,0,5                       corpus_M_d1s.nc (deflate)
#               box_d1s    time,0,59 lat,0,89 lon,0,71 (1 % box)       corpus_M_d1s.nc
#               coord_d1s  the box by coordinate values                corpus_M_d1s.nc
#
# Each job: the median wall seconds of nccopy-rs, ncks 5.1.4 (`ncks -O -d ...`) and xarray
# (`xr.open_dataset(IN).isel(...).to_netcdf(OUT)`, netCDF4 engine, the source encoding kept),
# the ratios ncks/ours and xarray/ours, CPU seconds and peak RSS of the last run, the output
# sizes relative to ours, and whether the three outputs hold the same values (ncdump -v of
# every variable, the data sections compared). Targets: ncks/ours >= 5, xarray/ours >= 3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/bench/bench_lib.sh
. "$here/bench_lib.sh"
runs=5
jobs=time_raw,time_d1s,box_d1s,coord_d1s
bench_options "$@"
shift $((OPTIND - 1))
corpus=${1:?usage: $0 [-n RUNS] [-j JOBS] CORPUS_DIR TOOLS_DIR [WORK_DIR]}
tools=${2:?usage: $0 [-n RUNS] [-j JOBS] CORPUS_DIR TOOLS_DIR [WORK_DIR]}
work=${3:-/tmp/subset_bench}
nccopy="$tools/nccopy-rs"
[ -x "$nccopy" ] || { echo "no $nccopy (cargo build --release -p nccopy-rs)" >&2; exit 2; }
command -v ncks >/dev/null || { echo "needs ncks (apt-get install nco)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)" >&2; exit 2; }
python3 -c 'import xarray, netCDF4' || { echo "needs python3 with xarray and netCDF4" >&2; exit 2; }
mkdir -p "$work"
rm -f "${work:?}"/*.nc "${work:?}"/*.time

# one job: file, then the --dimension specs (DIM,MIN,MAX each)
job_args() {
    case $1 in
        time_raw) echo "corpus_M_raw.nc time,0,5" ;;
        time_d1s) echo "corpus_M_d1s.nc time,0,5" ;;
        box_d1s) echo "corpus_M_d1s.nc time,0,59 lat,0,89 lon,0,71" ;;
        # the same box by coordinate values (the corpus's lat/lon are cell centres)
        coord_d1s) echo "corpus_M_d1s.nc time,0,59 lat,-90.,0. lon,0.,72." ;;
        *) echo "unknown job $1" >&2; exit 2 ;;
    esac
}

# timed NAME CMD...: run CMD under GNU time, print "wall cpu rss_mib"
timed() {
    local name=$1
    shift
    /usr/bin/time -f "%e %U %S %M" -o "$work/$name.time" "$@" >/dev/null 2>"$work/$name.err" ||
        { cat "$work/$name.err" >&2; return 1; }
    awk '{printf "%s %.2f %.0f\n", $1, $2 + $3, $4 / 1024}' "$work/$name.time"
}

# same A B: "yes" when every variable of A holds the same values in B (netCDF4-python, raw
# values compared as numbers: xarray may store time with another type)
same() {
    python3 - "$1" "$2" <<'PY'
import sys, numpy as np, netCDF4
a, b = netCDF4.Dataset(sys.argv[1]), netCDF4.Dataset(sys.argv[2])
ok = True
for n, v in a.variables.items():
    w = b.variables.get(n)
    if w is None:
        ok = False
        continue
    v.set_auto_maskandscale(False); w.set_auto_maskandscale(False)
    x, y = np.asarray(v[...], dtype="f8"), np.asarray(w[...], dtype="f8")
    ok &= x.shape == y.shape and np.array_equal(x, y, equal_nan=True)
print("yes" if ok else "no")
PY
}

printf '%-10s %8s %8s %8s %9s %9s %16s %16s %12s %6s\n' job ours_s ncks_s xr_s ncks/ours xr/ours \
    cpu_o/n/x_s rss_o/n/x_MiB size_n/x same
for job in ${jobs//,/ }; do
    read -r file specs <<<"$(job_args "$job")"
    src="$corpus/$file"
    [ -f "$src" ] || { echo "no $src (python3 ../shared/bench/make_corpus.py $corpus --sizes M)" >&2; exit 2; }
    ours_args=() ncks_args=() isel="" sel=""
    for s in $specs; do
        ours_args+=(--dimension "$s")
        ncks_args+=(-d "$s")
        IFS=, read -r d a b <<<"$s"
        # coordinate values select with sel, indices (inclusive here) with isel
        if [[ $a == *.* ]]; then
            sel+="$d=slice($a, $b), "
        else
            isel+="$d=slice($a, $((b + 1))), "
        fi
    done
    py="import xarray as xr; xr.open_dataset('$src').isel(${isel%, }).sel(${sel%, }).to_netcdf('$work/xr.nc')"
    : >"$work/o.list"; : >"$work/n.list"; : >"$work/x.list"
    for _ in $(seq "$runs"); do
        rm -f "$work"/{ours,ncks,xr}.nc
        append_time "$work/o.list" timed ours "$nccopy" "${ours_args[@]}" "$src" "$work/ours.nc"
        append_time "$work/n.list" timed ncks ncks -O "${ncks_args[@]}" "$src" "$work/ncks.nc"
        append_time "$work/x.list" timed xr python3 -c "$py"
    done
    o=$(cut -d' ' -f1 "$work/o.list" | median_lines)
    n=$(cut -d' ' -f1 "$work/n.list" | median_lines)
    x=$(cut -d' ' -f1 "$work/x.list" | median_lines)
    read -r _ oc orss < <(tail -1 "$work/o.list")
    read -r _ nc nrss < <(tail -1 "$work/n.list")
    read -r _ xc xrss < <(tail -1 "$work/x.list")
    so=$(stat -c %s "$work/ours.nc")
    sizes=$(awk -v o="$so" -v n="$(stat -c %s "$work/ncks.nc")" -v x="$(stat -c %s "$work/xr.nc")" \
        'BEGIN {printf "%.2f/%.2f", n / o, x / o}')
    same=no
    if [ "$(same "$work/ours.nc" "$work/ncks.nc")" = yes ] && [ "$(same "$work/ours.nc" "$work/xr.nc")" = yes ]; then
        same=yes
    fi
    awk -v j="$job" -v o="$o" -v n="$n" -v x="$x" -v c="$oc/$nc/$xc" -v r="$orss/$nrss/$xrss" \
        -v s="$sizes" -v same="$same" \
        'BEGIN {printf "%-10s %8.3f %8.3f %8.3f %8.1fx %8.1fx %16s %16s %12s %6s\n", j, o, n, x, n / o, x / o, c, r, s, same}'
done
