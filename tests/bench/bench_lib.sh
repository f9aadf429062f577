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
