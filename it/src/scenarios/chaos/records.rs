//! Just enough of the metadata log's record format to check two things, decoded here
//! independently of kraftwerk's own codec: which leader each epoch's LeaderChange control
//! record names, and whether a broker was ever fenced (`FenceBrokerRecord`, or a
//! `BrokerRegistrationChangeRecord` with `Fenced=1`), plus how often each broker registered.
//!
//! Layout (Kafka's `DefaultRecordBatch`/`DefaultRecord`): records start 61 bytes into a v2
//! batch; each is `length varint, attributes int8, timestampDelta varlong, offsetDelta varint,
//! key (varint length + bytes), value (same), headers`. A control record's key is
//! `version int16, type int16` (2 = LEADER_CHANGE) and a LeaderChange value starts
//! `version int16, LeaderId int32`. A metadata record's value is `frame version uvarint,
//! api key uvarint, version uvarint` then the body (flexible: tagged fields at the end).

use anyhow::{bail, Context, Result};
use std::collections::{BTreeMap, BTreeSet};

use super::super::checks::LogBatch;

/// Control record type of a LeaderChange message.
const LEADER_CHANGE: i16 = 2;
/// Metadata record api keys.
const REGISTER_BROKER: u64 = 0;
const FENCE_BROKER: u64 = 7;
const BROKER_REGISTRATION_CHANGE: u64 = 17;

/// A byte cursor with Kafka's varints.
struct Cur<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Cur<'a> {
    fn new(b: &'a [u8]) -> Cur<'a> {
        Cur { b, pos: 0 }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).context("length overflow")?;
        let s = self
            .b
            .get(self.pos..end)
            .with_context(|| format!("need {n} bytes at {} of {}", self.pos, self.b.len()))?;
        self.pos = end;
        Ok(s)
    }

    fn i8(&mut self) -> Result<i8> {
        Ok(self.take(1)?[0] as i8)
    }

    fn i16(&mut self) -> Result<i16> {
        Ok(i16::from_be_bytes(self.take(2)?.try_into()?))
    }

    fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_be_bytes(self.take(4)?.try_into()?))
    }

    fn uvarint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.take(1)?[0];
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        bail!("varint longer than 10 bytes")
    }

    /// Zig-zag signed varint (also the varlong form).
    fn varint(&mut self) -> Result<i64> {
        let u = self.uvarint()?;
        Ok((u >> 1) as i64 ^ -((u & 1) as i64))
    }

    /// A varint-length-prefixed byte string (None for length -1).
    fn bytes(&mut self) -> Result<Option<&'a [u8]>> {
        let n = self.varint()?;
        if n < 0 {
            return Ok(None);
        }
        Ok(Some(self.take(n as usize)?))
    }
}

/// A record's key and value (None: null).
type KeyValue<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

/// `(key, value)` of every record of `batch` (uncompressed batches only: metadata logs are
/// written uncompressed).
pub fn records(batch: &LogBatch) -> Result<Vec<KeyValue<'_>>> {
    let b = &batch.bytes;
    let attributes = i16::from_be_bytes([b[21], b[22]]);
    if attributes & 0x7 != 0 {
        bail!(
            "batch at offset {} is compressed (attributes {attributes:#x}): not decoded",
            batch.base_offset
        );
    }
    let count = i32::from_be_bytes(b[57..61].try_into()?);
    let mut c = Cur::new(&b[61..]);
    let mut out = Vec::new();
    for _ in 0..count.max(0) {
        let len = c.varint()?;
        let mut r = Cur::new(c.take(len as usize)?);
        r.i8()?; // attributes
        r.varint()?; // timestamp delta
        r.varint()?; // offset delta
        let key = r.bytes()?;
        let value = r.bytes()?;
        out.push((key, value));
    }
    Ok(out)
}

/// `(epoch, leader)` of every LeaderChange record in `batches` (control batches).
pub fn leader_changes(batches: &[LogBatch]) -> Result<Vec<(i32, i32)>> {
    let mut out = Vec::new();
    for b in batches.iter().filter(|b| b.control) {
        for (key, value) in records(b)? {
            let mut k = Cur::new(key.context("control record without a key")?);
            k.i16()?;
            if k.i16()? != LEADER_CHANGE {
                continue;
            }
            let mut v = Cur::new(value.context("LeaderChange record without a value")?);
            v.i16()?;
            out.push((b.epoch, v.i32()?));
        }
    }
    Ok(out)
}

/// What the log says about brokers.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct BrokerHistory {
    /// Broker id → number of RegisterBrokerRecords.
    pub registrations: BTreeMap<i32, usize>,
    /// `(offset, broker id, what)` of every fencing record.
    pub fencings: Vec<(i64, i32, String)>,
}

/// Scans the data batches of `batches` below `upto` for broker registrations and fencing.
pub fn broker_history(batches: &[LogBatch], upto: i64) -> Result<BrokerHistory> {
    let mut h = BrokerHistory::default();
    for b in batches
        .iter()
        .filter(|b| !b.control && b.last_offset < upto)
    {
        for (i, (_, value)) in records(b)?.into_iter().enumerate() {
            let Some(value) = value else { continue };
            let offset = b.base_offset + i as i64;
            scan_metadata_record(value, offset, &mut h)
                .with_context(|| format!("decoding the record at offset {offset}"))?;
        }
    }
    Ok(h)
}

fn scan_metadata_record(value: &[u8], offset: i64, h: &mut BrokerHistory) -> Result<()> {
    let mut v = Cur::new(value);
    v.uvarint()?; // frame version
    let api_key = v.uvarint()?;
    let version = v.uvarint()?;
    match api_key {
        REGISTER_BROKER => {
            *h.registrations.entry(v.i32()?).or_default() += 1;
        }
        FENCE_BROKER => {
            let id = v.i32()?;
            h.fencings.push((offset, id, "FenceBrokerRecord".into()));
        }
        BROKER_REGISTRATION_CHANGE => {
            let id = v.i32()?;
            v.take(8)?; // broker epoch
            if fenced_tag(&mut v)? == Some(1) {
                h.fencings.push((
                    offset,
                    id,
                    format!("BrokerRegistrationChangeRecord v{version} Fenced=1"),
                ));
            }
        }
        _ => {}
    }
    Ok(())
}

/// The `Fenced` tagged field (tag 0, int8) of a BrokerRegistrationChangeRecord's tagged
/// fields, positioned at them.
fn fenced_tag(v: &mut Cur) -> Result<Option<i8>> {
    let n = v.uvarint()?;
    let mut fenced = None;
    for _ in 0..n {
        let tag = v.uvarint()?;
        let size = v.uvarint()? as usize;
        let data = v.take(size)?;
        if tag == 0 && size == 1 {
            fenced = Some(data[0] as i8);
        }
    }
    Ok(fenced)
}

/// Every epoch's leader by the LeaderChange records of all `logs` (a log's tail beyond the
/// high watermark included: a record that was later truncated still shows who led). Errors if
/// two records of one epoch name different leaders. Returns `epoch → leader`.
pub fn leader_per_epoch(logs: &[(String, Vec<LogBatch>)]) -> Result<BTreeMap<i32, i32>> {
    let mut seen: BTreeMap<i32, BTreeSet<(i32, String)>> = BTreeMap::new();
    for (name, batches) in logs {
        for (epoch, leader) in leader_changes(batches).with_context(|| format!("{name}'s log"))? {
            seen.entry(epoch)
                .or_default()
                .insert((leader, name.clone()));
        }
    }
    let mut out = BTreeMap::new();
    for (epoch, entries) in seen {
        let leaders: BTreeSet<i32> = entries.iter().map(|(l, _)| *l).collect();
        if leaders.len() > 1 {
            bail!("LeaderChange records of epoch {epoch} name different leaders: {entries:?}");
        }
        out.insert(epoch, *leaders.iter().next().expect("non-empty"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(v: i64, out: &mut Vec<u8>) {
        let mut u = ((v << 1) ^ (v >> 63)) as u64;
        loop {
            let b = (u & 0x7f) as u8;
            u >>= 7;
            if u == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }

    fn record(key: Option<&[u8]>, value: &[u8]) -> Vec<u8> {
        let mut body = vec![0u8];
        varint(0, &mut body);
        varint(0, &mut body);
        match key {
            Some(k) => {
                varint(k.len() as i64, &mut body);
                body.extend_from_slice(k);
            }
            None => varint(-1, &mut body),
        }
        varint(value.len() as i64, &mut body);
        body.extend_from_slice(value);
        varint(0, &mut body);
        let mut r = Vec::new();
        varint(body.len() as i64, &mut r);
        r.extend(body);
        r
    }

    fn batch(base: i64, epoch: i32, control: bool, recs: &[Vec<u8>]) -> LogBatch {
        let mut b = vec![0u8; 61];
        b[0..8].copy_from_slice(&base.to_be_bytes());
        b[12..16].copy_from_slice(&epoch.to_be_bytes());
        b[16] = 2;
        let attributes: i16 = if control { 0x20 } else { 0 };
        b[21..23].copy_from_slice(&attributes.to_be_bytes());
        b[23..27].copy_from_slice(&(recs.len() as i32 - 1).to_be_bytes());
        b[57..61].copy_from_slice(&(recs.len() as i32).to_be_bytes());
        for r in recs {
            b.extend_from_slice(r);
        }
        let len = (b.len() - 12) as i32;
        b[8..12].copy_from_slice(&len.to_be_bytes());
        let parsed = super::super::super::checks::parse_batches(&b);
        assert_eq!(parsed.len(), 1);
        parsed.into_iter().next().unwrap()
    }

    fn leader_change(epoch: i32, leader: i32) -> LogBatch {
        let key = [0u8, 0, 0, 2];
        let mut value = vec![0u8, 0];
        value.extend_from_slice(&leader.to_be_bytes());
        value.extend_from_slice(&[1, 1, 0]); // empty voters, granting voters, tags
        batch(10, epoch, true, &[record(Some(&key), &value)])
    }

    /// BrokerRegistrationChangeRecord v1 for `id` with `Fenced = fenced`.
    fn change(id: i32, fenced: i8) -> Vec<u8> {
        let mut v = vec![1u8, 17, 1];
        v.extend_from_slice(&id.to_be_bytes());
        v.extend_from_slice(&5i64.to_be_bytes());
        v.extend_from_slice(&[1, 0, 1, fenced as u8]);
        record(None, &v)
    }

    #[test]
    fn leader_changes_per_epoch() {
        let a = vec![leader_change(3, 1), leader_change(4, 2)];
        let b = vec![leader_change(4, 2), leader_change(5, 3)];
        let m = leader_per_epoch(&[("a".into(), a.clone()), ("b".into(), b)]).unwrap();
        assert_eq!(m.into_iter().collect::<Vec<_>>(), [(3, 1), (4, 2), (5, 3)]);
        let split = vec![leader_change(4, 3)];
        assert!(leader_per_epoch(&[("a".into(), a), ("c".into(), split)]).is_err());
    }

    #[test]
    fn fencing_is_found_and_unfencing_is_not() {
        let mut reg = vec![1u8, 0, 3];
        reg.extend_from_slice(&101i32.to_be_bytes());
        let b = batch(
            0,
            1,
            false,
            &[record(None, &reg), change(101, -1), change(102, 0)],
        );
        let h = broker_history(std::slice::from_ref(&b), 100).unwrap();
        assert_eq!(h.registrations.get(&101), Some(&1));
        assert!(h.fencings.is_empty());
        let f = batch(3, 1, false, &[change(102, 1)]);
        let h = broker_history(&[b, f], 100).unwrap();
        assert_eq!(h.fencings.len(), 1);
        assert_eq!((h.fencings[0].0, h.fencings[0].1), (3, 102));
    }
}
