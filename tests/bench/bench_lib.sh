# Shell functions the benchmark scripts share (sourced, not run).

# Reads the options -n RUNS and -j JOBS into $runs and $jobs (the caller sets their defaults
# first, and shifts $((OPTIND - 1)) after); -h or an unknown option prints the calling
# script's header comment and exits 2.
bench_options() {
    local o
    while getopts "n:j:h" o; do
        case $o in
            n) runs=$OPTARG ;;
            j) jobs=$OPTARG ;;
            *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
        esac
    done
}

# Runs the command after FILE (it prints one timing line) and appends that line to FILE, or
# "failed" when the command fails.
append_time() {
    local file=$1 t
    shift
    if t=$("$@"); then
        echo "$t" >>"$file"
    else
        echo "failed" >>"$file"
    fi
}

# Runs `one TOOL JOB RUN` (the calling script's) $runs times for each TOOL after JOB, the
# tools alternating, and keeps each run's timing line (or "failed") in $work/JOB.TOOL.times.
time_runs() {
    local job=$1 tool r
    shift
    for tool in "$@"; do : >"$work/$job.$tool.times"; done
    for ((r = 0; r < runs; r++)); do
        for tool in "$@"; do
            append_time "$work/$job.$tool.times" one "$tool" "$job" "$r"
        done
    done
}

# Prints the median of its arguments (numbers), with two decimals.
median() { python3 -c 'import sys,statistics as s; print("%.2f" % s.median(float(x) for x in sys.argv[1:]))' "$@"; }

# The median of the numbers on stdin, one per line (as printed: no rounding).
median_lines() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
