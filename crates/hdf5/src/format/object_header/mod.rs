//! Version 2 object headers (spec IV.A.1.b): `OHDR`, version 2, flags, the size of chunk 0,
//! the messages, and a checksum. We write every header as one chunk of exactly the size of
//! its messages (no continuation, no gap): the whole object is known before it is written.
//! Access times are not stored (netCDF-C's datasets and groups carry none).

pub(crate) mod read;

use super::Put;

/// Message types (spec IV.A.2).
pub(crate) mod kind {
    pub const DATASPACE: u8 = 0x01;
    pub const LINK_INFO: u8 = 0x02;
    pub const DATATYPE: u8 = 0x03;
    pub const FILL_VALUE: u8 = 0x05;
    pub const LINK: u8 = 0x06;
    pub const LAYOUT: u8 = 0x08;
    pub const GROUP_INFO: u8 = 0x0a;
    pub const FILTER_PIPELINE: u8 = 0x0b;
    pub const ATTRIBUTE: u8 = 0x0c;
    pub const ATTRIBUTE_INFO: u8 = 0x15;
}

/// Message flags (spec IV.A.1.b, "Header Message Flags").
pub(crate) mod flag {
    /// The message's value never changes (datatype, fill value, filter pipeline, group info).
    pub const CONSTANT: u8 = 0x01;
    /// The message must not be shared (attribute info).
    pub const NOT_SHARED: u8 = 0x04;
}

/// Most bytes of one message body (its size is a 16-bit field).
pub(crate) const MAX_MESSAGE: usize = u16::MAX as usize;

/// One header message: its type, flags, creation order (attribute messages of an object that
/// tracks creation order) and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Message {
    pub kind: u8,
    pub flags: u8,
    pub order: u16,
    pub body: Vec<u8>,
}

impl Message {
    pub fn new(kind: u8, flags: u8, body: Vec<u8>) -> Message {
        Message {
            kind,
            flags,
            order: 0,
            body,
        }
    }
}

/// An object header to encode. `track_attr_order` sets flags bits 2 and 3 (attribute creation
/// order tracked and indexed), as netCDF-C asks for every group and dataset; then every
/// message header carries a creation order field.
#[derive(Debug, Clone, Default)]
pub(crate) struct ObjectHeader {
    pub track_attr_order: bool,
    pub messages: Vec<Message>,
}

impl ObjectHeader {
    fn message_head(&self) -> usize {
        if self.track_attr_order {
            6
        } else {
            4
        }
    }

    /// Bytes of chunk 0's messages.
    fn chunk_len(&self) -> u64 {
        let head = self.message_head() as u64;
        self.messages
            .iter()
            .map(|m| head + m.body.len() as u64)
            .sum()
    }

    fn size_width(&self) -> (u8, usize) {
        match self.chunk_len() {
            n if n <= 0xff => (0, 1),
            n if n <= 0xffff => (1, 2),
            n if n <= 0xffff_ffff => (2, 4),
            _ => (3, 8),
        }
    }

    /// Bytes of the encoded header.
    pub fn encoded_len(&self) -> u64 {
        // signature, version, flags, chunk size, messages, checksum
        4 + 1 + 1 + self.size_width().1 as u64 + self.chunk_len() + 4
    }

    /// The encoded header. A message body longer than [`MAX_MESSAGE`] is a bug of the
    /// caller, which must put such data elsewhere (dense storage, the global heap).
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(self.encoded_len() as usize);
        b.extend_from_slice(b"OHDR");
        b.u8(2);
        let (code, width) = self.size_width();
        let order_bits = if self.track_attr_order {
            0x04 | 0x08
        } else {
            0
        };
        b.u8(code | order_bits);
        b.uint(self.chunk_len(), width);
        for m in &self.messages {
            debug_assert!(m.body.len() <= MAX_MESSAGE, "message body over 64 KiB");
            b.u8(m.kind);
            b.u16(m.body.len() as u16);
            b.u8(m.flags);
            if self.track_attr_order {
                b.u16(m.order);
            }
            b.extend_from_slice(&m.body);
        }
        b.checksum_from(0);
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_chunk_with_creation_order_fields() {
        let h = ObjectHeader {
            track_attr_order: true,
            messages: vec![
                Message::new(kind::GROUP_INFO, flag::CONSTANT, vec![0, 0]),
                Message {
                    kind: kind::ATTRIBUTE,
                    flags: 0,
                    order: 3,
                    body: vec![9; 5],
                },
            ],
        };
        let b = h.encode();
        assert_eq!(b.len() as u64, h.encoded_len());
        assert_eq!(&b[..6], b"OHDR\x02\x0c");
        // chunk 0: (6 + 2) + (6 + 5) bytes, in one byte
        assert_eq!(b[6], 19);
        assert_eq!(&b[7..15], &[0x0a, 2, 0, 1, 0, 0, 0, 0]);
        assert_eq!(&b[15..21], &[0x0c, 5, 0, 0, 3, 0]);
        let n = b.len();
        let sum = u32::from_le_bytes(b[n - 4..].try_into().unwrap());
        assert_eq!(sum, crate::format::checksum::lookup3(&b[..n - 4]));
    }

    #[test]
    fn chunk_size_field_grows_with_the_messages() {
        let h = ObjectHeader {
            track_attr_order: false,
            messages: vec![Message::new(kind::ATTRIBUTE, 0, vec![0; 300])],
        };
        let b = h.encode();
        assert_eq!(b[5], 0x01);
        assert_eq!(u16::from_le_bytes([b[6], b[7]]), 304);
        assert_eq!(b.len() as u64, h.encoded_len());
    }
}
