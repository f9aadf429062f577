#!/bin/bash
# Copy one dataset into a Zarr / NCZarr store by parts as Slurm jobs (docs/scale-out.md):
# one init job, an array job of N parts (SLURM_ARRAY_TASK_ID = the part, 0-based), and a
# finish job, each depending on the one before (afterok). No scheduler of our own.
#
#   SRC=era5.nc DST='s3://bucket/era5.zarr#mode=zarr' PARTS=16 OPTS='-d 1 -c time/24' \
#       SBATCH_OPTS='--partition=compute --time=02:00:00 --cpus-per-task=8' \
#       examples/slurm_fanout.sh
#
# OPTS must be the same for every step (a part run with other options is refused). A failed
# part is rerun alone (sbatch --array=3,7 ... with the same part command), then finish again:
# a part that had finished writes nothing, and finish names any part still missing.
set -euo pipefail
: "${SRC:?SRC: the input dataset}"
: "${DST:?DST: the output store, such as s3://bucket/out.zarr#mode=zarr}"
PARTS=${PARTS:-16}
OPTS=${OPTS:-}
NCCOPY=${NCCOPY:-nccopy-rs}
SBATCH_OPTS=${SBATCH_OPTS:-}

q() { printf '%q' "$1"; }
run="$NCCOPY $OPTS"
# each part uses the cores Slurm gave it
threads='--threads ${SLURM_CPUS_PER_TASK:-1}'

# shellcheck disable=SC2086
init=$(sbatch --parsable $SBATCH_OPTS --job-name=nccopy-init \
    --wrap "$run --part init $(q "$SRC") $(q "$DST")")
# shellcheck disable=SC2086
parts=$(sbatch --parsable $SBATCH_OPTS --job-name=nccopy-part \
    --dependency="afterok:$init" --array="0-$((PARTS - 1))" \
    --wrap "$run $threads --part \${SLURM_ARRAY_TASK_ID}/$PARTS $(q "$SRC") $(q "$DST")")
# shellcheck disable=SC2086
finish=$(sbatch --parsable $SBATCH_OPTS --job-name=nccopy-finish \
    --dependency="afterok:$parts" \
    --wrap "$run --part finish/$PARTS $(q "$SRC") $(q "$DST")")
echo "init job $init, part array job $parts (0-$((PARTS - 1))), finish job $finish"
