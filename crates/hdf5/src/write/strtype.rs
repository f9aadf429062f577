//! The netCDF `string` type (NC_STRING) as libhdf5 encodes it: a variable-length string
//! (datatype class 9, type 1) whose base is an 8-bit unsigned integer (class 0, size 1,
//! offset 0, precision 8), null-terminated, UTF-8 (HDF5 file format spec II.C, datatype
//! message, "variable-length" properties). netCDF-C 4.9.0 writes exactly these 20 bytes for
//! every string datatype (`H5Tcopy(H5T_C_S1)`, `H5Tset_size(H5T_VARIABLE)`,
//! `H5Tset_strpad(H5T_STR_NULLTERM)`, `H5Tset_cset(H5T_CSET_UTF8)`):
//!
//! ```text
//! 19 01 01 00  10 00 00 00    class 9 v1, type string, pad nullterm | cset UTF-8, size 16
//! 10 00 00 00  01 00 00 00    base: class 0 v1, little-endian unsigned, size 1
//! 00 00 08 00                 base: bit offset 0, precision 8
//! ```
//!
//! rust-hdf5 0.7.9 encodes `DatatypeMessage::VarLenString` with a 1-byte fixed-length string
//! as its base (16 bytes), which libhdf5 shows as `CTYPE unknown_one_character_type` and
//! cannot convert (h5py: "Can't get fill value (no appropriate function for conversion
//! path)"). So rust-hdf5 is given a same-size *stand-in*: a variable-length sequence of a
//! 1-byte unsigned integer whose bit offset and precision are a marker no real type has
//! ([`standin`]); rust-hdf5 lays it out as a vlen string in every respect that matters (16-byte
//! elements, heap references, fill values). The stand-ins become libhdf5's bytes:
//! - in attribute messages we encode ourselves (the heap pass writes every string
//!   attribute), before they are written ([`fix_encoded`]);
//! - in object headers (datasets, committed types) after rust-hdf5 closes the file
//!   ([`finish`]): the file is searched for the stand-in, which is rewritten in place and the
//!   checksum of its object header chunk renewed (through the heap pass's block finder).
//!
//! Limit: the search does not parse the messages of a block, so the data of a *compact*
//! variable (stored in its object header) holding these exact 20 bytes, marker included, in a
//! file with strings would be rewritten too.

use std::fs::File;
use std::path::Path;

use nc_dataset::{AtomicType, Dataset, NcType, UserTypeKind};
use rust_hdf5::{ByteOrder, DatatypeMessage};

use super::heap::{enclosing_block, read_at, seal_block, write_at, Block};
use crate::Hdf5Error;

/// Bit offset of the stand-in's base integer ("CN" little-endian): no 1-byte integer has one.
const MARKER_OFFSET: u16 = 0x4e43;
/// Bit precision of the stand-in's base integer ("ST" little-endian).
const MARKER_PRECISION: u16 = 0x5453;
/// Bytes of an encoded string datatype (both the stand-in and libhdf5's).
pub(super) const ENCODED_LEN: usize = 20;
/// libhdf5's padding (null-terminated) and character set (UTF-8), as netCDF-C sets them.
const PADDING: u8 = 0;
const CHARSET: u8 = 1;
/// How nesting deep a user type is searched for a string.
const MAX_DEPTH: usize = 32;
/// File bytes searched at a time for stand-ins.
const SCAN_BLOCK: usize = 16 << 20;

/// The datatype rust-hdf5 is given for a netCDF `string`: see the module docs.
pub fn standin() -> DatatypeMessage {
    DatatypeMessage::VarLenSequence {
        base: Box::new(DatatypeMessage::FixedPoint {
            size: 1,
            byte_order: ByteOrder::LittleEndian,
            signed: false,
            bit_offset: MARKER_OFFSET,
            bit_precision: MARKER_PRECISION,
        }),
    }
}

/// The last 8 bytes of an encoded stand-in (its base's size and its marker), searched for.
fn needle() -> [u8; 8] {
    let mut n = [0u8; 8];
    n[0] = 1;
    n[4..6].copy_from_slice(&MARKER_OFFSET.to_le_bytes());
    n[6..8].copy_from_slice(&MARKER_PRECISION.to_le_bytes());
    n
}

/// True if `b` (20 bytes) is an encoded stand-in: a vlen sequence (any version) of 16-byte
/// elements over a little-endian unsigned 1-byte integer (any version) with the marker.
fn is_standin(b: &[u8]) -> bool {
    b.len() == ENCODED_LEN
        && b[0] & 0x0f == 9
        && b[1..4] == [0, 0, 0]
        && b[4..8] == [16, 0, 0, 0]
        && b[8] & 0x0f == 0
        && b[9..12] == [0, 0, 0]
        && b[12..] == needle()
}

/// libhdf5's encoding of the string datatype whose stand-in is `b` (the versions kept).
fn libhdf5_bytes(b: &[u8]) -> [u8; ENCODED_LEN] {
    let mut out = [0u8; ENCODED_LEN];
    out.copy_from_slice(b);
    // vlen type 1 (string) in bits 0-3 of the first flag byte, padding in bits 4-7;
    // the character set in bits 0-3 of the second
    out[1] = 0x01 | (PADDING << 4);
    out[2] = CHARSET;
    // the base: offset 0, precision 8
    out[16..20].copy_from_slice(&[0, 0, 8, 0]);
    out
}

/// Rewrite every stand-in in `bytes` (encoded datatypes, e.g. the datatype part of an
/// attribute message) as libhdf5's string datatype; how many were rewritten.
pub fn fix_encoded(bytes: &mut [u8]) -> usize {
    let hits: Vec<usize> = memchr::memmem::find_iter(bytes, &needle())
        .filter_map(|i| i.checked_sub(ENCODED_LEN - 8))
        .filter(|&s| is_standin(&bytes[s..s + ENCODED_LEN]))
        .collect();
    for &s in &hits {
        let real = libhdf5_bytes(&bytes[s..s + ENCODED_LEN]);
        bytes[s..s + ENCODED_LEN].copy_from_slice(&real);
    }
    hits.len()
}

/// True if a datatype of `ds` written into an object header may hold a string: a variable or
/// a user-defined (committed) type mentions one.
pub fn needs_finish(ds: &Dataset) -> bool {
    ds.vars.iter().any(|v| mentions_string(ds, v.ty, 0))
        || (0..ds.types.len()).any(|i| mentions_string(ds, NcType::User(nc_dataset::TypeId(i)), 0))
}

fn mentions_string(ds: &Dataset, t: NcType, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match t {
        NcType::Atomic(a) => a == AtomicType::String,
        NcType::User(id) => match ds.types.get(id.0).map(|u| &u.kind) {
            Some(UserTypeKind::Vlen { base }) => mentions_string(ds, *base, depth + 1),
            Some(UserTypeKind::Compound { fields, .. }) => {
                fields.iter().any(|f| mentions_string(ds, f.ty, depth + 1))
            }
            _ => false,
        },
    }
}

/// Rewrite the stand-ins rust-hdf5 wrote into the closed file at `path` (object headers of
/// datasets and committed types) as libhdf5's string datatype, renewing each block's
/// checksum. A copy of the marker outside any object header or heap block (variable data
/// that happens to hold it) is left alone. Returns how many were rewritten.
///
/// # Errors
/// When the file cannot be read or written, or a block holding a stand-in fails its checksum.
pub fn finish(path: &Path) -> Result<usize, Hdf5Error> {
    let file = File::options()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| Hdf5Error::Write {
            what: "reopening the file to write its string datatypes".into(),
            message: e.to_string(),
        })?;
    let hits = scan(&file)?;
    let mut open: Option<(Block, Vec<u8>)> = None;
    let mut done = 0;
    for at in hits {
        let covered = open
            .as_ref()
            .is_some_and(|(b, _)| at >= b.start && at + ENCODED_LEN as u64 <= b.start + b.len);
        if !covered {
            if let Some((b, image)) = open.take() {
                write_block(&file, &b, image)?;
            }
            let Some(b) = enclosing_block(&file, at, ENCODED_LEN as u64)? else {
                continue;
            };
            let image = read_at(&file, b.start, b.len as usize, "reading a metadata block")?;
            open = Some((b, image));
        }
        if let Some((b, image)) = open.as_mut() {
            let i = (at - b.start) as usize;
            let here = &mut image[i..i + ENCODED_LEN];
            if is_standin(here) {
                let real = libhdf5_bytes(here);
                here.copy_from_slice(&real);
                done += 1;
            }
        }
    }
    if let Some((b, image)) = open.take() {
        write_block(&file, &b, image)?;
    }
    Ok(done)
}

fn write_block(file: &File, b: &Block, mut image: Vec<u8>) -> Result<(), Hdf5Error> {
    seal_block(b, &mut image);
    write_at(file, b.start, &image, "writing a string datatype")
}

/// Where each encoded stand-in starts, in file order.
fn scan(file: &File) -> Result<Vec<u64>, Hdf5Error> {
    let len = file
        .metadata()
        .map_err(|e| Hdf5Error::Write {
            what: "reading the file size".into(),
            message: e.to_string(),
        })?
        .len();
    let needle = needle();
    let finder = memchr::memmem::Finder::new(&needle);
    let mut out = Vec::new();
    // blocks overlap by a stand-in, so one across a boundary is seen (and deduplicated)
    let overlap = (ENCODED_LEN - 1) as u64;
    let mut pos = 0u64;
    while pos < len {
        let n = (len - pos).min(SCAN_BLOCK as u64) as usize;
        let buf = read_at(file, pos, n, "looking for string datatypes")?;
        for i in finder.find_iter(&buf) {
            if let Some(s) = i.checked_sub(ENCODED_LEN - 8) {
                if is_standin(&buf[s..s + ENCODED_LEN]) {
                    out.push(pos + s as u64);
                }
            }
        }
        if pos + n as u64 >= len {
            break;
        }
        pos += n as u64 - overlap;
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_hdf5::format::{FormatContext, LibverBound};

    /// What netCDF-C 4.9.0 (libhdf5 1.10.8) writes for a `string` variable or attribute, read
    /// from a file made by `ncgen -4` (docs in the module header).
    const NETCDF_C: [u8; ENCODED_LEN] = [
        0x19, 0x01, 0x01, 0x00, 0x10, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x08, 0x00,
    ];

    fn encode(dt: &DatatypeMessage) -> Vec<u8> {
        dt.encode_at(&FormatContext::default_v3(), LibverBound::V18)
    }

    #[test]
    fn standin_becomes_netcdf_c_bytes() {
        let mut b = encode(&standin());
        assert_eq!(b.len(), ENCODED_LEN);
        assert!(is_standin(&b));
        assert_eq!(fix_encoded(&mut b), 1);
        assert_eq!(b, NETCDF_C);
        // and rust-hdf5 reads the result as a UTF-8 vlen string
        let (dt, _) = DatatypeMessage::decode(&b, &FormatContext::default_v3()).expect("decodes");
        assert!(matches!(
            dt,
            DatatypeMessage::VarLenString {
                padding: 0,
                charset: 1
            }
        ));
    }

    #[test]
    fn nested_standins_are_fixed() {
        // a vlen of strings and a compound with a string member
        let vlen = DatatypeMessage::VarLenSequence {
            base: Box::new(standin()),
        };
        let mut b = encode(&vlen);
        assert_eq!(fix_encoded(&mut b), 1);
        assert_eq!(b[8..], NETCDF_C);
        let compound = DatatypeMessage::compound(
            32,
            vec![
                rust_hdf5::format::messages::datatype::CompoundMember {
                    name: "i".into(),
                    offset: 0,
                    datatype: DatatypeMessage::i32_type(),
                },
                rust_hdf5::format::messages::datatype::CompoundMember {
                    name: "s".into(),
                    offset: 8,
                    datatype: standin(),
                },
            ],
        );
        let mut b = encode(&compound);
        assert_eq!(fix_encoded(&mut b), 1);
        assert!(memchr::memmem::find(&b, &NETCDF_C).is_some());
    }

    #[test]
    fn same_size_as_the_real_type() {
        // element size and encoded size agree, so nothing moves when it is rewritten
        let s = standin();
        assert_eq!(s.element_size(), 16);
        assert_eq!(
            s.element_size_ctx(&FormatContext::default_v3()),
            DatatypeMessage::VarLenString {
                padding: 0,
                charset: 1
            }
            .element_size_ctx(&FormatContext::default_v3())
        );
    }

    #[test]
    fn other_bytes_are_left_alone() {
        let mut b = NETCDF_C.to_vec();
        b.extend_from_slice(&encode(&DatatypeMessage::vlen_bytes()));
        let before = b.clone();
        assert_eq!(fix_encoded(&mut b), 0);
        assert_eq!(b, before);
    }
}
