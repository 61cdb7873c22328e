use super::*;
use proptest::prelude::*;

/// Our one-record data batch, written out field by field from the layout in the module docs of `batch.rs`.
fn hand_made_batch() -> Vec<u8> {
    let record: [u8; 8] = [
        0x0e, // length 7 (zig-zag 14)
        0x00, // attributes
        0x00, // timestampDelta 0
        0x00, // offsetDelta 0
        0x01, // key length -1 (null)
        0x02, // value length 1
        0xab, // value
        0x00, // header count
    ];
    let mut b = Vec::new();
    b.extend_from_slice(&5i64.to_be_bytes()); // base offset
    b.extend_from_slice(&57i32.to_be_bytes()); // length = 69 - 12
    b.extend_from_slice(&3i32.to_be_bytes()); // partition leader epoch
    b.push(2); // magic
    b.extend_from_slice(&[0, 0, 0, 0]); // crc, filled below
    b.extend_from_slice(&0i16.to_be_bytes()); // attributes
    b.extend_from_slice(&0i32.to_be_bytes()); // last offset delta
    b.extend_from_slice(&1000i64.to_be_bytes()); // base timestamp
    b.extend_from_slice(&1000i64.to_be_bytes()); // max timestamp
    b.extend_from_slice(&(-1i64).to_be_bytes()); // producer id
    b.extend_from_slice(&(-1i16).to_be_bytes()); // producer epoch
    b.extend_from_slice(&(-1i32).to_be_bytes()); // base sequence
    b.extend_from_slice(&1i32.to_be_bytes()); // records count
    b.extend_from_slice(&record);
    let crc = crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

#[test]
fn builder_matches_the_documented_layout() {
    let mut builder = BatchBuilder::new(5, 3, 1000);
    builder.append(None, &[0xab]);
    assert_eq!(builder.estimated_size_bytes(), 69);
    let built = builder.build();
    assert_eq!(built.as_ref(), hand_made_batch().as_slice());
    let h = BatchHeader::parse(&built).unwrap();
    assert_eq!(
        (h.base_offset, h.length, h.partition_leader_epoch),
        (5, 57, 3)
    );
    assert_eq!(
        (h.last_offset(), h.next_offset(), h.size_bytes()),
        (5, 6, 69)
    );
    assert!(!h.is_control());
    assert_eq!(h.compression(), 0);
    assert_eq!(
        decode_records(&built).unwrap(),
        vec![Record {
            offset: 5,
            key: None,
            value: Some(Bytes::from_static(&[0xab]))
        }]
    );
}

#[test]
fn crc32c_is_castagnoli() {
    // The standard CRC-32C check value; CRC-32 (IEEE) would give 0xcbf43926.
    assert_eq!(crc32c::crc32c(b"123456789"), 0xe306_9283);
}

#[test]
fn leader_epoch_and_base_offset_are_outside_the_crc() {
    let mut b = hand_made_batch();
    set_base_offset(&mut b, 1 << 40);
    set_partition_leader_epoch(&mut b, 77);
    verify_crc(&b).unwrap();
    let h = BatchHeader::parse(&b).unwrap();
    assert_eq!((h.base_offset, h.partition_leader_epoch), (1 << 40, 77));
    // Any byte inside the CRC range is covered.
    b[30] ^= 1;
    assert!(matches!(
        verify_crc(&b),
        Err(BatchError::CrcMismatch { .. })
    ));
}

#[test]
fn control_batches_set_bit_5_and_require_kraft_types() {
    let mut builder = BatchBuilder::new(0, 1, 0).control();
    builder.append(Some(&[0, 0, 0, 2]), &[0, 0, 0, 0, 0, 0, 0, 0, 0]);
    let built = builder.build();
    let h = BatchHeader::parse(&built).unwrap();
    assert!(h.is_control());
    assert_eq!(h.attributes, 0x20);
    decode_records(&built).unwrap();

    // ABORT (0) and COMMIT (1) are transaction markers, never valid in KRaft.
    let mut builder = BatchBuilder::new(0, 1, 0).control();
    builder.append(Some(&[0, 0, 0, 1]), &[1]);
    assert!(matches!(
        decode_records(&builder.build()),
        Err(BatchError::InvalidRecord(_))
    ));
}

#[test]
fn java_reader_rules_are_enforced() {
    // Patch single record fields of the hand-made batch and recompute the CRC.
    let patch = |at: usize, byte: u8| {
        let mut b = hand_made_batch();
        b[61 + at] = byte;
        let crc = crc32c::crc32c(&b[21..]);
        b[17..21].copy_from_slice(&crc.to_be_bytes());
        decode_records(&b)
    };
    assert!(patch(2, 0x02).is_err(), "timestampDelta 1");
    assert!(patch(3, 0x02).is_err(), "offsetDelta 1 at index 0");
    assert!(patch(7, 0x02).is_err(), "one header");
    assert!(patch(5, 0x01).is_err(), "null value");
    assert!(
        patch(5, 0x00).is_err(),
        "value length 0 leaves a stray byte"
    );
    assert!(patch(0, 0x00).is_err(), "record length 0");
    patch(1, 0x05).expect("record attributes are unused, as in Java");
}

#[test]
fn batch_iter_stops_at_incomplete_tail_and_reports_garbage() {
    let one = hand_made_batch();
    let mut two = one.clone();
    two.extend_from_slice(&one);
    assert_eq!(batches(&two).count(), 2);
    for cut in 0..two.len() {
        let got: Vec<_> = batches(&two[..cut]).collect();
        assert_eq!(got.len(), cut / one.len(), "cut at {cut}");
        assert!(got.iter().all(|r| r.is_ok()));
    }
    let mut bad = one.clone();
    bad[8..12].copy_from_slice(&10i32.to_be_bytes());
    assert_eq!(
        batches(&bad).collect::<Vec<_>>(),
        vec![Err(BatchError::BadLength(10))]
    );
    let mut bad = one.clone();
    bad[16] = 1;
    assert_eq!(
        batches(&bad[..20]).collect::<Vec<_>>(),
        vec![Err(BatchError::BadMagic(1))]
    );
}

#[test]
fn valid_prefix_requires_contiguous_offsets() {
    let mut buf = Vec::new();
    let mut b = BatchBuilder::new(10, 1, 0);
    b.append(None, b"a");
    b.append(None, b"b");
    buf.extend_from_slice(&b.build());
    let mut b = BatchBuilder::new(12, 1, 0);
    b.append(None, b"c");
    buf.extend_from_slice(&b.build());
    let good_len = buf.len();
    let mut b = BatchBuilder::new(14, 1, 0); // gap: 13 expected
    b.append(None, b"d");
    buf.extend_from_slice(&b.build());

    let p = valid_prefix(&buf);
    assert_eq!(p.bytes, good_len);
    assert_eq!(
        p.headers.iter().map(|h| h.base_offset).collect::<Vec<_>>(),
        vec![10, 12]
    );
    assert_eq!(
        p.stopped_because,
        Some(BatchError::NonContiguous {
            expected: 13,
            found: 14
        })
    );

    let p = valid_prefix(&buf[..good_len]);
    assert_eq!((p.bytes, p.stopped_because), (good_len, None));
    let p = valid_prefix(&buf[..good_len + 5]);
    assert_eq!(p.bytes, good_len);
    assert!(matches!(
        p.stopped_because,
        Some(BatchError::Truncated { available: 5, .. })
    ));
}

#[test]
fn builder_enforces_record_and_size_bounds() {
    let mut b = BatchBuilder::new(0, 0, 0);
    for _ in 0..MAX_RECORDS_PER_BATCH {
        b.append(None, b"x");
    }
    assert!(!b.has_room_for(None, b"x"));
    assert!(b.try_append(None, b"x").is_err());
    assert_eq!(
        decode_records(&b.build()).unwrap().len(),
        MAX_RECORDS_PER_BATCH
    );

    let mut b = BatchBuilder::new(0, 0, 0);
    let big = vec![7u8; MAX_BATCH_BYTES - 100];
    b.append(None, &big);
    assert!(b.try_append(None, &[1; 100]).is_err());
    let built = b.build();
    assert!(built.len() <= MAX_BATCH_BYTES);
    assert_eq!(
        decode_records(&built).unwrap()[0].value.as_deref(),
        Some(&big[..])
    );
}

#[test]
#[should_panic(expected = "no key")]
fn data_records_with_keys_are_refused() {
    BatchBuilder::new(0, 0, 0).append(Some(b"k"), b"v");
}

fn arb_batch() -> impl Strategy<Value = (i64, i32, i64, bool, Vec<Vec<u8>>)> {
    (
        0i64..(1 << 50),
        any::<i32>(),
        any::<i64>(),
        any::<bool>(),
        prop::collection::vec(prop::collection::vec(any::<u8>(), 1..300), 1..20),
    )
}

fn build((base, epoch, ts, control, values): &(i64, i32, i64, bool, Vec<Vec<u8>>)) -> Bytes {
    let mut b = BatchBuilder::new(*base, *epoch, *ts);
    if *control {
        b = b.control();
    }
    for v in values {
        b.append(control.then_some(&[0u8, 0, 0, 5][..]), v);
    }
    b.build()
}

proptest! {
    #[test]
    fn built_batches_parse_and_decode_identically(input in arb_batch()) {
        let built = build(&input);
        let (base, epoch, ts, control, values) = &input;
        let h = BatchHeader::parse(&built).unwrap();
        prop_assert_eq!(h.size_bytes(), built.len());
        prop_assert_eq!((h.base_offset, h.partition_leader_epoch), (*base, *epoch));
        prop_assert_eq!((h.base_timestamp, h.max_timestamp), (*ts, *ts));
        prop_assert_eq!(h.records_count as usize, values.len());
        prop_assert_eq!(h.is_control(), *control);
        let records = decode_records(&built).unwrap();
        for (i, (r, v)) in records.iter().zip(values).enumerate() {
            prop_assert_eq!(r.offset, base + i as i64);
            prop_assert_eq!(r.value.as_deref(), Some(&v[..]));
            prop_assert_eq!(r.key.is_some(), *control);
        }
        let p = valid_prefix(&built);
        prop_assert_eq!((p.bytes, p.stopped_because), (built.len(), None));
    }

    #[test]
    fn any_bit_flip_is_detected(input in arb_batch(), bit in any::<prop::sample::Index>()) {
        let mut b = build(&input).to_vec();
        let bit = bit.index(b.len() * 8);
        b[bit / 8] ^= 1 << (bit % 8);
        let at = bit / 8;
        let decoded = decode_records(&b);
        let prefix = valid_prefix(&b);
        if at < 8 || (12..16).contains(&at) {
            // Base offset and leader epoch are not covered by the CRC; a flip there may
            // still break the offset-range check (negative base offset).
            prop_assert_eq!(decoded.is_ok(), prefix.stopped_because.is_none());
        } else {
            prop_assert!(decoded.is_err(), "flip at byte {} accepted", at);
            prop_assert_eq!(prefix.bytes, 0);
            prop_assert!(prefix.stopped_because.is_some());
        }
    }

    #[test]
    fn truncation_stops_iteration_cleanly(input in arb_batch(), cut in any::<prop::sample::Index>()) {
        let built = build(&input);
        let mut two = built.to_vec();
        two.extend_from_slice(&built);
        let cut = cut.index(two.len());
        let items: Vec<_> = batches(&two[..cut]).collect();
        prop_assert_eq!(items.len(), cut / built.len());
        prop_assert!(items.iter().all(|i| i.is_ok()));
        prop_assert!(decode_records(&built[..cut.min(built.len() - 1)]).is_err());
    }

    #[test]
    fn random_bytes_never_panic(buf in prop::collection::vec(any::<u8>(), 0..200)) {
        let _ = valid_prefix(&buf);
        let _ = decode_records(&buf);
        for item in batches(&buf) {
            let _ = item;
        }
    }
}
