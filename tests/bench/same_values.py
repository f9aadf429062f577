"""The value check the benchmark scripts share: every variable of a netCDF file against what
a copy of it holds."""


def same_values(nc, get):
    """Compares each variable of the open netCDF4 dataset `nc` (auto mask and scale off) with
    `get(name)`, the copy's array of that name (KeyError when it has none); prints `equal` or
    `DIFFER: <names>` and returns the exit status, 0 when equal."""
    import numpy as np

    bad = []
    for name, v in nc.variables.items():
        try:
            got = np.asarray(get(name))
        except KeyError:
            bad.append(name + " missing")
            continue
        want = v[...]
        if got.shape != want.shape or not np.array_equal(
            got.astype(want.dtype), want, equal_nan=want.dtype.kind == "f"
        ):
            bad.append(name)
    print("equal" if not bad else "DIFFER: " + " ".join(bad))
    return 0 if not bad else 1
