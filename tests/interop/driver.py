"""Interop driver (issue 14): write the corpus with the real clients, run our tools and
netCDF-C 4.9.0's on every file, check the values with the clients, print a JSON report.

    python3 driver.py --tools DIR --work DIR --known known_failures.txt [--table docs/interop.md]

Each check has two results: "ours" (ncdump-rs / nccopy-rs) and "ref" (the same check done with
netCDF-C 4.9.0's ncdump / nccopy), each "PASS", "FAIL" or "n.a.", with the differences found.
The Rust test tests/tests/interop.rs runs this and compares the "ours" results with
known_failures.txt. The checks:

  dump       ncdump -p 9,17 FILE shows every value the file's own client returns (exactly)
  text       ncdump-rs FILE is byte for byte ncdump 4.9.0's text (n.a. where 4.9.0 cannot read
             the file, or where known_failures.txt records a 4.9.0 bug)
  text-hs    the same with -hs
  nc4        nccopy -k nc4 FILE copy.nc: netCDF4-python reads every value and attribute of FILE
  nc4-h5py   h5py reads every value and attribute of FILE in that copy
  nc4-ncdump ncdump 4.9.0 -p 9,17 shows every value of FILE in that copy
  nczarr     nccopy FILE file://copy.zarr#mode=nczarr,file: netCDF4-python reads every value and
             attribute of FILE in the store
  nczarr-zarr   zarr-python (zarr_format=2) reads every value and attribute of FILE in the store
  nczarr49-ncdump  nccopy FILE file://copy49.zarr#mode=nczarr,file&layout=4.9 (our spelling
             for 4.9.0; 4.9.0's nccopy writes it without the key): ncdump 4.9.0 -p 9,17 shows
             every value of FILE
  zarr       nccopy FILE file://copy.zarr#mode=zarr,file: zarr-python reads every value and
             attribute of FILE in the pure Zarr store
  zarr3      nccopy FILE file://copy.zarr#mode=zarr,v3,file: zarr-python 3 reads every value and
             attribute of FILE in the Zarr v3 store (ours only: netCDF-C writes no Zarr v3)
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import corpus  # noqa: E402
import views  # noqa: E402

CHECKS = ["dump", "text", "text-hs", "nc4", "nc4-h5py", "nc4-ncdump", "nczarr", "nczarr-zarr", "nczarr49-ncdump", "zarr", "zarr3"]
NETCDF_C_BUG = "netcdf-c 4.9.0 bug:"
TIMEOUT = 120


def plugin_env():
    """HDF5_PLUGIN_PATH for the command-line tools: hdf5plugin's and Debian's plugins (zstd and
    blosc filters for netCDF-C 4.9.0). Not set in this process: netCDF4-python uses its own."""
    env = dict(os.environ)
    dirs = []
    try:
        import hdf5plugin

        dirs.append(hdf5plugin.PLUGIN_PATH)
    except ImportError:
        pass
    deb = "/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins"
    if os.path.isdir(deb):
        dirs.append(deb)
    if dirs:
        env["HDF5_PLUGIN_PATH"] = ":".join(dirs)
    return env


ENV = plugin_env()


def run(cmd, cwd):
    try:
        p = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, timeout=TIMEOUT)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return -1, b"", f"timed out after {TIMEOUT} s".encode()
    except OSError as e:
        return -2, b"", f"cannot run {cmd[0]}: {e}".encode()


def err_line(code, stderr):
    lines = [x for x in stderr.decode("utf-8", "replace").strip().splitlines() if x.strip()]
    last = " / ".join(x.strip() for x in lines[-2:])  # netCDF-C: message, then "Location: ..."
    if code < 0 and -code in SIGNALS:
        return f"killed by {SIGNALS[-code]}: {last[:300]}".rstrip(": ")
    return f"exit {code}: {last[:300]}"


SIGNALS = {6: "SIGABRT", 9: "SIGKILL", 11: "SIGSEGV"}


def first_line_diff(a, b):
    al, bl = a.decode("utf-8", "replace").split("\n"), b.decode("utf-8", "replace").split("\n")
    for i in range(max(len(al), len(bl))):
        x = al[i] if i < len(al) else "<end>"
        y = bl[i] if i < len(bl) else "<end>"
        if x != y:
            return f"line {i + 1}: 4.9.0 {x.strip()[:100]!r}, ours {y.strip()[:100]!r}"
    return "texts differ"


def result(status, detail=None):
    return {"status": status, "detail": detail or []}


def checked(problems):
    return result("FAIL" if problems else "PASS", problems)


def safe_view(client, url):
    try:
        return views.view(client, url), None
    except Exception as e:  # the client refuses the file: that is the finding
        return None, f"{client} cannot read it: {type(e).__name__}: {str(e)[:200]}"


class FileChecks:
    def __init__(self, f, tools, work, bugs):
        self.f = f
        self.tools = tools
        self.work = work
        self.bugs = bugs
        self.dir = os.path.join(work, "checks", f["name"])
        # the tools run beside the file, as a user would: HDF5 looks for external raw data
        # (h5py's external=) in the current directory
        self.cwd = os.path.join(work, "corpus")
        os.makedirs(self.dir, exist_ok=True)
        self.native = None

    def tool(self, name, ours):
        return os.path.join(self.tools, name + "-rs") if ours else name

    def run_all(self):
        f = self.f
        out = {}
        if f["path"] is None:
            for c in CHECKS:
                out[c] = {"ours": result("n.a.", [f["note"]]), "ref": result("n.a.", [f["note"]])}
            return out
        self.native, err = safe_view(f["native"], f["url"])
        if self.native is None:
            for c in CHECKS:
                out[c] = {"ours": result("n.a.", [err]), "ref": result("n.a.", [err])}
            return out
        url = f["url"]
        for ours in (True, False):
            side = "ours" if ours else "ref"
            code, text, err = run([self.tool("ncdump", ours), "-p", "9,17", url], self.cwd)
            if code != 0:
                r = result("FAIL", [f"ncdump: {err_line(code, err)}"])
            else:
                r = checked(views.diff_cdl(self.native, text.decode("utf-8", "surrogateescape"), "ncdump -p 9,17"))
            out.setdefault("dump", {})[side] = r
        for check, args in [("text", []), ("text-hs", ["-hs"])]:
            rc, rt, re_ = run(["ncdump", *args, url], self.cwd)
            oc, ot, oe = run([self.tool("ncdump", True), *args, url], self.cwd)
            ref = result("PASS") if rc == 0 else result("FAIL", [f"ncdump 4.9.0 {err_line(rc, re_)}"])
            bug = self.bugs.get((f["name"], check))
            if rc != 0:
                ours = result("n.a.", ["ncdump 4.9.0 cannot read the file; see dump"])
            elif oc != 0:
                ours = result("FAIL", [f"ncdump-rs {err_line(oc, oe)}"])
            elif ot == rt:
                ours = result("PASS")
            elif bug:
                ours = result("n.a.", [f"{bug} ({first_line_diff(rt, ot)}); see dump"])
                ref = result("FAIL", [bug])
            else:
                ours = result("FAIL", [first_line_diff(rt, ot)])
            out[check] = {"ours": ours, "ref": ref}
        for ours in (True, False):
            side = "ours" if ours else "ref"
            self.copy_checks(ours, side, out)
        return out

    def copy_checks(self, ours, side, out):
        url = self.f["url"]
        tag = "rs" if ours else "c"
        nc = os.path.join(self.dir, f"copy-{tag}.nc")
        code, _, err = run([self.tool("nccopy", ours), "-k", "nc4", url, nc], self.cwd)
        if code != 0:
            fail = result("FAIL", [f"nccopy -k nc4: {err_line(code, err)}"])
            for c in ["nc4", "nc4-h5py", "nc4-ncdump"]:
                out.setdefault(c, {})[side] = fail
        else:
            for c, client in [("nc4", "netCDF4"), ("nc4-h5py", "h5py")]:
                got, e = safe_view(client, nc)
                out.setdefault(c, {})[side] = self.compare(got, e, f"{client} view of the copy")
            out.setdefault("nc4-ncdump", {})[side] = self.ncdump_490(nc, "the netCDF-4 copy")
        store = os.path.join(self.dir, f"copy-{tag}.zarr")
        shutil.rmtree(store, ignore_errors=True)
        zurl = f"file://{store}#mode=nczarr,file"
        code, _, err = run([self.tool("nccopy", ours), url, zurl], self.cwd)
        if code != 0:
            fail = result("FAIL", [f"nccopy to NCZarr: {err_line(code, err)}"])
            for c in ["nczarr", "nczarr-zarr"]:
                out.setdefault(c, {})[side] = fail
        else:
            for c, client in [("nczarr", "netCDF4"), ("nczarr-zarr", "zarr")]:
                got, e = safe_view(client, zurl)
                out.setdefault(c, {})[side] = self.compare(got, e, f"{client} view of the store")
        # the layout 4.9.0 reads; 4.9.0's own nccopy writes it without being asked
        store = os.path.join(self.dir, f"copy49-{tag}.zarr")
        z49 = f"file://{store}#mode=nczarr,file" + ("&layout=4.9" if ours else "")
        code, _, err = run([self.tool("nccopy", ours), url, z49], self.cwd)
        if code != 0:
            r = result("FAIL", [f"nccopy to NCZarr (4.9.0 layout): {err_line(code, err)}"])
        else:
            r = self.ncdump_490(f"file://{store}#mode=nczarr,file", "the NCZarr store")
        out.setdefault("nczarr49-ncdump", {})[side] = r
        store = os.path.join(self.dir, f"copy-{tag}-pure.zarr")
        purl = f"file://{store}#mode=zarr,file"
        code, _, err = run([self.tool("nccopy", ours), url, purl], self.cwd)
        if code != 0:
            r = result("FAIL", [f"nccopy to pure Zarr: {err_line(code, err)}"])
        else:
            got, e = safe_view("zarr", purl)
            r = self.compare(got, e, "zarr view of the pure Zarr store")
        out.setdefault("zarr", {})[side] = r
        if not ours:
            out.setdefault("zarr3", {})[side] = result("n.a.", ["netCDF-C writes no Zarr v3"])
            return
        store = os.path.join(self.dir, f"copy-{tag}-v3.zarr")
        v3url = f"file://{store}#mode=zarr,v3,file"
        code, _, err = run([self.tool("nccopy", ours), url, v3url], self.cwd)
        if code != 0:
            r = result("FAIL", [f"nccopy to Zarr v3: {err_line(code, err)}"])
        else:
            got, e = safe_view("zarr", v3url)
            r = self.compare(got, e, "zarr-python view of the Zarr v3 store")
        out.setdefault("zarr3", {})[side] = r

    def compare(self, got, err, what):
        if got is None:
            return result("FAIL", [err])
        r = checked(views.diff_views(self.native, got, what))
        # variables the client has no filter for (netCDF4-python's wheel: lz4, numcodecs-only
        # codecs) are not compared; say so
        for p, e in sorted(got.get("unreadable", {}).items()):
            r["detail"].append(f"note: {p} not compared, {got['client']} cannot decode it: {e[:120]}")
        return r

    def ncdump_490(self, url, what):
        code, text, err = run(["ncdump", "-p", "9,17", url], self.cwd)
        if code != 0:
            return result("FAIL", [f"ncdump 4.9.0 on {what}: {err_line(code, err)}"])
        return checked(views.diff_cdl(self.native, text.decode("utf-8", "surrogateescape"), f"ncdump 4.9.0 of {what}"))


def read_known(path):
    """(file, check) -> reason of every line of known_failures.txt."""
    known = {}
    if not path or not os.path.exists(path):
        return known
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            known[(parts[0], parts[1])] = parts[2] if len(parts) > 2 else ""
    return known


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--known")
    ap.add_argument("--table")
    ap.add_argument("--only", help="comma-separated file names (debugging)")
    a = ap.parse_args()
    for k in ("tools", "work", "known", "table"):  # the run changes directory
        if getattr(a, k):
            setattr(a, k, os.path.abspath(getattr(a, k)))
    t0 = time.time()
    try:
        import hdf5plugin  # noqa: F401 (registers the filters with h5py)
    except ImportError:
        pass
    work = os.path.abspath(a.work)
    data = os.path.join(work, "corpus")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(data)
    # the clients and the tools work beside the files: HDF5 looks for external raw data
    # (h5py's external=) in the current directory
    os.chdir(data)
    files = corpus.build(data)
    t_corpus = time.time() - t0
    known = read_known(a.known)
    bugs = {k: v for k, v in known.items() if v.startswith(NETCDF_C_BUG)}
    report = {"files": [], "results": [], "corpus_seconds": round(t_corpus, 1)}
    for f in files:
        if a.only and f["name"] not in a.only.split(","):
            continue
        report["files"].append({k: f[k] for k in ("name", "writer", "native", "note")})
        res = FileChecks(f, os.path.abspath(a.tools), work, bugs).run_all()
        for c in CHECKS:
            report["results"].append({"file": f["name"], "check": c, **res[c]})
    report["seconds"] = round(time.time() - t0, 1)
    if a.table:
        write_table(report, known, a.table)
    print(json.dumps(report, indent=1))


def write_table(report, known, path):
    import numpy
    import h5py
    import netCDF4
    import zarr
    import xarray

    cell = {}
    for r in report["results"]:
        cell[(r["file"], r["check"])] = (r["ours"]["status"], r["ref"]["status"])
    lines = [
        "# Interop: files written by the Python clients, read and copied by our tools and by netCDF-C 4.9.0",
        "",
        "Generated by `INTEROP_TABLE=docs/interop.md cargo test -p nc-tests --test interop` (issue 14);",
        "do not edit by hand. The corpus is written at test time by `tests/interop/corpus.py` with",
        f"h5py {h5py.__version__}, netCDF4-python {netCDF4.__version__} (netCDF-C {netCDF4.__netcdf4libversion__}),",
        f"xarray {xarray.__version__}, zarr-python {zarr.__version__}, numpy {numpy.__version__};",
        "`tests/interop/driver.py` runs the checks and `tests/interop/known_failures.txt` lists",
        "the failures of our tools that are known (the test fails when one of them starts passing).",
        "",
        "Each cell is *ours / netCDF-C 4.9.0*: the check done with ncdump-rs / nccopy-rs, then with",
        "4.9.0's ncdump / nccopy. Values are compared exactly (floats bit for bit) with what the",
        "file's own client returns: h5py for h5py files, zarr-python for Zarr stores, netCDF4-python",
        "for the others.",
        "",
        "| check | what |",
        "| --- | --- |",
        "| dump | `ncdump -p 9,17 FILE` shows every value the client returns |",
        "| text | ncdump-rs's text is byte for byte 4.9.0's (the 4.9.0 column: 4.9.0 reads the file; n.a. where 4.9.0 cannot read it or is wrong) |",
        "| text-hs | the same with `-hs` |",
        "| nc4 | `nccopy -k nc4`: netCDF4-python reads every value and attribute in the copy |",
        "| nc4-h5py | h5py reads every value and attribute in that copy |",
        "| nc4-ncdump | ncdump 4.9.0 shows every value in that copy |",
        "| nczarr | `nccopy` to `file://…#mode=nczarr,file`: netCDF4-python reads every value and attribute |",
        "| nczarr-zarr | zarr-python (`zarr_format=2`) reads every value and attribute in that store |",
        "| nczarr49-ncdump | `nccopy` to `file://…#mode=nczarr,file&layout=4.9` (ours; 4.9.0 writes that layout by itself): ncdump 4.9.0 shows every value |",
        "| zarr | `nccopy` to `file://…#mode=zarr,file`: zarr-python reads every value and attribute |",
        "| zarr3 | `nccopy` to `file://…#mode=zarr,v3,file`: zarr-python 3 reads every value and attribute (ours only: netCDF-C writes no Zarr v3) |",
        "",
        "| file | writer | " + " | ".join(CHECKS) + " |",
        "| --- | --- | " + " | ".join("---" for _ in CHECKS) + " |",
    ]
    short = {"PASS": "PASS", "FAIL": "FAIL", "n.a.": "n.a."}
    for f in report["files"]:
        row = [f"`{f['name']}`", f["writer"]]
        for c in CHECKS:
            o, r = cell.get((f["name"], c), ("n.a.", "n.a."))
            row.append(f"{short[o]} / {short[r]}")
        lines.append("| " + " | ".join(row) + " |")
    counts = {}
    for r in report["results"]:
        for side in ("ours", "ref"):
            counts[(side, r[side]["status"])] = counts.get((side, r[side]["status"]), 0) + 1
    lines += [
        "",
        f"Totals over {len(report['results'])} checks: ours {counts.get(('ours', 'PASS'), 0)} PASS, "
        f"{counts.get(('ours', 'FAIL'), 0)} FAIL, {counts.get(('ours', 'n.a.'), 0)} n.a.; netCDF-C 4.9.0 "
        f"{counts.get(('ref', 'PASS'), 0)} PASS, {counts.get(('ref', 'FAIL'), 0)} FAIL, {counts.get(('ref', 'n.a.'), 0)} n.a.",
        "A `text` cell *n.a. / FAIL* where 4.9.0 reads the file marks a 4.9.0 bug (listed in",
        "known_failures.txt); the dump check then compares our text with the client instead.",
    ]
    lines += ["", "## The corpus", "", "| file | writer | what |", "| --- | --- | --- |"]
    for f in report["files"]:
        lines.append(f"| `{f['name']}` | {f['writer']} | {f['note']} |")
    lines += ["", "## Known failures of our tools (the work list)", ""]
    lines += ["| file | check | why |", "| --- | --- | --- |"]
    for (fname, check), why in sorted(known.items()):
        why = why.replace("|", "\\|")
        lines.append(f"| `{fname}` | {check} | {why} |")
    lines += ["", "## Why netCDF-C 4.9.0 fails (first difference of each failing check)", ""]
    lines += ["| file | check | 4.9.0 |", "| --- | --- | --- |"]
    for r in report["results"]:
        if r["ref"]["status"] == "FAIL":
            why = (r["ref"]["detail"] or ["?"])[0].replace("|", "\\|").replace("\n", " ")
            lines.append(f"| `{r['file']}` | {r['check']} | {why[:200]} |")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
