#!/usr/bin/env bash
# OPeNDAP copies (issue 32): nccopy-rs against netCDF-C's nccopy on a pydap server, every
# request counted.
#
# Usage: tests/bench/dap.sh [-n RUNS] [-j JOBS] TOOLS_DIR [WORK_DIR]
#   TOOLS_DIR   directory holding the release nccopy-rs and ncdump-rs (e.g. target/release)
#   WORK_DIR    scratch directory (default /tmp/dap_bench), emptied first and removed at
#               the end (KEEP=1 keeps it: the dataset, the copies, the logs)
#   -n RUNS     timed runs per tool per job, tools alternating (default 3); medians reported
#   -j JOBS     comma list of jobs (default classic,nc4,side)
# Environment:
#   PYTHON   the Python with pydap[server] (3.5), netCDF4 and numpy (default python3)
#   NCCOPY   netCDF-C's nccopy (default /usr/bin/nccopy; 4.9.0 was measured)
#   RECORDS  records of the dataset (default 90: 105 MB, 100.1 MiB)
#   BUF      the copy buffer given to both tools as -m (default 100M, see below)
#
# The dataset (tests/bench/dap_server.py make): WORK_DIR/data/bench.nc, classic (CDF-1),
# time (unlimited) x lat 180 x lon 360: tas, pr (float), zg (double), mask (short, packed),
# and the coordinates time, lat, lon. pydap (`pydap -b 127.0.0.1 -p PORT -d WORK_DIR/data`:
# gunicorn, one sync worker) on a free loopback port, and in front of it a counting proxy of
# ours (dap_server.py serve, another free port) that streams every answer through; the
# clients talk to the proxy. Both end with the script (pydap by its PID, via the proxy).
#
# Jobs (URL = http://127.0.0.1:PROXY/bench.nc):
#   classic  nccopy -m $BUF 'URL#dap2' out.nc       against  nccopy-rs -m $BUF 'URL#dap2' out.nc
#   nc4      nccopy -k nc4 -m $BUF 'URL#dap2' out.nc against nccopy-rs -k nc4 -m $BUF ...
#   side     nccopy-rs 'URL#dap2' out.nc (its default buffer), nccopy-rs URL out.nc (the
#            plain URL: pydap serves the file itself, read by byte range, not DAP), and,
#            once, nccopy 'URL#dap2' out.nc with its default 5 MB buffer (see below)
# Why -m: pydap 3.5.9 cannot answer a constrained slice of a multi-dimensional variable
# (its netCDF handler raises "cannot reshape array" after the headers, and the answer is
# cut); nccopy's default 5 MB buffer reads 19 records at a time, so its copy fails. With a
# buffer larger than the largest variable (zg, 46.7 MB) nccopy asks for whole variables,
# which pydap answers. nccopy-rs asks for whole variables whatever -m says.
#
# Each row: median wall seconds (and the least and most of the runs), CPU seconds (user +
# system) and peak RSS of the client process (GNU time), the requests and MB received
# (response bodies) as the proxy counted them, busy_s: the seconds in which pydap had at
# least one of the run's requests in hand (from the request's forwarding to the last byte
# of its answer: a floor under the wall time that no client can go below but by asking for
# less; pydap writes its answer as the client takes it, so a slow reader lengthens it too),
# srv_cpu and pxy_cpu: CPU seconds of pydap's processes and of the proxy during the run (the
# server's own work); MB/s: the dataset's data MB per wall second. values: the last run's
# copy against the source (every variable's raw values, dap_server.py check) and `ncdump -h`
# of the copy against nccopy's (the plain URL's: against the source's; the first line
# apart). The machine may be shared: wall times are noisy, CPU seconds and request and
# byte counts much less so.
set -euo pipefail

runs=3
jobs=classic,nc4,side
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_lib.sh"
bench_options "$@"
shift $((OPTIND - 1))
usage="usage: $0 [-n RUNS] [-j JOBS] TOOLS_DIR [WORK_DIR]"
tools=${1:?$usage}
work=${2:-/tmp/dap_bench}
py=${PYTHON:-python3}
cnccopy=${NCCOPY:-/usr/bin/nccopy}
records=${RECORDS:-90}
buf=${BUF:-100M}
rsnccopy="$tools/nccopy-rs"
helper="$here/dap_server.py"

for t in "$rsnccopy" "$tools/ncdump-rs"; do [ -x "$t" ] || { echo "no $t (cargo build --release)" >&2; exit 2; }; done
[ -x "$cnccopy" ] || { echo "SKIP: netCDF-C's nccopy not found ($cnccopy; Debian: apt-get install netcdf-bin, or set NCCOPY)"; exit 0; }
command -v ncdump >/dev/null || { echo "SKIP: netCDF-C's ncdump not on PATH (netcdf-bin)"; exit 0; }
command -v pydap >/dev/null && "$py" -c 'import pydap.wsgi.app, netCDF4, numpy' 2>/dev/null ||
    { echo "SKIP: needs pydap's server and $py with netCDF4 and numpy (pip install \"pydap[server]\" netCDF4; set PYTHON)"; exit 0; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)" >&2; exit 2; }

mkdir -p "$work"
rm -rf "${work:?}"/*
mkdir "$work/data" "$work/out"
read -r file_bytes data_bytes <<<"$("$py" "$helper" make "$work/data" "$records")"
src="$work/data/bench.nc"

# the server: "PROXY_PORT SERVER_PORT PYDAP_PID" on its stdout; it stops pydap and ends when
# our end of its stdin closes
coproc SERVER { exec "$py" "$helper" serve "$work/data"; }
server_pid=$SERVER_PID
read -r proxy_port server_port pydap_pid <&"${SERVER[0]}" || { echo "pydap did not start (see $work/pydap.log)" >&2; exit 2; }
cleanup() {
    exec {SERVER[1]}>&-
    wait "$server_pid" 2>/dev/null || true
    # pydap's arbiter stops its worker on SIGTERM (sent by the helper); make sure by PID
    kill "$pydap_pid" 2>/dev/null || true
    [ -n "${KEEP:-}" ] || rm -rf "${work:?}"
}
trap cleanup EXIT
url="http://127.0.0.1:$proxy_port/bench.nc"

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); cpus: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "nccopy: $cnccopy ($("$cnccopy" 2>&1 | grep -io 'netcdf library version [^ ]*' || true)); nccopy-rs: $rsnccopy"
echo "server: pydap $("$py" -c 'import pydap; print(pydap.__version__)') (gunicorn $("$py" -c 'import gunicorn; print(gunicorn.__version__)'), 1 sync worker) on 127.0.0.1:$server_port (pid $pydap_pid); counting proxy on 127.0.0.1:$proxy_port"
echo "dataset: $src, $file_bytes bytes, $data_bytes data bytes ($records records); -m $buf"

stats() { "$py" "$helper" stats "$proxy_port" "$@"; }

# one TOOL JOB RUN: one copy; prints "wall cpu rss_kb requests bytes busy server_cpu proxy_cpu"
one() {
    local tool=$1 job=$2 run=$3 tf="$work/t.time" out
    out="$work/out/$job.$tool.nc"
    rm -f "$out"
    stats reset >/dev/null
    {
        echo "== $job $tool run $run"
        case $tool/$job in
            nccopy/classic) /usr/bin/time -f '%e %U %S %M' -o "$tf" "$cnccopy" -m "$buf" "$url#dap2" "$out" ;;
            nccopy-rs/classic) /usr/bin/time -f '%e %U %S %M' -o "$tf" "$rsnccopy" -m "$buf" "$url#dap2" "$out" ;;
            nccopy/nc4) /usr/bin/time -f '%e %U %S %M' -o "$tf" "$cnccopy" -k nc4 -m "$buf" "$url#dap2" "$out" ;;
            nccopy-rs/nc4) /usr/bin/time -f '%e %U %S %M' -o "$tf" "$rsnccopy" -k nc4 -m "$buf" "$url#dap2" "$out" ;;
            nccopy-rs-default/side) /usr/bin/time -f '%e %U %S %M' -o "$tf" "$rsnccopy" "$url#dap2" "$out" ;;
            nccopy-rs-range/side) /usr/bin/time -f '%e %U %S %M' -o "$tf" "$rsnccopy" "$url" "$out" ;;
            nccopy-default/side) timeout 300 /usr/bin/time -f '%e %U %S %M' -o "$tf" "$cnccopy" "$url#dap2" "$out" ;;
        esac
    } >>"$work/stderr.log" 2>&1
    # (called as an if's condition, where set -e does not act)
    [ $? = 0 ] || return 1
    local w u s m n bytes busy scpu pcpu
    read -r w u s m <<<"$(tail -1 "$tf")"
    read -r n bytes busy scpu pcpu <<<"$(stats)"
    [ "$run" = 0 ] && { echo "== $job $tool"; stats log | tail -n +2; } >>"$work/requests.log"
    echo "$w $(python3 -c "print(f'{$u + $s:.2f}')") $m $n $bytes $busy $scpu $pcpu"
}

status=0
printf '\n%-8s %-18s %7s %11s %6s %7s %5s %8s %7s %7s %7s %6s  %s\n' job tool wall_s wall_range cpu_s rss_MB reqs MB_recv busy_s srv_cpu pxy_cpu MB/s values
for job in ${jobs//,/ }; do
    case $job in
        classic | nc4) sides="nccopy nccopy-rs" ;;
        side) sides="nccopy-rs-default nccopy-rs-range" ;;
        *) echo "unknown job $job" >&2; exit 2 ;;
    esac
    time_runs "$job" $sides
    if [ "$job" = side ]; then
        # once: it fails on pydap 3.5.9 (see the header); its outcome is reported, not timed
        sides="$sides nccopy-default"
        : >"$work/side.nccopy-default.times"
        append_time "$work/side.nccopy-default.times" one nccopy-default side 0
    fi
    for tool in $sides; do
        out="$work/out/$job.$tool.nc"
        if grep -q failed "$work/$job.$tool.times"; then
            # the first message of the tool's last failed run
            why=$(awk -v m="== $job $tool run" 'index($0, m) == 1 { on = 1; next } /^== / { on = 0 }
                on && !w && /[Ee]rror|fail|refus/ { w = $0 } END { print w }' "$work/stderr.log" | cut -c1-90)
            printf '%-8s %-18s %s\n' "$job" "$tool" "FAILED: $why"
            [ "$tool" = nccopy-default ] || status=1
            continue
        fi
        cols=()
        for k in 1 2 3 4 5 6 7 8; do
            cols+=("$(median $(cut -d' ' -f$k "$work/$job.$tool.times"))")
        done
        values=$("$py" "$helper" check "$src" "$out" 2>>"$work/stderr.log" || true)
        if [ "$tool" = nccopy-default ]; then
            # nccopy 4.9.0 prints "DAP DATADDS packet is apparently too short" for each cut
            # answer, yet exits 0 with a file of wrong values: shown, not counted as our failure
            values="exit 0 but $values ($(grep -c 'too short' "$work/stderr.log" || true) cut answers)"
        elif [[ $values != equal* ]]; then
            status=1
        fi
        # the header against nccopy's copy (the plain URL's copy: against the source's)
        case $job/$tool in
            */nccopy) ref= ;;
            side/nccopy-rs-range) ref=$src ;;
            side/*) ref=$work/out/classic.nccopy.nc ;;
            *) ref=$work/out/$job.nccopy.nc ;;
        esac
        if [ -n "$ref" ] && [ -f "$ref" ]; then
            if cmp -s <(ncdump -h "$out" | tail -n +2) <(ncdump -h "$ref" | tail -n +2); then
                values="$values, -h = $([ "$ref" = "$src" ] && echo "source's" || echo "nccopy's")"
            else
                values="$values, -h DIFFERS from $ref's"
                status=1
            fi
        fi
        range=$(python3 -c 'import sys; w = [float(x) for x in sys.argv[1:]]; print(f"{min(w):.2f}-{max(w):.2f}")' $(cut -d' ' -f1 "$work/$job.$tool.times"))
        printf '%-8s %-18s %7s %11s %6.2f %7d %5s %8s %7s %7s %7s %6s  %s\n' "$job" "$tool" "${cols[0]}" "$range" "${cols[1]}" \
            "$(python3 -c "print(int(${cols[2]} / 1024))")" "${cols[3]%.*}" "$(python3 -c "print(f'{${cols[4]} / 1e6:.1f}')")" \
            "${cols[5]}" "${cols[6]}" "${cols[7]}" "$(python3 -c "print(f'{$data_bytes / 1e6 / ${cols[0]}:.1f}')")" "$values"
    done
done
echo
[ -n "${KEEP:-}" ] && echo "the requests of each job's first run: $work/requests.log"
exit $status
