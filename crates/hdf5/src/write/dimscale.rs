//! Dimension scale attachments (`DIMENSION_LIST` on each variable, `REFERENCE_LIST` on each
//! scale) written in one pass after rust-hdf5 closes the file.
//!
//! rust-hdf5 0.7.9's `attach_scale` reads and rewrites the scale's whole `REFERENCE_LIST`
//! (object references resolved by path) on every attachment, so N variables sharing a
//! dimension cost O(N²) (20,000 took 160 s). Instead, while the crate writes the file, each
//! attribute is a placeholder of the exact size of the real message (see
//! [`super::heap::Deferred::raw_placeholder`]), created where `attach_scale` would create it,
//! so creation order is unchanged; after close, [`DimScales::patch`] looks every object header
//! address up once (group links, [`Locator`]), writes the `DIMENSION_LIST` sequences to the
//! global heap and overwrites the placeholders with the real messages.
//!
//! The encodings are those of HDF5's dimension scale API, as netCDF-C writes them:
//! - `DIMENSION_LIST`: a simple dataspace of the variable's rank, each element a
//!   variable-length sequence of object references (version 1 references: the object header
//!   address) to the scales of that axis;
//! - `REFERENCE_LIST`: a simple dataspace of the number of attachments, each element a
//!   compound { `dataset`: object reference at 0, `dimension`: 32-bit signed int at 8 } of 12
//!   bytes, in the order of attachment.
//!
//! One difference from libhdf5 that no reader shows: libhdf5 deletes and recreates
//! `REFERENCE_LIST` on every attachment, so the scale's maximum attribute creation index grows
//! by one per attached variable; here it is created once.

use std::collections::HashMap;
use std::fs::File;

use nc_dataset::{Dataset, GroupId};
use rust_hdf5::format::messages::attribute::AttributeMessage;
use rust_hdf5::format::messages::datatype::CompoundMember;
use rust_hdf5::format::{FormatContext, LibverBound};
use rust_hdf5::DatatypeMessage;

use super::heap::{replace_placeholder, Deferred, Placeholder};
use super::locate::Locator;
use super::user::HeapSink;
use crate::Hdf5Error;

/// Attribute names of HDF5's dimension scale API.
pub(super) const DIMENSION_LIST: &str = "DIMENSION_LIST";
pub(super) const REFERENCE_LIST: &str = "REFERENCE_LIST";

fn ctx() -> FormatContext {
    FormatContext::default_v3()
}

/// `DIMENSION_LIST`'s element type: a sequence of object references.
pub(super) fn dimension_list_type() -> DatatypeMessage {
    DatatypeMessage::VarLenSequence {
        base: Box::new(DatatypeMessage::object_reference(&ctx())),
    }
}

/// `REFERENCE_LIST`'s element type: { dataset: object reference, dimension: int }.
pub(super) fn reference_list_type() -> DatatypeMessage {
    let sa = u32::from(ctx().sizeof_addr);
    DatatypeMessage::compound(
        sa + 4,
        vec![
            CompoundMember {
                name: "dataset".to_string(),
                offset: 0,
                datatype: DatatypeMessage::object_reference(&ctx()),
            },
            CompoundMember {
                name: "dimension".to_string(),
                offset: sa,
                datatype: DatatypeMessage::i32_type(),
            },
        ],
    )
}

/// A dataset by its group and link name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct Object {
    pub group: GroupId,
    pub name: String,
}

struct VarList {
    object: Object,
    /// The scale (index into `DimScales::scales`) of each axis, if any.
    axes: Vec<Option<usize>>,
    placeholder: Placeholder,
}

struct ScaleList {
    object: Object,
    /// (variable index into `DimScales::vars`, axis) in order of attachment.
    refs: Vec<(usize, u32)>,
    placeholder: Option<Placeholder>,
}

/// Attachments planned while the file is written.
#[derive(Default)]
pub(super) struct DimScales {
    vars: Vec<VarList>,
    scales: Vec<ScaleList>,
    by_object: HashMap<Object, usize>,
}

impl DimScales {
    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }

    /// Attach the scales `axes` (one per axis, None where there is none) to the variable
    /// `var`: the placeholder of its `DIMENSION_LIST`, to be written now (datatype, value).
    ///
    /// # Errors
    /// When the placeholder cannot be made.
    pub fn attach(
        &mut self,
        deferred: &mut Deferred,
        var: Object,
        axes: &[Option<Object>],
        what: &str,
    ) -> Result<(DatatypeMessage, Vec<u8>), Hdf5Error> {
        let vi = self.vars.len();
        let mut idx = Vec::with_capacity(axes.len());
        for (axis, s) in axes.iter().enumerate() {
            let Some(s) = s else {
                idx.push(None);
                continue;
            };
            let si = match self.by_object.get(s) {
                Some(&i) => i,
                None => {
                    self.scales.push(ScaleList {
                        object: s.clone(),
                        refs: Vec::new(),
                        placeholder: None,
                    });
                    self.by_object.insert(s.clone(), self.scales.len() - 1);
                    self.scales.len() - 1
                }
            };
            self.scales[si].refs.push((vi, axis as u32));
            idx.push(Some(si));
        }
        let p =
            deferred.raw_placeholder(DIMENSION_LIST, dimension_list_type(), axes.len(), what)?;
        let out = (p.datatype.clone(), p.value.clone());
        self.vars.push(VarList {
            object: var,
            axes: idx,
            placeholder: p,
        });
        Ok(out)
    }

    /// After every attachment: the scales that got any, each with the placeholder of its
    /// `REFERENCE_LIST` to write now (datatype, value).
    ///
    /// # Errors
    /// When a placeholder cannot be made.
    pub fn reference_lists(
        &mut self,
        deferred: &mut Deferred,
    ) -> Result<Vec<(Object, DatatypeMessage, Vec<u8>)>, Hdf5Error> {
        let mut out = Vec::with_capacity(self.scales.len());
        for s in &mut self.scales {
            let what = format!("dimension scale {}: {REFERENCE_LIST}", s.object.name);
            let p = deferred.raw_placeholder(
                REFERENCE_LIST,
                reference_list_type(),
                s.refs.len(),
                &what,
            )?;
            out.push((s.object.clone(), p.datatype.clone(), p.value.clone()));
            s.placeholder = Some(p);
        }
        Ok(out)
    }

    /// Overwrite every placeholder with its real message (`hits`: where the markers are),
    /// `DIMENSION_LIST` sequences stored in `heap`.
    ///
    /// # Errors
    /// When an object is not found, a placeholder is missing or the file cannot be written.
    pub fn patch(
        &self,
        loc: &mut Locator,
        file: &File,
        ds: &Dataset,
        hits: &HashMap<u32, Vec<u64>>,
        heap: &mut dyn HeapSink,
    ) -> Result<(), Hdf5Error> {
        let sa = usize::from(ctx().sizeof_addr);
        let mut var_addr = Vec::with_capacity(self.vars.len());
        for v in &self.vars {
            var_addr.push(loc.child(ds, v.object.group, &v.object.name)?);
        }
        let mut scale_addr = Vec::with_capacity(self.scales.len());
        for s in &self.scales {
            scale_addr.push(loc.child(ds, s.object.group, &s.object.name)?);
        }
        for v in &self.vars {
            let mut data = Vec::with_capacity(16 * v.axes.len());
            for axis in &v.axes {
                let refs: Vec<u8> = axis
                    .map(|s| scale_addr[s].to_le_bytes()[..sa].to_vec())
                    .unwrap_or_default();
                let (at, index) = heap.store(&refs)?;
                // a heap reference: sequence length, collection address, object index
                data.extend_from_slice(&((refs.len() / sa) as u32).to_le_bytes());
                data.extend_from_slice(&at.to_le_bytes());
                data.extend_from_slice(&index.to_le_bytes());
            }
            let real = message(DIMENSION_LIST, dimension_list_type(), v.axes.len(), data);
            let p = &v.placeholder;
            replace_placeholder(
                file,
                hits,
                p.serial,
                p.marker_at as u64,
                &p.message,
                &real,
                format!("variable {}: {DIMENSION_LIST}", v.object.name),
            )?;
        }
        for s in &self.scales {
            let Some(p) = &s.placeholder else {
                continue;
            };
            let mut data = Vec::with_capacity((sa + 4) * s.refs.len());
            for &(vi, axis) in &s.refs {
                data.extend_from_slice(&var_addr[vi].to_le_bytes()[..sa]);
                data.extend_from_slice(&(axis as i32).to_le_bytes());
            }
            let real = message(REFERENCE_LIST, reference_list_type(), s.refs.len(), data);
            replace_placeholder(
                file,
                hits,
                p.serial,
                p.marker_at as u64,
                &p.message,
                &real,
                format!("dimension scale {}: {REFERENCE_LIST}", s.object.name),
            )?;
        }
        Ok(())
    }
}

/// The encoded attribute message `name` of `n` values of `dt` in a simple dataspace.
fn message(name: &str, dt: DatatypeMessage, n: usize, data: Vec<u8>) -> Vec<u8> {
    AttributeMessage::array_numeric(name, dt, &[n as u64], data).encode_at(&ctx(), LibverBound::V18)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_list_elements_are_twelve_bytes_with_a_signed_dimension() {
        let dt = reference_list_type();
        assert_eq!(dt.element_size(), 12);
        let DatatypeMessage::Compound { members, .. } = dt else {
            panic!("a compound");
        };
        assert_eq!(members[1].offset, 8);
        assert!(matches!(
            members[1].datatype,
            DatatypeMessage::FixedPoint {
                signed: true,
                size: 4,
                ..
            }
        ));
        assert_eq!(dimension_list_type().element_size(), 16);
    }
}
