//! Kafka's size-prefixed framing: every request and response on the wire is a 4-byte big-endian
//! signed size followed by that many bytes (`NetworkReceive` / `NetworkSend` in Kafka's clients).
//!
//! The receiving side bounds the size with `socket.request.max.bytes` (default 100 MiB,
//! `SocketServerConfigs.SOCKET_REQUEST_MAX_BYTES_DEFAULT`); a negative size or one above the bound
//! is a framing error after which the connection cannot be resynchronised and must be closed
//! (Kafka throws `InvalidReceiveException` and closes the channel).

use bytes::{Buf, BufMut, Bytes, BytesMut};

/// Size of the length prefix in bytes.
pub const FRAME_PREFIX_BYTES: usize = 4;

/// Kafka's default `socket.request.max.bytes`: 100 MiB.
pub const DEFAULT_MAX_FRAME_BYTES: usize = 100 * 1024 * 1024;

/// Why a frame header cannot be accepted. Either way the byte stream is unusable afterwards.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The size prefix is negative (Kafka: `InvalidReceiveException: Invalid receive (size = -1)`).
    #[error("invalid frame size {size}: negative")]
    NegativeSize {
        /// The size prefix as read.
        size: i32,
    },
    /// The size prefix is larger than the configured maximum (the caller names the key that
    /// set it: `socket.request.max.bytes`, or `sasl.server.max.receive.size` before a SASL
    /// client has authenticated).
    #[error("invalid frame size {size}: larger than {max_frame_bytes}")]
    TooLarge {
        /// The size prefix as read.
        size: i32,
        /// The configured maximum in bytes.
        max_frame_bytes: usize,
    },
}

/// Incremental frame splitter for a byte stream.
///
/// Feed it the bytes read so far in a `BytesMut`; [`FrameDecoder::decode`] takes complete frames
/// off the front. It never allocates more than the declared frame size and checks the size prefix
/// as soon as its four bytes have arrived, so an oversized or negative frame is rejected before
/// its body is read.
#[derive(Debug, Clone, Copy)]
pub struct FrameDecoder {
    max_frame_bytes: usize,
}

impl FrameDecoder {
    /// A decoder that accepts frames of at most `max_frame_bytes` payload bytes (inclusive, like
    /// Kafka's `receiveSize > maxSize` check).
    pub fn new(max_frame_bytes: usize) -> Self {
        assert!(
            max_frame_bytes <= i32::MAX as usize,
            "max_frame_bytes must fit the i32 size prefix"
        );
        Self { max_frame_bytes }
    }

    /// The maximum payload size in bytes.
    pub fn max_frame_bytes(&self) -> usize {
        self.max_frame_bytes
    }

    /// Takes the next complete frame payload (without its size prefix) off the front of `buf`.
    ///
    /// Returns `Ok(None)` when more bytes are needed. It never reserves capacity for the declared
    /// size: a peer announcing a 100 MiB frame must send the bytes before we hold the memory, so
    /// the reader grows the buffer as data arrives. Errors leave `buf` untouched.
    pub fn decode(&self, buf: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
        if buf.len() < FRAME_PREFIX_BYTES {
            return Ok(None);
        }
        let size = i32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
        let payload_len = self.check_size(size)?;
        let total = FRAME_PREFIX_BYTES + payload_len;
        if buf.len() < total {
            return Ok(None);
        }
        buf.advance(FRAME_PREFIX_BYTES);
        Ok(Some(buf.split_to(payload_len).freeze()))
    }

    /// Validates a size prefix, returning the payload length in bytes.
    pub fn check_size(&self, size: i32) -> Result<usize, FrameError> {
        if size < 0 {
            return Err(FrameError::NegativeSize { size });
        }
        if size as usize > self.max_frame_bytes {
            return Err(FrameError::TooLarge {
                size,
                max_frame_bytes: self.max_frame_bytes,
            });
        }
        Ok(size as usize)
    }
}

impl Default for FrameDecoder {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_FRAME_BYTES)
    }
}

/// Writes `payload` as one frame (size prefix + bytes) to `out`.
///
/// Panics if the payload does not fit an `i32` size, which no encoder in this crate produces.
pub fn write_frame(payload: &[u8], out: &mut BytesMut) {
    assert!(
        payload.len() <= i32::MAX as usize,
        "frame payload of {} bytes overflows the size prefix",
        payload.len()
    );
    out.reserve(FRAME_PREFIX_BYTES + payload.len());
    out.put_i32(payload.len() as i32);
    out.put_slice(payload);
}

/// Starts a frame in `out` whose size is patched later by [`finish_frame`]; returns the offset of
/// the prefix. Lets encoders write a message directly behind its prefix without a copy.
pub fn begin_frame(out: &mut BytesMut) -> usize {
    let at = out.len();
    out.put_i32(0);
    at
}

/// Patches the size prefix written by [`begin_frame`] at `at` to cover everything after it.
pub fn finish_frame(out: &mut BytesMut, at: usize) {
    let payload_len = out.len() - at - FRAME_PREFIX_BYTES;
    assert!(
        payload_len <= i32::MAX as usize,
        "frame payload of {payload_len} bytes overflows the size prefix"
    );
    out[at..at + FRAME_PREFIX_BYTES].copy_from_slice(&(payload_len as i32).to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn framed(payloads: &[Vec<u8>]) -> Vec<u8> {
        let mut out = BytesMut::new();
        for p in payloads {
            write_frame(p, &mut out);
        }
        out.to_vec()
    }

    proptest! {
        /// However the stream is cut into reads, the decoder yields exactly the frames written.
        #[test]
        fn random_split_reads_yield_the_written_frames(
            payloads in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 0..8),
            cuts in prop::collection::vec(1usize..64, 0..200),
        ) {
            let stream = framed(&payloads);
            let decoder = FrameDecoder::new(1024);
            let mut buf = BytesMut::new();
            let mut got = Vec::new();
            let mut pos = 0;
            let mut cuts = cuts.into_iter();
            while pos < stream.len() {
                let n = cuts.next().unwrap_or(stream.len()).min(stream.len() - pos);
                buf.extend_from_slice(&stream[pos..pos + n]);
                pos += n;
                while let Some(frame) = decoder.decode(&mut buf).unwrap() {
                    got.push(frame.to_vec());
                }
            }
            prop_assert_eq!(got, payloads);
            prop_assert!(buf.is_empty());
        }

        /// Any negative size prefix is rejected as soon as the prefix is complete.
        #[test]
        fn negative_sizes_are_rejected(size in i32::MIN..0) {
            let mut buf = BytesMut::from(&size.to_be_bytes()[..]);
            prop_assert_eq!(FrameDecoder::default().decode(&mut buf), Err(FrameError::NegativeSize { size }));
        }
    }

    #[test]
    fn oversized_frame_is_rejected_before_its_body_arrives() {
        let decoder = FrameDecoder::new(100);
        let mut buf = BytesMut::from(&101i32.to_be_bytes()[..]);
        assert_eq!(
            decoder.decode(&mut buf),
            Err(FrameError::TooLarge {
                size: 101,
                max_frame_bytes: 100
            })
        );
        // Exactly the maximum is accepted (Kafka rejects only `size > max`).
        let mut buf = BytesMut::new();
        write_frame(&[7u8; 100], &mut buf);
        assert_eq!(decoder.decode(&mut buf).unwrap().unwrap().len(), 100);
    }

    #[test]
    fn incomplete_prefix_and_body_wait_for_more_bytes() {
        let decoder = FrameDecoder::default();
        let mut buf = BytesMut::from(&[0u8, 0, 0][..]);
        assert_eq!(decoder.decode(&mut buf), Ok(None));
        buf.extend_from_slice(&[5, 1, 2]);
        assert_eq!(decoder.decode(&mut buf), Ok(None));
        assert_eq!(buf.len(), 6, "nothing consumed while incomplete");
        buf.extend_from_slice(&[3, 4, 5]);
        assert_eq!(
            decoder.decode(&mut buf).unwrap().unwrap().as_ref(),
            &[1, 2, 3, 4, 5]
        );
    }

    #[test]
    fn begin_and_finish_frame_patch_the_size() {
        let mut out = BytesMut::new();
        out.extend_from_slice(b"xx");
        let at = begin_frame(&mut out);
        out.extend_from_slice(b"hello");
        finish_frame(&mut out, at);
        assert_eq!(&out[..], b"xx\0\0\0\x05hello");
    }
}
