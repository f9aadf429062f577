//! The output file: positional writes at planned addresses and an append-only allocator
//! for what is placed as it comes (chunks, the data's global heap collections, chunk
//! indexes). Nothing is ever written twice.

use std::cell::Cell;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::Hdf5Error;

pub(super) struct Out {
    file: File,
    /// The end of the allocated space.
    end: Cell<u64>,
    /// The end of the bytes written so far: the file's length.
    written: Cell<u64>,
}

impl Out {
    /// Create (truncate) the file at `path`.
    pub fn create_file(path: &Path) -> Result<File, Hdf5Error> {
        File::create(path).map_err(|e| Hdf5Error::Write {
            what: "creating the file".into(),
            message: e.to_string(),
        })
    }

    /// The output in `file` (empty, or truncated); space before `start` is reserved.
    pub fn new(file: File, start: u64) -> Out {
        Out {
            file,
            end: Cell::new(start),
            written: Cell::new(0),
        }
    }

    /// Reserve `len` bytes at the end; their address.
    pub fn alloc(&self, len: u64) -> u64 {
        let at = self.end.get();
        self.end.set(at + len);
        at
    }

    /// The end of the file as allocated so far.
    pub fn end(&self) -> u64 {
        self.end.get()
    }

    pub fn write_at(&self, addr: u64, bytes: &[u8]) -> Result<(), Hdf5Error> {
        self.file
            .write_all_at(bytes, addr)
            .map_err(|e| Hdf5Error::Write {
                what: format!("writing {} bytes at byte {addr}", bytes.len()),
                message: e.to_string(),
            })?;
        let to = addr + bytes.len() as u64;
        if to > self.written.get() {
            self.written.set(to);
        }
        Ok(())
    }

    /// Make the file exactly as long as the allocated space (storage reserved but never
    /// written at the end reads as zeros). Where the writes already reach that end the
    /// length is left alone: truncating a file to its own length still waits, on ext4, for
    /// the writeback of its last page (about a millisecond on a 5 MB output).
    pub fn finish(&self) -> Result<(), Hdf5Error> {
        if self.written.get() == self.end.get() {
            return Ok(());
        }
        self.file
            .set_len(self.end.get())
            .map_err(|e| Hdf5Error::Write {
                what: "setting the file's length".into(),
                message: e.to_string(),
            })
    }
}
