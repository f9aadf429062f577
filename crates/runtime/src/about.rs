//! What the three tools share on their command line: the exit codes, the `--version` text and
//! the worker-thread count.

use std::fmt::Write as _;

/// The exit codes of the three tools (the user guide documents them). netCDF-C's tools return
/// 1 for every failure; ours keep 1 for a bad input and tell usage and output errors apart, so
/// a script that tests for non-zero behaves the same with both.
pub mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// The input cannot be opened, read or decoded (a missing file, a corrupt file, a CDL
    /// syntax error, a filter with no codec).
    pub const INPUT: u8 = 1;
    /// The command line is wrong (unknown option, bad option value, missing file name).
    pub const USAGE: u8 = 2;
    /// The output cannot be written (permission, full disk, a destination that must not be
    /// replaced, a dataset the output format cannot represent).
    pub const OUTPUT: u8 = 3;
    /// Interrupted by SIGINT (128 + 2); the temporary output is removed.
    pub const INTERRUPTED: u8 = 130;
    /// Terminated by SIGTERM (128 + 15); the temporary output is removed.
    pub const TERMINATED: u8 = 143;
}

/// Environment variable giving the worker-thread count when `--threads` is not given.
pub const THREADS_ENV: &str = "NCRS_THREADS";

/// Set the number of worker threads for the whole process, from `--threads N` (`option`) or
/// else [`THREADS_ENV`]; neither leaves the default (one per core, or `RAYON_NUM_THREADS`).
/// Call once, before any work.
///
/// # Errors
/// A value that is not a whole number from 1 to 1024, named with where it came from.
pub fn set_threads(option: Option<&str>) -> Result<Option<usize>, String> {
    let (text, origin) = match option {
        Some(t) => (t.to_string(), "--threads".to_string()),
        None => match std::env::var(THREADS_ENV) {
            Ok(t) if !t.trim().is_empty() => (t, THREADS_ENV.to_string()),
            _ => return Ok(None),
        },
    };
    let n = match text.trim().parse::<usize>() {
        Ok(n) if (1..=1024).contains(&n) => n,
        _ => {
            return Err(format!(
                "{origin} {text:?}: the worker-thread count must be a whole number from 1 to 1024"
            ))
        }
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build_global()
        .map_err(|e| format!("{origin} {n}: cannot start the worker threads: {e}"))?;
    Ok(Some(n))
}

/// The `--version` text of a tool: its name and version, the formats it reads and writes, the
/// built-in codecs with what implements them, and the plugin directories in effect.
pub fn version_text(tool: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{tool} {} (netCDF-C {} compatible command line)",
        env!("CARGO_PKG_VERSION"),
        NETCDF_C_REFERENCE
    );
    let _ = writeln!(s, "formats:");
    for (name, what) in FORMATS {
        let _ = writeln!(s, "  {name:<24} {what}");
    }
    let _ = writeln!(
        s,
        "built-in codecs (HDF5 filter id, name, Zarr codec ids: implementation):"
    );
    for c in nc_filters::builtin_codecs() {
        let ids = if c.codec_ids.is_empty() {
            "-".to_string()
        } else {
            c.codec_ids.join(",")
        };
        let _ = writeln!(
            s,
            "  {:>5} {:<11} {:<16} {}",
            c.id, c.name, ids, c.implementation
        );
    }
    let dirs = nc_filters::plugin::default_plugin_dirs();
    let env = std::env::var("HDF5_PLUGIN_PATH").ok();
    let _ = writeln!(
        s,
        "plugin path ({}):",
        match &env {
            Some(_) => "HDF5_PLUGIN_PATH, then the default",
            None => "HDF5_PLUGIN_PATH unset: the default",
        }
    );
    for d in dirs {
        let _ = writeln!(s, "  {}", d.display());
    }
    let threads = rayon::current_num_threads();
    let _ = writeln!(
        s,
        "worker threads: {threads} (--threads N or {THREADS_ENV} to change)"
    );
    s
}

/// The netCDF-C release whose tools' options and text these mirror.
const NETCDF_C_REFERENCE: &str = "4.9";

/// The formats, as `--version` lists them.
const FORMATS: &[(&str, &str)] = &[
    ("classic (CDF-1)", "read, write"),
    ("64-bit offset (CDF-2)", "read, write"),
    ("64-bit data (CDF-5)", "read, write"),
    ("netCDF-4 / HDF5", "read, write (classic model too)"),
    ("NCZarr", "read, write (directory, zip; #mode=nczarr)"),
    ("Zarr v2", "read, write (directory, zip; #mode=zarr)"),
    (
        "Zarr v3",
        "read, write (directory, zip, sharding; #mode=zarr,v3)",
    ),
    (
        "OPeNDAP DAP2, DAP4",
        "read (http(s):// servers, file:// responses; #dap2, #dap4)",
    ),
];

/// Environment variable: when set (not empty, not `0`), the tools print their remote request
/// count and bytes on stderr as they finish.
pub const IO_STATS_ENV: &str = "NC_IO_STATS";

/// The remote requests and bytes so far, as a line (`remote I/O: N requests, ...`), or `None`
/// when nothing remote was touched.
pub fn remote_io_line() -> Option<String> {
    let s = nc_store::remote::io_stats();
    (s.requests > 0).then(|| format!("remote I/O: {s}"))
}

/// Print `{tool}: remote I/O: ...` on stderr when [`IO_STATS_ENV`] asks for it.
pub fn report_io(tool: &str) {
    let asked = std::env::var(IO_STATS_ENV).is_ok_and(|v| !v.is_empty() && v != "0");
    if asked {
        let line = remote_io_line().unwrap_or_else(|| "remote I/O: 0 requests".to_string());
        eprintln!("{tool}: {line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_names_tool_formats_codecs_and_versions() {
        let t = version_text("ncdump-rs");
        let first = t.lines().next().unwrap_or("");
        assert_eq!(
            first,
            format!(
                "ncdump-rs {} (netCDF-C 4.9 compatible command line)",
                env!("CARGO_PKG_VERSION")
            )
        );
        assert!(
            t.contains("\n  64-bit data (CDF-5)      read, write\n"),
            "{t}"
        );
        // every format the tools write, Zarr v3 too
        for name in ["NCZarr", "Zarr v2", "Zarr v3"] {
            assert!(
                t.lines().any(|l| l.starts_with(&format!("  {name} "))),
                "{name} missing from:\n{t}"
            );
        }
        assert!(
            t.contains("\n  Zarr v3                  read, write (directory, zip, sharding; #mode=zarr,v3)\n"),
            "{t}"
        );
        // every built-in codec, with the versions taken from Cargo.lock (never "?" here)
        for id in [1, 2, 3, 4, 305, 307, 32000, 32001, 32004, 32015] {
            assert!(
                t.lines()
                    .any(|l| l.trim_start().starts_with(&format!("{id} "))),
                "codec {id} missing from:\n{t}"
            );
        }
        let zlib = t.lines().find(|l| l.contains(" deflate ")).unwrap_or("");
        assert!(
            zlib.contains("zlib-rs 0.") && zlib.contains("via flate2 1."),
            "{zlib}"
        );
        assert!(!t.contains('?'), "an unknown version in:\n{t}");
    }

    #[test]
    fn thread_counts_out_of_range_are_refused_with_their_origin() {
        assert_eq!(
            set_threads(Some("0")),
            Err(
                "--threads \"0\": the worker-thread count must be a whole number from 1 to 1024"
                    .to_string()
            )
        );
        assert!(set_threads(Some("lots")).is_err());
    }
}
