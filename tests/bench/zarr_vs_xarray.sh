#!/usr/bin/env bash
# nccopy-rs netCDF-4 -> NCZarr against xarray's to_zarr with the same numcodecs codecs.
#
# Usage: tests/bench/zarr_vs_xarray.sh CORPUS_DIR TOOLS_DIR [WORK_DIR] [FILE]
#   CORPUS_DIR  directory holding FILE (default corpus_M_raw.nc, a netCDF-4 file)
#   TOOLS_DIR   directory holding the release nccopy-rs (e.g. target/release)
#   WORK_DIR    where the stores are written (default /tmp/zarr_vs_xarray); emptied first
#   SETTLE      (environment) seconds to wait after removing the previous run's stores (default
#               90; 0 to skip). On ext4 without a journal (as on the development VM) the kernel
#               skips inodes freed in the last 60 s (5 min while their inode table block is
#               dirty) and scans past each of them on every file it creates: right after ~9,000
#               chunk files are deleted, whichever tool runs first pays up to 1.5 s of system
#               time creating its 4,700 files. Waiting lets the freed inodes age out, so both
#               tools create files on a settled file system, as a user writing a new store does.
#   PYTHON      (environment) the Python with xarray, zarr 2.x and numcodecs (default python3).
#               xarray releases after 2025.x speak zarr 3 only; with zarr-python 2 installed,
#               use a venv: python3 -m venv --system-site-packages V && V/bin/pip install 'xarray==2025.1.2'
#
# Cases, each timed in the same run, one after the other:
#   zstd3          nccopy-rs -F '*,32015,3'    vs  to_zarr(compressor=Zstd(3))
#   shuffle_zlib1  nccopy-rs -F '*,2|1,1'      vs  to_zarr(filters=[Shuffle(itemsize)], compressor=Zlib(1))
# For each: wall seconds, CPU seconds (user + system) and peak RSS of both processes
# (/usr/bin/time), the wall-time ratio xarray / nccopy-rs, and a value-by-value comparison
# of the two stores (xarray + numpy). On a shared machine wall times are noisy: run it a
# few times, or compare the CPU seconds too.
# Target (issue 6): ratio >= 3 and nccopy-rs peak RSS < 300 MB. Exit status 1 when a
# store's values differ, 0 otherwise (the target is reported, not enforced).
set -euo pipefail

corpus=${1:?usage: $0 CORPUS_DIR TOOLS_DIR [WORK_DIR] [FILE]}
tools=${2:?usage: $0 CORPUS_DIR TOOLS_DIR [WORK_DIR] [FILE]}
work=${3:-/tmp/zarr_vs_xarray}
file=${4:-corpus_M_raw.nc}
here=$(cd "$(dirname "$0")" && pwd)
src="$corpus/$file"
nccopy="$tools/nccopy-rs"
py=${PYTHON:-python3}

[ -f "$src" ] || { echo "no $src" >&2; exit 2; }
[ -x "$nccopy" ] || { echo "no $nccopy (build: cargo build --release -p nccopy-rs)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)" >&2; exit 2; }
"$py" -c 'import xarray, zarr, numcodecs; xarray.Dataset().to_zarr(zarr.MemoryStore())' >/dev/null 2>&1 ||
    { echo "needs $py with xarray, zarr (2.x) and numcodecs whose to_zarr works together (set PYTHON)" >&2; exit 2; }

mkdir -p "$work"
if compgen -G "$work/*.zarr" >/dev/null; then
    rm -rf "${work:?}"/*.zarr
    sync
    echo "removed the previous stores; waiting ${SETTLE:-90} s for the freed inodes to age out (SETTLE=0 skips)"
    sleep "${SETTLE:-90}"
fi
rm -f "${work:?}"/*.time
echo "source: $src ($(du -m "$src" | cut -f1) MB); nccopy-rs: $nccopy"
echo "python: $py: $("$py" -c 'import xarray, zarr, numcodecs, numpy; print("xarray", xarray.__version__, "zarr", zarr.__version__, "numcodecs", numcodecs.__version__, "numpy", numpy.__version__)')"
echo "cpus: $(nproc)"

# run NAME CMD...: time CMD into $work/NAME.time ("wall_s rss_kb user_s sys_s")
run() {
    local name=$1
    shift
    sync
    /usr/bin/time -f '%e %M %U %S' -o "$work/$name.time" "$@"
}

status=0
printf '\n%-14s %10s %10s %10s %10s %10s %10s %8s %s\n' case ours_s ours_cpu ours_MB xarray_s xarray_cpu xarray_MB ratio values
for case in zstd3 shuffle_zlib1; do
    case $case in
        zstd3) spec='*,32015,3' ;;
        shuffle_zlib1) spec='*,2|1,1' ;;
    esac
    ours="$work/ours_$case.zarr"
    theirs="$work/xarray_$case.zarr"
    run "ours_$case" "$nccopy" -F "$spec" "$src" "file://$ours#mode=nczarr,file"
    run "xarray_$case" "$py" "$here/zarr_vs_xarray.py" write "$case" "$src" "$theirs"
    read -r os ok ou osy <"$work/ours_$case.time"
    read -r xs xk xu xsy <"$work/xarray_$case.time"
    if cmp=$("$py" "$here/zarr_vs_xarray.py" compare "$ours" "$theirs"); then :; else status=1; fi
    oc=$(python3 -c "print(f'{$ou + $osy:.2f}')")
    xc=$(python3 -c "print(f'{$xu + $xsy:.2f}')")
    printf '%-14s %10s %10s %10d %10s %10s %10d %8s %s\n' "$case" "$os" "$oc" $((ok / 1024)) "$xs" "$xc" $((xk / 1024)) \
        "$(python3 -c "print(f'{$xs / max($os, 0.01):.2f}x')")" "$cmp"
    printf '%-14s store sizes: ours %s MB, xarray %s MB; target ratio >= 3: %s; our RSS < 300 MB: %s\n' \
        "" "$(du -sm "$ours" | cut -f1)" "$(du -sm "$theirs" | cut -f1)" \
        "$(python3 -c "print('yes' if $xs / max($os, 0.01) >= 3 else 'NO')")" \
        "$([ $((ok / 1024)) -lt 300 ] && echo yes || echo NO)"
done
exit $status
