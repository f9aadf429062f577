#!/bin/sh
# Regenerate the printer fixtures with the reference netCDF-C 4.9.0 tools.
# Each NAME.cdl is turned into a file with ncgen (format below), then dumped with
# ncdump and each option set; NAME.OPTS.out holds the output (spaces in OPTS become '_').
set -e
cd "$(dirname "$0")"
export HDF5_PLUGIN_PATH=${HDF5_PLUGIN_PATH:-/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins}
tmp=$(mktemp -d)
run() { # name kind opts...
  name=$1; kind=$2; shift 2
  ncgen -b -k "$kind" -o "$tmp/$name.nc" "$name.cdl"
  for o in "$@"; do
    tag=$(echo "x$o" | sed 's/^x//; s/ /_/g; s/,/+/g; s/\//%/g')
    [ -z "$tag" ] && tag=default
    ncdump $o "$tmp/$name.nc" > "$name.$tag.out"
  done
}
run types_nc4 nc4 "" "-h" "-b c" "-f c" "-v /g1/x,v" "-g g2" "-l 50" "-p 3,4" "-n other"
run classic classic "" "-p 3,5" "-l 40" "-b f" "-b c" "-f c" "-c" "-v a,c3" "-s -h" "-l 20 -v a,b"
run special nc4 "-s" "-s -F -h" "-h"
run times classic "-t" "-i" "-t -v t,tb"
run nc4classic nc7 "" "-s -h" "-c" "-f f" "-b f"
run rules_nc4 nc4 "" "-b c" "-b f" "-l 30"
rm -rf "$tmp"
