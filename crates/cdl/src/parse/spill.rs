//! A data section larger than memory: numeric values parsed on the fast path go to a
//! temporary file as little-endian bytes, block by block, and [`CdlData`] serves them back to
//! a writer by hyperslab. The parse itself is unchanged (every error is still found before
//! anything is written, and the data decides the record counts), only where the values wait.
//!
//! Small variables stay in memory up to a budget; a variable whose values outgrow one block
//! goes to the file as it is parsed, so memory holds one block at a time, whatever the size
//! of the section.

use nc_dataset::{MaybeBytes, Slab};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use nc_dataset::{AtomicType, DataError, DataSource, Dataset, InMemory, Values, VarId};

/// Where a variable's values sit in the temporary file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Run {
    offset: u64,
    elems: u64,
    ty: AtomicType,
}

/// The parser's side: the temporary file (created at the first value that goes there) and
/// where each spilled variable's values are.
#[derive(Debug)]
pub(crate) struct Spill {
    dir: PathBuf,
    file: Option<TempFile>,
    runs: HashMap<usize, Run>,
    /// bytes of parsed values that may stay in memory, all variables together
    budget: u64,
    /// bytes of parsed values kept in memory so far
    in_memory: u64,
    /// reused buffer for the little-endian bytes of a block
    buf: Vec<u8>,
}

/// What became of a variable's values.
pub(crate) enum Settled {
    /// kept in memory, in the variable's `data`
    Memory(Values),
    /// in the temporary file: this many elements
    File(u64),
}

impl Run {
    /// Elements in the run.
    pub(crate) fn elems(&self) -> u64 {
        self.elems
    }
}

impl Spill {
    pub(crate) fn new(budget: u64) -> Spill {
        Spill {
            dir: std::env::temp_dir(),
            file: None,
            runs: HashMap::new(),
            budget,
            in_memory: 0,
            buf: Vec::new(),
        }
    }

    /// The directory of the temporary file, for error messages.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Elements of type `t` a variable gathers before they go to the file as one block:
    /// a sixteenth of the budget, between 4 KiB and 4 MiB of values.
    pub(crate) fn block_elems(&self, t: AtomicType) -> usize {
        let bytes = (self.budget / 16).clamp(4 << 10, 4 << 20);
        (bytes as usize / t.size().max(1)).max(1)
    }

    /// Append `values` to the file as part of `run` (started here if `None`) and empty them.
    pub(crate) fn append(
        &mut self,
        run: &mut Option<Run>,
        values: &mut Values,
    ) -> std::io::Result<()> {
        let Some(ty) = values.atomic_type() else {
            return Err(std::io::Error::other("not a fixed-size atomic type"));
        };
        if self.file.is_none() {
            self.file = Some(TempFile::create(&self.dir)?);
        }
        let Some(f) = self.file.as_mut() else {
            return Err(std::io::Error::other("no temporary file"));
        };
        let r = run.get_or_insert(Run {
            offset: f.len,
            elems: 0,
            ty,
        });
        self.buf.clear();
        if !values.extend_le_bytes(&mut self.buf) {
            return Err(std::io::Error::other("not a fixed-size atomic type"));
        }
        f.file.write_all(&self.buf)?;
        f.len += self.buf.len() as u64;
        r.elems += values.len() as u64;
        values.clear();
        Ok(())
    }

    /// Decide where variable `v`'s values stay: with a run begun, the rest goes after it;
    /// otherwise in memory while the budget allows, else to the file. A later data list for
    /// the same variable replaces this one (its bytes in the file are left unused).
    pub(crate) fn settle(
        &mut self,
        v: usize,
        mut values: Values,
        mut run: Option<Run>,
    ) -> std::io::Result<Settled> {
        let size = match values.atomic_type() {
            Some(t) if t != AtomicType::String => t.size() as u64,
            _ => {
                self.runs.remove(&v);
                return Ok(Settled::Memory(values));
            }
        };
        let bytes = values.len() as u64 * size;
        if run.is_none() && self.in_memory.saturating_add(bytes) <= self.budget {
            self.in_memory += bytes;
            self.runs.remove(&v);
            return Ok(Settled::Memory(values));
        }
        if !values.is_empty() || run.is_none() {
            self.append(&mut run, &mut values)?;
        }
        let Some(r) = run else {
            return Err(std::io::Error::other("no run"));
        };
        self.runs.insert(v, r);
        Ok(Settled::File(r.elems))
    }

    /// The reading side, once the parse is complete.
    pub(crate) fn into_data(self) -> CdlData {
        CdlData {
            file: self.file,
            runs: self.runs,
            dir: self.dir,
        }
    }
}

/// The values a CDL data section gives, as a [`DataSource`] for writing the parsed dataset:
/// those in the variables' `data`, and those a parse with
/// [`parse_cdl_file_spilling`](crate::parse::parse_cdl_file_spilling) left in its temporary
/// file (variables with `data_elsewhere`). The file goes when this is dropped.
#[derive(Debug, Default)]
pub struct CdlData {
    file: Option<TempFile>,
    runs: HashMap<usize, Run>,
    dir: PathBuf,
}

impl CdlData {
    /// Bytes of values held in the temporary file (0 when everything is in memory).
    pub fn spilled_bytes(&self) -> u64 {
        self.file.as_ref().map_or(0, |f| f.len)
    }

    /// The run of `var` when the dataset says its data is elsewhere and this holds it.
    fn run(&self, ds: &Dataset, var: VarId) -> Option<(Run, &TempFile)> {
        let v = ds.vars.get(var.0)?;
        if v.data.is_some() || v.data_elsewhere.is_none() {
            return None;
        }
        Some((*self.runs.get(&var.0)?, self.file.as_ref()?))
    }

    /// Little-endian bytes of a hyperslab of a spilled variable; elements past the run read
    /// as the fill value, as [`InMemory`] reads a short data list.
    fn read_run(
        &self,
        ds: &Dataset,
        var: VarId,
        run: Run,
        file: &TempFile,
        start: &[u64],
        count: &[u64],
    ) -> Result<Vec<u8>, DataError> {
        let name = &ds.var(var).name;
        let shape = ds.shape(var);
        let rank = shape.len();
        if start.len() != rank || count.len() != rank {
            return Err(format!(
                "variable {name}: hyperslab rank {} does not match variable rank {rank}",
                start.len()
            )
            .into());
        }
        for i in 0..rank {
            if start[i].checked_add(count[i]).is_none_or(|e| e > shape[i]) {
                return Err(format!(
                    "variable {name}: hyperslab {}+{} exceeds dimension length {}",
                    start[i], count[i], shape[i]
                )
                .into());
            }
        }
        let es = run.ty.size() as u64;
        let total: u64 = count.iter().product();
        let Some(len) = total.checked_mul(es).and_then(|b| usize::try_from(b).ok()) else {
            return Err(format!("variable {name}: hyperslab too large").into());
        };
        let mut out = vec![0u8; len];
        if total == 0 {
            return Ok(out);
        }
        let fill = ds
            .fill_value(var)
            .unwrap_or_else(|| ds.default_value(ds.var(var).ty));
        let mut fill_bytes = Vec::new();
        fill.slice(0, 1.min(fill.len()))
            .extend_le_bytes(&mut fill_bytes);
        if fill_bytes.len() as u64 != es {
            fill_bytes = vec![0; es as usize];
        }
        // the trailing dimensions read whole make one contiguous run per outer index
        let mut strides = vec![1u64; rank];
        for i in (0..rank.saturating_sub(1)).rev() {
            strides[i] = strides[i + 1] * shape[i + 1];
        }
        let mut k = rank;
        while k > 1 && start[k - 1] == 0 && count[k - 1] == shape[k - 1] {
            k -= 1;
        }
        // dims 0..outer are iterated; dims outer.. form one contiguous piece
        let outer = k.saturating_sub(1);
        let piece: u64 = count[outer..].iter().product::<u64>().max(1);
        let mut idx = vec![0u64; outer];
        let mut at = 0usize;
        let pieces = total / piece;
        for _ in 0..pieces {
            let mut off: u64 = (0..outer).map(|i| (start[i] + idx[i]) * strides[i]).sum();
            if rank > 0 {
                off += start[outer] * strides[outer];
            }
            let avail = run.elems.saturating_sub(off).min(piece);
            let n = (piece * es) as usize;
            let dst = &mut out[at..at + n];
            let got = (avail * es) as usize;
            if got > 0 {
                file.read_exact_at(&mut dst[..got], run.offset + off * es)
                    .map_err(|e| {
                        format!(
                            "variable {name}: reading its values back from the temporary \
                             file in {}: {e}",
                            self.dir.display()
                        )
                    })?;
            }
            for c in dst[got..].chunks_exact_mut(es as usize) {
                c.copy_from_slice(&fill_bytes);
            }
            at += n;
            nc_dataset::next_index(&mut idx, count);
        }
        Ok(out)
    }
}

impl DataSource for CdlData {
    fn read(&self, ds: &Dataset, var: VarId, slab: Slab) -> Result<Values, DataError> {
        let Slab { start, count } = slab;

        let Some((run, file)) = self.run(ds, var) else {
            return InMemory.read(ds, var, Slab::new(start, count));
        };
        let bytes = self.read_run(ds, var, run, file, start, count)?;
        Values::from_le_bytes(run.ty, &bytes)
            .ok_or_else(|| format!("variable {}: not a fixed-size type", ds.var(var).name).into())
    }

    fn read_le_bytes(&self, ds: &Dataset, var: VarId, slab: Slab) -> MaybeBytes {
        let Slab { start, count } = slab;

        // in-memory data goes through `read`, as for [`InMemory`]; an enum variable's bytes
        // are its base type's, which the writers ask only of atomic variables
        let (run, file) = self.run(ds, var)?;
        Some(self.read_run(ds, var, run, file, start, count))
    }
}

/// A temporary file in `dir`. On Unix its name is removed as soon as it is open, so the
/// space comes back when the process ends, however it ends; elsewhere it is removed on drop.
#[derive(Debug)]
struct TempFile {
    file: File,
    /// the name while it is still linked
    path: Option<PathBuf>,
    len: u64,
}

impl TempFile {
    fn create(dir: &Path) -> std::io::Result<TempFile> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let mut last = None;
        for _ in 0..16 {
            let n = SEQ.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!(
                ".ncgen-rs-data-{}-{nanos:x}-{n}.tmp",
                std::process::id()
            ));
            match OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(file) => {
                    let linked = if cfg!(unix) {
                        std::fs::remove_file(&path)?;
                        None
                    } else {
                        Some(path)
                    };
                    return Ok(TempFile {
                        file,
                        path: linked,
                        len: 0,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("no free temporary file name")))
    }

    #[cfg(unix)]
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(&self.file, buf, offset)
    }

    #[cfg(windows)]
    fn read_exact_at(&self, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
        while !buf.is_empty() {
            let n = std::os::windows::fs::FileExt::seek_read(&self.file, buf, offset)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            buf = &mut buf[n..];
            offset += n as u64;
        }
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(p) = self.path.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use crate::parse::{parse_cdl, parse_cdl_reader_spilling, ParseOptions};

    /// A CDL with what the fast path meets: a multi-block fixed variable, a short data list
    /// (fill tail), records decided by the data, an enum, a variable given twice, a small
    /// variable, and char/string data that stays in memory.
    fn sample() -> String {
        let big: Vec<String> = (0..3000).map(|i| format!("{}", i * 7 - 100)).collect();
        let recs: Vec<String> = (0..1001).map(|i| format!("{i}.25")).collect();
        let short: Vec<String> = (0..500).map(|i| format!("{i}")).collect();
        let e: Vec<&str> = (0..2500)
            .map(|i| if i % 3 == 0 { "clear" } else { "cloudy" })
            .collect();
        format!(
            "netcdf s {{
types:
  byte enum sky {{clear = 0, cloudy = 1}} ;
dimensions:
  t = UNLIMITED ; a = 30 ; b = 100 ; c = 10 ; n = 2500 ; s = 4 ;
variables:
  int big(a, b) ;
  double rec(t, c) ;
  short short_(a, b) ;
    short_:_FillValue = -9s ;
  sky e(n) ;
  float twice(c) ;
  int64 small(c) ;
  char ch(s) ;
  string st(c) ;
data:
  big = {big} ;
  rec = {recs} ;
  short_ = {short} ;
  e = {e} ;
  twice = {twice1} ;
  small = 1, 2, 3 ;
  ch = \"ab\" ;
  st = \"x\", \"y\" ;
  twice = 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 ;
}}",
            big = big.join(", "),
            recs = recs.join(", "),
            short = short.join(", "),
            e = e.join(", "),
            twice1 = (0..3000)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(","),
        )
    }

    fn spilling(text: &str, budget: u64) -> Result<(Dataset, CdlData), crate::CdlError> {
        let opts = ParseOptions {
            memory_budget: budget,
            ..ParseOptions::default()
        };
        parse_cdl_reader_spilling(text.as_bytes(), "s.cdl", &opts)
    }

    fn slabs(shape: &[u64]) -> Vec<(Vec<u64>, Vec<u64>)> {
        let whole = (vec![0; shape.len()], shape.to_vec());
        let mut out = vec![whole];
        if shape.len() == 2 && shape[0] > 3 && shape[1] > 5 {
            out.push((vec![1, 0], vec![2, shape[1]]));
            out.push((vec![2, 3], vec![shape[0] - 2, 2]));
            out.push((vec![shape[0] - 1, 4], vec![1, shape[1] - 4]));
        }
        if shape.len() == 1 && shape[0] > 7 {
            out.push((vec![3], vec![shape[0] - 5]));
        }
        out
    }

    #[test]
    fn spilled_values_read_back_as_in_memory() {
        let text = sample();
        let mem = parse_cdl(&text, "s.cdl", &ParseOptions::default()).unwrap();
        for budget in [0, 3000, 64 << 20] {
            let (ds, data) = spilling(&text, budget).unwrap();
            // the same dataset but for where the values are
            assert_eq!(ds.dims, mem.dims);
            assert_eq!(
                ds.dim(nc_dataset::DimId(0)).len,
                101,
                "records from the data"
            );
            for (i, (a, b)) in ds.vars.iter().zip(&mem.vars).enumerate() {
                assert_eq!(a.given_len(), b.given_len(), "{}", a.name);
                let v = VarId(i);
                for (start, count) in slabs(&ds.shape(v)) {
                    let got = data.read(&ds, v, Slab::new(&start, &count)).unwrap();
                    let want = InMemory.read(&mem, v, Slab::new(&start, &count)).unwrap();
                    assert_eq!(got, want, "{} {start:?} {count:?}", a.name);
                    if let Some(le) = data.read_le_bytes(&ds, v, Slab::new(&start, &count)) {
                        let mut want_le = Vec::new();
                        assert!(want.extend_le_bytes(&mut want_le));
                        assert_eq!(le.unwrap(), want_le, "{}", a.name);
                    }
                }
            }
            let spilled: Vec<&str> = ds
                .vars
                .iter()
                .filter(|v| v.data_elsewhere.is_some())
                .map(|v| v.name.as_str())
                .collect();
            match budget {
                // everything of a fixed-size type goes to the file; strings never do
                0 => assert_eq!(
                    spilled,
                    ["big", "rec", "short_", "e", "twice", "small", "ch"]
                ),
                // past 4 KiB (the smallest block) a variable goes there as it is parsed; a
                // smaller one when the budget is spent ("e": 2,500 bytes after 1,000)
                3000 => assert_eq!(spilled, ["big", "rec", "e"]),
                _ => assert!(spilled.is_empty(), "{spilled:?}"),
            }
            assert_eq!(data.spilled_bytes() > 0, budget < 1 << 20);
        }
    }

    #[test]
    fn errors_are_those_of_the_in_memory_parse() {
        let text = sample();
        let cases = [
            // a bad value after several blocks went to the file
            text.replacen(", 13900,", ", 13900x,", 1),
            // a scalar given three values
            text.replacen("int64 small(c) ;", "int64 small ;", 1),
            // an undefined name in enum data
            text.replacen(
                "cloudy, clear, cloudy, cloudy",
                "cloudy, clear, cloudy, rain",
                1,
            ),
        ];
        for bad in &cases {
            assert_ne!(bad, &text);
            let want = parse_cdl(bad, "s.cdl", &ParseOptions::default())
                .unwrap_err()
                .to_string();
            assert!(want.starts_with("s.cdl:"), "{want}");
            for budget in [0, 64 << 20] {
                let got = spilling(bad, budget).unwrap_err().to_string();
                assert_eq!(got, want);
            }
        }
    }

    #[test]
    fn an_unwritable_temporary_directory_is_named() {
        let mut s = Spill::new(0);
        s.dir = PathBuf::from("/nonexistent/ncgen-rs-spill-test");
        let mut run = None;
        let mut vals = Values::Int(vec![1, 2, 3]);
        let e = s.append(&mut run, &mut vals).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
        assert_eq!(vals.len(), 3, "values kept on failure");
    }
}
