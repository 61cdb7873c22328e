//! Kafka's primitive wire encodings, written by hand because kafka-protocol keeps its own
//! encoders crate-private.
//!
//! Big-endian fixed-width integers, zig-zag varints (`ByteUtils.writeVarint/writeVarlong`),
//! unsigned varints (`ByteUtils.writeUnsignedVarint`, used by flexible message versions for
//! lengths and tags), and a bounds-checked [`Reader`] over a byte slice. Readers accept what
//! Java's `ByteUtils` accepts: at most 5 bytes for a 32-bit varint and 10 for a 64-bit one,
//! with bits beyond the width silently dropped (Java shifts them out).

use thiserror::Error;

/// Why a primitive read failed.
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
pub enum ReadError {
    /// Fewer bytes remained than the value needs.
    #[error("buffer underflow: needed {needed} bytes, {remaining} remaining")]
    Underflow {
        /// Bytes the read needed.
        needed: usize,
        /// Bytes that were left.
        remaining: usize,
    },
    /// A varint ran past 5 bytes (32-bit) or 10 bytes (64-bit), as Java's
    /// `ByteUtils.illegalVarintException` reports.
    #[error("varint is too long")]
    VarintTooLong,
    /// A length, count or value that Java's generated readers reject (for example a string
    /// over 0x7fff bytes, an array longer than the bytes left, invalid UTF-8).
    #[error("malformed field: {0}")]
    Malformed(&'static str),
}

/// Longest string (in UTF-8 bytes) Kafka messages may carry: Java's generated code refuses to
/// write or read longer ones ("string field had invalid length").
pub const MAX_STRING_BYTES: usize = 0x7fff;

/// Appends a zig-zag encoded 32-bit varint (`ByteUtils.writeVarint`).
pub fn put_varint(out: &mut Vec<u8>, value: i32) {
    put_uvarint(out, ((value << 1) ^ (value >> 31)) as u32);
}

/// Appends a zig-zag encoded 64-bit varint (`ByteUtils.writeVarlong`).
pub fn put_varlong(out: &mut Vec<u8>, value: i64) {
    let mut v = ((value << 1) ^ (value >> 63)) as u64;
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends an unsigned 32-bit varint (`ByteUtils.writeUnsignedVarint`).
pub fn put_uvarint(out: &mut Vec<u8>, value: u32) {
    let mut v = value;
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a compact (flexible-version) string: unsigned varint length + 1 (0 = null), then
/// UTF-8. Fails for strings over [`MAX_STRING_BYTES`], as Java's generated writers do.
pub fn put_compact_string(out: &mut Vec<u8>, value: Option<&str>) -> Result<(), ReadError> {
    match value {
        None => put_uvarint(out, 0),
        Some(s) if s.len() > MAX_STRING_BYTES => {
            return Err(ReadError::Malformed("string longer than 0x7fff bytes"))
        }
        Some(s) => {
            put_uvarint(out, s.len() as u32 + 1);
            out.extend_from_slice(s.as_bytes());
        }
    }
    Ok(())
}

/// Appends compact (flexible-version) bytes: unsigned varint length + 1 (0 = null), then data.
pub fn put_compact_bytes(out: &mut Vec<u8>, value: Option<&[u8]>) {
    match value {
        None => put_uvarint(out, 0),
        Some(b) => {
            put_uvarint(out, b.len() as u32 + 1);
            out.extend_from_slice(b);
        }
    }
}

/// Appends a compact array length: unsigned varint count + 1 (0 = null).
pub fn put_compact_len(out: &mut Vec<u8>, len: Option<usize>) {
    put_uvarint(out, len.map_or(0, |n| n as u32 + 1));
}

/// Appends a UUID as 16 big-endian bytes (most significant half first).
pub fn put_uuid(out: &mut Vec<u8>, value: &uuid::Uuid) {
    out.extend_from_slice(value.as_bytes());
}

/// Appends one tagged field: unsigned varint tag, unsigned varint size, data.
pub fn put_tagged_field(out: &mut Vec<u8>, tag: u32, data: &[u8]) {
    put_uvarint(out, tag);
    put_uvarint(out, data.len() as u32);
    out.extend_from_slice(data);
}

/// Encoded size in bytes of [`put_uvarint`]`(value)`: 1..=5.
pub fn uvarint_size(value: u32) -> usize {
    match value {
        0..=0x7f => 1,
        0x80..=0x3fff => 2,
        0x4000..=0x1f_ffff => 3,
        0x20_0000..=0x0fff_ffff => 4,
        _ => 5,
    }
}

/// Encoded size in bytes of [`put_varint`]`(value)`: 1..=5.
pub fn varint_size(value: i32) -> usize {
    uvarint_size(((value << 1) ^ (value >> 31)) as u32)
}

/// A forward-only, bounds-checked cursor over a byte slice. Every read either returns the
/// value and advances, or fails with [`ReadError`] (the position is then unspecified).
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader positioned at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left to read.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The next `n` bytes, borrowed from the underlying slice.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], ReadError> {
        if self.remaining() < n {
            return Err(ReadError::Underflow {
                needed: n,
                remaining: self.remaining(),
            });
        }
        let slice = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], ReadError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.bytes(N)?);
        Ok(out)
    }

    /// A signed byte.
    pub fn i8(&mut self) -> Result<i8, ReadError> {
        Ok(self.array::<1>()?[0] as i8)
    }

    /// A big-endian i16.
    pub fn i16(&mut self) -> Result<i16, ReadError> {
        Ok(i16::from_be_bytes(self.array()?))
    }

    /// A big-endian u16.
    pub fn u16(&mut self) -> Result<u16, ReadError> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    /// A big-endian i32.
    pub fn i32(&mut self) -> Result<i32, ReadError> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    /// A big-endian u32.
    pub fn u32(&mut self) -> Result<u32, ReadError> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    /// A big-endian i64.
    pub fn i64(&mut self) -> Result<i64, ReadError> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    /// A big-endian IEEE-754 f64.
    pub fn f64(&mut self) -> Result<f64, ReadError> {
        Ok(f64::from_be_bytes(self.array()?))
    }

    /// An unsigned 32-bit varint (`ByteUtils.readUnsignedVarint`).
    pub fn uvarint(&mut self) -> Result<u32, ReadError> {
        let mut result: u32 = 0;
        for i in 0..5 {
            let b = self.array::<1>()?[0];
            result |= ((b & 0x7f) as u32).wrapping_shl(7 * i);
            if b & 0x80 == 0 {
                return Ok(result);
            }
        }
        Err(ReadError::VarintTooLong)
    }

    /// A zig-zag 32-bit varint (`ByteUtils.readVarint`).
    pub fn varint(&mut self) -> Result<i32, ReadError> {
        let raw = self.uvarint()?;
        Ok(((raw >> 1) as i32) ^ -((raw & 1) as i32))
    }

    /// A zig-zag 64-bit varint (`ByteUtils.readVarlong`).
    pub fn varlong(&mut self) -> Result<i64, ReadError> {
        let mut raw: u64 = 0;
        for i in 0..10 {
            let b = self.array::<1>()?[0];
            raw |= ((b & 0x7f) as u64).wrapping_shl(7 * i);
            if b & 0x80 == 0 {
                return Ok(((raw >> 1) as i64) ^ -((raw & 1) as i64));
            }
        }
        Err(ReadError::VarintTooLong)
    }

    /// A UUID (16 bytes).
    pub fn uuid(&mut self) -> Result<uuid::Uuid, ReadError> {
        Ok(uuid::Uuid::from_bytes(self.array()?))
    }

    /// A compact length prefix (unsigned varint n; `None` when n = 0, else n − 1).
    fn compact_len(&mut self) -> Result<Option<usize>, ReadError> {
        let n = self.uvarint()?;
        Ok(if n == 0 { None } else { Some(n as usize - 1) })
    }

    /// A compact nullable string. Lengths over 0x7fff are rejected like Java; invalid UTF-8 is
    /// rejected too (Java would substitute U+FFFD, which no Kafka writer produces).
    pub fn compact_string(&mut self) -> Result<Option<String>, ReadError> {
        match self.compact_len()? {
            None => Ok(None),
            Some(n) if n > MAX_STRING_BYTES => {
                Err(ReadError::Malformed("string length over 0x7fff"))
            }
            Some(n) => {
                let b = self.bytes(n)?;
                let s =
                    std::str::from_utf8(b).map_err(|_| ReadError::Malformed("invalid UTF-8"))?;
                Ok(Some(s.to_owned()))
            }
        }
    }

    /// Compact nullable bytes.
    pub fn compact_bytes(&mut self) -> Result<Option<&'a [u8]>, ReadError> {
        match self.compact_len()? {
            None => Ok(None),
            Some(n) => self.bytes(n).map(Some),
        }
    }

    /// A compact nullable array length. Like Java ("Tried to allocate a collection of size
    /// N, but there are only M bytes remaining"), a count above the bytes left is rejected, so
    /// callers may preallocate it.
    pub fn compact_array_len(&mut self) -> Result<Option<usize>, ReadError> {
        match self.compact_len()? {
            Some(n) if n > self.remaining() => Err(ReadError::Malformed(
                "array longer than the remaining bytes",
            )),
            other => Ok(other),
        }
    }

    /// A tagged-field section: count, then (tag, size, data) entries, returned in wire order.
    pub fn tagged_fields(&mut self) -> Result<Vec<(u32, &'a [u8])>, ReadError> {
        let count = self.uvarint()? as usize;
        if count > self.remaining() {
            return Err(ReadError::Malformed("more tagged fields than bytes"));
        }
        let mut out = Vec::with_capacity(count);
        for _ in 0..count {
            let tag = self.uvarint()?;
            let size = self.uvarint()? as usize;
            out.push((tag, self.bytes(size)?));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn varint_matches_kafka_examples() {
        // Zig-zag: 0 -> 0, -1 -> 1, 1 -> 2, 300 -> 600 = 0xd8 0x04.
        let mut out = Vec::new();
        put_varint(&mut out, 0);
        put_varint(&mut out, -1);
        put_varint(&mut out, 1);
        put_varint(&mut out, 300);
        assert_eq!(out, vec![0x00, 0x01, 0x02, 0xd8, 0x04]);
        let mut out = Vec::new();
        put_uvarint(&mut out, 300);
        assert_eq!(out, vec![0xac, 0x02]);
    }

    #[test]
    fn overlong_varints_are_rejected() {
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
        assert_eq!(r.uvarint(), Err(ReadError::VarintTooLong));
        let mut r = Reader::new(&[0xff; 11]);
        assert_eq!(r.varlong(), Err(ReadError::VarintTooLong));
        let mut r = Reader::new(&[0x80]);
        assert!(matches!(r.varint(), Err(ReadError::Underflow { .. })));
    }

    proptest! {
        #[test]
        fn varints_round_trip(a: i32, b: i64, c: u32) {
            let mut out = Vec::new();
            put_varint(&mut out, a);
            prop_assert_eq!(out.len(), varint_size(a));
            put_varlong(&mut out, b);
            let before = out.len();
            put_uvarint(&mut out, c);
            prop_assert_eq!(out.len() - before, uvarint_size(c));
            let mut r = Reader::new(&out);
            prop_assert_eq!(r.varint().unwrap(), a);
            prop_assert_eq!(r.varlong().unwrap(), b);
            prop_assert_eq!(r.uvarint().unwrap(), c);
            prop_assert_eq!(r.remaining(), 0);
        }
    }
}
