#!/usr/bin/env bash
# Object storage (issue 17): ncdump-rs -hs and nccopy-rs against a local S3 server, beside
# h5py / h5netcdf over s3fs and xarray + zarr-python 3, with every request counted.
#
# Usage: tests/bench/remote.sh [-n RUNS] [-j JOBS] CORPUS_DIR TOOLS_DIR [WORK_DIR]
#   CORPUS_DIR  output of ../shared/bench/make_corpus.py (manyvars.nc, corpus_${SIZE}_d1s.nc)
#   TOOLS_DIR   directory holding the release ncdump-rs and nccopy-rs (e.g. target/release)
#   WORK_DIR    scratch directory (default /tmp/remote_bench), emptied first
#   -n RUNS     timed runs per tool per job, tools alternating (default 3); medians reported
#   -j JOBS     comma list of jobs (default hs_many,hs_corpus,copy_v2,copy_v3)
# Environment:
#   SIZE    corpus size, S or M (default M)
#   PYTHON  the Python with moto[server], boto3, s3fs, h5py, h5netcdf, xarray, zarr 3,
#           netCDF4 (default python3)
#   RANGES  "slice": moto serves a ranged GET by reading only its range, as S3 does
#           (tests/bench/ranged_moto.py); unset: moto as released, which reads the whole
#           object for every ranged GET (so its busy time follows GETs x object size)
#   SERVER  the S3 server: moto (default; moto's server in memory, one Python process),
#           s3s (s3s-fs, the s3s project's Rust server over a directory) or s3rver
#           (Node.js, over a directory); the last two keep their objects in WORK_DIR/s3data
#           and are not installed by CI nor by the project; install one by hand:
#             cargo install s3s-fs@0.14.1 --features binary --root DIR   (DIR/bin/s3s-fs;
#               0.14.1 is the last release that builds with rustc 1.95)
#             npm install --prefix DIR s3rver@3.7.1        (DIR/node_modules/.bin/s3rver)
#   S3SERVER_BIN  the server's program for SERVER=s3s or s3rver (default: s3s-fs or s3rver
#           on PATH)
#   PROXY   "off": the clients talk to the server directly, not through the counting proxy
#           (a Python process forwarding every byte, on the same cores): the request, byte
#           and busy_s columns are then "-"; server CPU is still measured
#
# The server on 127.0.0.1 with a free port, and in front of it a counting proxy of ours
# (remote.py serve, another free port) that every client talks to (AWS_ENDPOINT_URL); the
# proxy counts each run's requests and bytes, and reads the server's CPU time from /proc.
# Both end with the script (the server also with the proxy's process, or after two hours).
# The inputs are uploaded once, untimed, to bucket "bench": manyvars.nc (2000 variables) and
# corpus_${SIZE}_d1s.nc (as d1s.nc).
#
# Jobs:
#   hs_many    metadata of the remote manyvars.nc, what ncdump -hs shows:
#   hs_corpus  the same of the remote corpus_${SIZE}_d1s.nc
#                ncdump-rs -hs s3://bench/FILE
#                h5py: h5py.File(s3fs file object) walking every dataset's attributes,
#                      chunks, filters, fill value (s3fs's defaults: 50 MiB read-ahead blocks)
#                h5netcdf: h5netcdf.File(s3fs file object), the same through h5netcdf
#              values: ncdump-rs's remote output equals its output for the local file
#   copy_v2    remote netCDF-4 -> a new Zarr v2 store in the bucket (OUT = JOB.TOOL.RUN.zarr; the
#              last run's is removed before each run, untimed), zstd 3 for every array,
#   copy_v3    -> Zarr v3 store, the same; the source's chunks (1x180x360) kept:
#                nccopy-rs -F '*,32015,3' s3://bench/d1s.nc 's3://bench/OUT#mode=zarr[,v3]'
#                xarray: open_dataset(s3fs file object, engine="h5netcdf").to_zarr(zarr's
#                        FsspecStore at s3://bench/OUT, zarr_format=2|3) with the source's
#                        chunks, CF encoding and zstd 3
#              values: every variable of the store (read back with zarr-python) equals the
#              local source's raw values
# Each row: median wall seconds, CPU seconds (user + system) and peak RSS of the client
# process, and its requests (all; ranged GETs; PUTs + POSTs), MB received (response bodies)
# and MB sent (request bodies), as the proxy counted them (medians; they do not vary much),
# and busy_s: the seconds in which the server had at least one of the run's requests in hand
# (a floor under the wall time that the client cannot lower but by fewer or cheaper requests:
# moto reads the whole object for every ranged GET, ~0.5 s for the 360 MB file here, unless
# RANGES=slice); srv_cpu and pxy_cpu: the CPU seconds (user + system) the server process and
# the counting proxy spent during the run (medians).
# Copy rows add the throughput: uncompressed source MB per wall second. The machine may be
# shared: wall times are noisy, CPU seconds and request and byte counts much less so.
set -euo pipefail

runs=3
jobs=hs_many,hs_corpus,copy_v2,copy_v3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_lib.sh"
bench_options "$@"
shift $((OPTIND - 1))
usage="usage: $0 [-n RUNS] [-j JOBS] CORPUS_DIR TOOLS_DIR [WORK_DIR]"
corpus=${1:?$usage}
tools=${2:?$usage}
work=${3:-/tmp/remote_bench}
size=${SIZE:-M}
py=${PYTHON:-python3}
server=${SERVER:-moto}
ncdump="$tools/ncdump-rs"
nccopy="$tools/nccopy-rs"
many="$corpus/manyvars.nc"
src="$corpus/corpus_${size}_d1s.nc"

for f in "$many" "$src"; do [ -f "$f" ] || { echo "no $f" >&2; exit 2; }; done
for t in "$ncdump" "$nccopy"; do [ -x "$t" ] || { echo "no $t (cargo build --release)" >&2; exit 2; }; done
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)" >&2; exit 2; }
"$py" -c 'import boto3, s3fs, h5py, h5netcdf, xarray, zarr, netCDF4
assert int(zarr.__version__.split(".")[0]) >= 3' 2>/dev/null ||
    { echo "needs $py with boto3, s3fs, h5py, h5netcdf, xarray, zarr 3, netCDF4 (set PYTHON)" >&2; exit 2; }
case $server in
    moto)
        server_bin=
        "$py" -c 'import moto.server' 2>/dev/null || { echo "SERVER=moto needs $py with moto[server] (set PYTHON)" >&2; exit 2; } ;;
    s3s)
        server_bin=${S3SERVER_BIN:-$(command -v s3s-fs || true)}
        cure="cargo install s3s-fs@0.14.1 --features binary --root DIR, then S3SERVER_BIN=DIR/bin/s3s-fs" ;;
    s3rver)
        server_bin=${S3SERVER_BIN:-$(command -v s3rver || true)}
        cure="npm install --prefix DIR s3rver@3.7.1, then S3SERVER_BIN=DIR/node_modules/.bin/s3rver" ;;
    *) echo "SERVER=$server: unknown server (moto, s3s or s3rver)" >&2; exit 2 ;;
esac
if [ "$server" != moto ] && [ ! -x "$server_bin" ]; then
    echo "SERVER=$server needs its program, not found (${S3SERVER_BIN:-not on PATH}): $cure (not installed by CI)" >&2
    exit 2
fi

mkdir -p "$work"
rm -rf "${work:?}"/*

# s3rver knows one account only, its own
if [ "$server" = s3rver ]; then
    export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
else
    export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing
fi
export AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
unset AWS_PROFILE AWS_SESSION_TOKEN

# the server: "PROXY_PORT SERVER_PORT" on its stdout; it ends when our end of its stdin closes
coproc SERVER { exec "$py" "$here/remote.py" serve "$server" "$server_bin" "$work/s3data"; }
read -r proxy_port server_port <&"${SERVER[0]}" || { echo "the $server server did not start" >&2; exit 2; }
trap 'exec {SERVER[1]}>&-; wait' EXIT
if [ "${PROXY:-}" = off ]; then
    export AWS_ENDPOINT_URL=http://127.0.0.1:$server_port
else
    export AWS_ENDPOINT_URL=http://127.0.0.1:$proxy_port
fi

case $server in
    moto) server_desc="moto $("$py" -c 'import moto; print(moto.__version__)') (in memory; ranged GETs: ${RANGES:-whole object read})" ;;
    s3s) server_desc="s3s-fs ($server_bin, $("$server_bin" --version 2>/dev/null | head -1))" ;;
    s3rver) server_desc="s3rver $("$server_bin" --version 2>/dev/null | head -1) ($server_bin, node $(node --version))" ;;
esac
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); cpus: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "ncdump-rs/nccopy-rs: $tools; server: $server_desc on 127.0.0.1:$server_port; counting proxy on 127.0.0.1:$proxy_port; clients talk to $AWS_ENDPOINT_URL"
echo "python: $("$py" -c 'import s3fs, h5py, h5netcdf, xarray, zarr, numcodecs; print("s3fs", s3fs.__version__, "h5py", h5py.__version__, "h5netcdf", h5netcdf.__version__, "xarray", xarray.__version__, "zarr", zarr.__version__, "numcodecs", numcodecs.__version__)')"
"$py" "$here/remote.py" upload "$AWS_ENDPOINT_URL" bench manyvars.nc "$many"
"$py" "$here/remote.py" upload "$AWS_ENDPOINT_URL" bench d1s.nc "$src"
echo "uploaded: manyvars.nc ($(stat -c %s "$many") bytes), d1s.nc = $(basename "$src") ($(stat -c %s "$src") bytes)"

# uncompressed data of the source, for the copies' throughput
data_mb=$("$py" -c 'import sys, netCDF4
d = netCDF4.Dataset(sys.argv[1])
print(sum(v.size * v.dtype.itemsize for v in d.variables.values()) / 1e6)' "$src")

stats() { "$py" "$here/remote.py" stats "$proxy_port" "$@"; }

# one TOOL JOB RUN: run TOOL's side of JOB once; prints
# "wall cpu rss_kb requests ranged puts bytes_recv bytes_sent server_busy server_cpu proxy_cpu"
one() {
    local tool=$1 job=$2 run=$3 tf="$work/t.time" file out
    case $job in
        hs_many) file=manyvars.nc ;;
        hs_corpus) file=d1s.nc ;;
        copy_v2 | copy_v3)
            # every copy writes a new store under a new name; the last run's goes first, untimed
            out="s3://bench/$job.$tool.$run.zarr"
            "$py" "$here/remote.py" rm "s3://bench/$job.$tool." 2>>"$work/stderr.log" || return 1 ;;
    esac
    stats reset >/dev/null
    case $tool/$job in
        ncdump-rs/hs_*)
            /usr/bin/time -f '%e %U %S %M' -o "$tf" "$ncdump" -hs "s3://bench/$file" >"$work/$job.$tool.out" ;;
        h5py/hs_* | h5netcdf/hs_*)
            /usr/bin/time -f '%e %U %S %M' -o "$tf" "$py" "$here/remote.py" "hs_$tool" "s3://bench/$file" >"$work/$job.$tool.out" ;;
        nccopy-rs/copy_v2)
            /usr/bin/time -f '%e %U %S %M' -o "$tf" "$nccopy" -F '*,32015,3' s3://bench/d1s.nc "$out#mode=zarr" ;;
        nccopy-rs/copy_v3)
            /usr/bin/time -f '%e %U %S %M' -o "$tf" "$nccopy" -F '*,32015,3' s3://bench/d1s.nc "$out#mode=zarr,v3" ;;
        xarray/copy_v2)
            /usr/bin/time -f '%e %U %S %M' -o "$tf" "$py" "$here/remote.py" xarray_copy s3://bench/d1s.nc "$out" 2 3 ;;
        xarray/copy_v3)
            /usr/bin/time -f '%e %U %S %M' -o "$tf" "$py" "$here/remote.py" xarray_copy s3://bench/d1s.nc "$out" 3 3 ;;
    esac 2>>"$work/stderr.log"
    # (called as an if's condition, where set -e does not act)
    [ $? = 0 ] || return 1
    local w u s m n ranged get head put post
    # (a killed run's first line is GNU time's "Command terminated by signal N")
    read -r w u s m <<<"$(tail -1 "$tf")"
    read -r n ranged get head put post _ _ bin bout busy scpu pcpu <<<"$(stats)"
    echo "$w $(python3 -c "print(f'{$u + $s:.2f}')") $m $n $ranged $((put + post)) $bin $bout $busy $scpu $pcpu"
}

status=0
printf '\n%-9s %-9s %7s %7s %7s %6s %6s %5s %8s %8s %6s %7s %7s %7s  %s\n' job tool wall_s cpu_s rss_MB reqs ranged puts MB_recv MB_sent busy_s srv_cpu pxy_cpu MB/s values
for job in ${jobs//,/ }; do
    case $job in
        hs_many | hs_corpus) sides="ncdump-rs h5py h5netcdf" ;;
        copy_v2 | copy_v3) sides="nccopy-rs xarray" ;;
        *) echo "unknown job $job" >&2; exit 2 ;;
    esac
    time_runs "$job" $sides
    for tool in $sides; do
        if grep -q failed "$work/$job.$tool.times"; then
            printf '%-9s %-9s %s\n' "$job" "$tool" "FAILED (see $work/stderr.log)"
            status=1
            continue
        fi
        cols=()
        for k in 1 2 3 4 5 6 7 8 9 10 11; do
            cols+=("$(median $(cut -d' ' -f$k "$work/$job.$tool.times"))")
        done
        wall=${cols[0]}
        rate=-
        case $job in
            hs_many | hs_corpus)
                local_file=$many
                [ "$job" = hs_corpus ] && local_file=$src
                if [ "$tool" = ncdump-rs ]; then
                    # the remote header equals the local one but for the name in its first line
                    "$ncdump" -hs "$local_file" | tail -n +2 >"$work/$job.local"
                    if tail -n +2 "$work/$job.$tool.out" | cmp -s - "$work/$job.local"; then
                        values="equal to local -hs"
                    else
                        values="DIFFER from local -hs"
                        status=1
                    fi
                else
                    values=$(tail -1 "$work/$job.$tool.out")
                fi ;;
            copy_*)
                rate=$(python3 -c "print(f'{$data_mb / $wall:.1f}')")
                values=$("$py" "$here/remote.py" check "$src" "s3://bench/$job.$tool.$((runs - 1)).zarr" 2>>"$work/stderr.log" || true)
                [[ $values == equal* ]] || status=1 ;;
        esac
        counted=("${cols[3]%.*}" "${cols[4]%.*}" "${cols[5]%.*}" "$(python3 -c "print(f'{${cols[6]} / 1e6:.1f}')")"
            "$(python3 -c "print(f'{${cols[7]} / 1e6:.1f}')")" "${cols[8]}")
        # without the proxy in the path nothing was counted
        if [ "${PROXY:-}" = off ]; then counted=(- - - - - -); fi
        printf '%-9s %-9s %7s %7.2f %7d %6s %6s %5s %8s %8s %6s %7s %7s %7s  %s\n' "$job" "$tool" "$wall" "${cols[1]}" \
            "$(python3 -c "print(int(${cols[2]} / 1024))")" "${counted[@]}" "${cols[9]}" "${cols[10]}" "$rate" "$values"
    done
done
exit $status
