//! Record batch helpers shared by the targets: repairing CRCs so mutations reach the record
//! decoders, and decoding everything a batch holds.

use kraftwerk_records::batch::{self, BATCH_HEADER_BYTES, LOG_OVERHEAD};
use kraftwerk_records::control::decode_control_batch;
use kraftwerk_records::metadata::ApiMessageAndVersion;

/// Where a batch's CRC-32C is stored, and where the bytes it covers start.
const CRC_OFFSET: usize = 17;
const CRC_START: usize = 21;

/// Recomputes the CRC of every whole batch at the front of `buf` (stopping at the first length
/// that does not fit). A mutation almost never keeps a CRC valid; with this, inputs that ask
/// for it get past the check into the header and record decoders, while inputs that do not
/// still exercise the CRC failures.
pub fn fix_crcs(buf: &mut [u8]) {
    let mut pos = 0;
    while buf.len() - pos >= BATCH_HEADER_BYTES {
        let length = i32::from_be_bytes(buf[pos + 8..pos + 12].try_into().expect("4 bytes"));
        let Some(size) = usize::try_from(length)
            .ok()
            .and_then(|l| l.checked_add(LOG_OVERHEAD))
            .filter(|&s| s >= BATCH_HEADER_BYTES && s <= buf.len() - pos)
        else {
            return;
        };
        let crc = crc32c::crc32c(&buf[pos + CRC_START..pos + size]);
        buf[pos + CRC_OFFSET..pos + CRC_START].copy_from_slice(&crc.to_be_bytes());
        pos += size;
    }
}

/// Decodes every batch in `buf` and every record in it (control records as KRaft control
/// records, data records as metadata records). Errors are typed and ignored: only panics count.
/// Returns the number of whole batches walked.
pub fn decode_all(buf: &[u8]) -> usize {
    let mut count = 0;
    for item in batch::batches(buf) {
        let Ok((header, bytes)) = item else { break };
        count += 1;
        if header.is_control() {
            if let Err(e) = decode_control_batch(bytes) {
                drop(e.to_string());
            }
            continue;
        }
        match batch::decode_batch(bytes) {
            Ok((_, records)) => {
                for value in records.iter().filter_map(|r| r.value.as_ref()) {
                    if let Ok(record) = ApiMessageAndVersion::decode(value) {
                        // What decodes must encode again (the controller rewrites snapshots).
                        if let Err(e) = record.encode() {
                            drop(e.to_string());
                        }
                    }
                }
            }
            Err(e) => drop(e.to_string()),
        }
    }
    count
}
