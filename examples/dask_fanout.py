#!/usr/bin/env python3
"""Copy one dataset into a Zarr / NCZarr store by parts on a Dask cluster (docs/scale-out.md).

Each Dask task is one `nccopy-rs --part` call: init, then the N parts (in any order, on any
worker), then finish. Dask schedules and retries; nccopy-rs does the copying. A failed part
is retried alone; a part that had finished writes nothing when run again.

    dask_fanout.py --parts 16 [--scheduler tcp://host:8786 | --local-workers 4]
                   [--nccopy /path/to/nccopy-rs] SRC DST [-- NCCOPY OPTIONS...]

    dask_fanout.py --parts 16 era5.nc 's3://bucket/era5.zarr#mode=zarr' -- -d 1 -c time/24

The nccopy-rs options after `--` must be the same for every step (a part run with other
options is refused). Credentials and endpoints reach the workers through their environment
(AWS_ACCESS_KEY_ID, AWS_ENDPOINT_URL, ...), as for nccopy-rs itself. Give each part the
cores of its worker with NCRS_THREADS or `-- --threads N`.
"""
import argparse
import subprocess
import sys


def step(nccopy, options, part, src, dst):
    """Run one `nccopy-rs --part PART` call; raise with its message when it fails."""
    cmd = [nccopy, *options, "--part", part, src, dst]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(
            f"nccopy-rs --part {part} failed (exit {r.returncode}): {r.stderr.strip()}"
        )
    return part


def main(argv):
    if "--" in argv:
        cut = argv.index("--")
        argv, options = argv[:cut], argv[cut + 1 :]
    else:
        options = []
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", help="input dataset (file, store or URL)")
    ap.add_argument("dst", help="output store (directory store or s3:// etc. with #mode=)")
    ap.add_argument("--parts", type=int, required=True, help="number of parts N")
    ap.add_argument("--scheduler", help="address of a running Dask scheduler")
    ap.add_argument(
        "--local-workers",
        type=int,
        default=2,
        help="without --scheduler: a LocalCluster of this many worker processes",
    )
    ap.add_argument("--nccopy", default="nccopy-rs", help="the nccopy-rs executable")
    ap.add_argument("--retries", type=int, default=2, help="Dask retries of a failed step")
    args = ap.parse_args(argv)
    if args.parts < 1:
        ap.error("--parts must be at least 1")

    from dask.distributed import Client, LocalCluster

    if args.scheduler:
        client = Client(args.scheduler)
    else:
        cluster = LocalCluster(
            n_workers=args.local_workers, threads_per_worker=1, processes=True
        )
        client = Client(cluster)
    with client:

        def submit(part):
            # pure=False: a rerun of the script runs the step again (it is idempotent)
            return client.submit(
                step,
                args.nccopy,
                options,
                part,
                args.src,
                args.dst,
                key=f"nccopy-part-{part.replace('/', '-of-')}",
                pure=False,
                retries=args.retries,
            )

        print("init:", submit("init").result(), flush=True)
        parts = [submit(f"{i}/{args.parts}") for i in range(args.parts)]
        for done in client.gather(parts):
            print("part done:", done, flush=True)
        submit(f"finish/{args.parts}").result()
        print("finish: done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
