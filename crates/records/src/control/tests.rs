use super::*;
use proptest::prelude::*;

#[test]
fn leader_change_value_layout() {
    let record = ControlRecord::leader_change(1, &[1, 2], &[2]);
    assert_eq!(record.encode_key(), [0, 0, 0, 2]);
    let expected: Vec<u8> = vec![
        0, 0, // Version 0
        0, 0, 0, 1, // LeaderId
        3, // Voters: compact length 2 + 1
        0, 0, 0, 1, 0, // VoterId 1, no tags
        0, 0, 0, 2, 0, // VoterId 2, no tags
        2, // GrantingVoters: 1 + 1
        0, 0, 0, 2, 0, // VoterId 2
        0, // no tagged fields
    ];
    assert_eq!(record.encode_value().as_ref(), expected.as_slice());
    assert_eq!(
        ControlRecord::decode(&record.encode_key(), &expected).unwrap(),
        record
    );
}

#[test]
fn snapshot_header_and_footer_layout() {
    let header = ControlRecord::snapshot_header(0x0102_0304_0506_0708);
    assert_eq!(header.encode_key(), [0, 0, 0, 3]);
    assert_eq!(
        header.encode_value().as_ref(),
        &[0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0]
    );
    let footer = ControlRecord::snapshot_footer();
    assert_eq!(footer.encode_key(), [0, 0, 0, 4]);
    assert_eq!(footer.encode_value().as_ref(), &[0, 0, 0]);
}

#[test]
fn a_leader_change_batch_decodes_back() {
    let records = [
        ControlRecord::leader_change(3, &[1, 2, 3], &[3, 1]),
        ControlRecord::kraft_version(1),
    ];
    let batch = control_batch(100, 7, 1234, &records);
    let (header, decoded) = decode_control_batch(&batch).unwrap();
    assert!(header.is_control());
    assert_eq!(
        (
            header.base_offset,
            header.partition_leader_epoch,
            header.max_timestamp
        ),
        (100, 7, 1234)
    );
    assert_eq!(
        decoded,
        vec![(100, records[0].clone()), (101, records[1].clone())]
    );
}

#[test]
fn bad_keys_and_values_are_rejected() {
    let value = ControlRecord::snapshot_footer().encode_value();
    assert!(
        ControlRecord::decode(&[0, 0, 0], &value).is_err(),
        "short key"
    );
    assert!(
        ControlRecord::decode(&[0xff, 0xff, 0, 4], &value).is_err(),
        "negative key version"
    );
    assert!(
        ControlRecord::decode(&[0, 0, 0, 0], &value).is_err(),
        "ABORT marker"
    );
    assert!(
        ControlRecord::decode(&[0, 0, 0, 7], &value).is_err(),
        "unknown type"
    );
    assert!(
        ControlRecord::decode(&[0, 0, 0, 4], &[]).is_err(),
        "empty value"
    );
    assert!(
        ControlRecord::decode(&[0, 0, 0, 4], &[0, 0, 0, 0]).is_err(),
        "trailing byte"
    );
    // Key versions above 0 are accepted (Java only logs them).
    assert_eq!(
        ControlRecord::decode(&[0, 1, 0, 4], &value).unwrap(),
        ControlRecord::snapshot_footer()
    );
    // A voters array claiming 2^31 entries must fail cleanly, not allocate.
    let huge = [0u8, 0, 0xff, 0xff, 0xff, 0xff, 0x07, 0];
    assert!(ControlRecord::decode(&[0, 0, 0, 6], &huge).is_err());
}

#[test]
fn data_batches_are_not_control_batches() {
    let mut b = BatchBuilder::new(0, 0, 0);
    b.append(None, &[1, 2]);
    assert!(decode_control_batch(&b.build()).is_err());
}

fn arb_tags() -> impl Strategy<Value = BTreeMap<i32, Bytes>> {
    prop::collection::btree_map(
        0i32..1000,
        prop::collection::vec(any::<u8>(), 0..8).prop_map(Bytes::from),
        0..3,
    )
}

fn arb_voters_record() -> impl Strategy<Value = ControlRecord> {
    let endpoint = (
        "[a-zA-Z_]{1,12}",
        "[a-z0-9.-]{1,30}",
        any::<u16>(),
        arb_tags(),
    )
        .prop_map(|(n, h, p, t)| {
            Endpoint::default()
                .with_name(StrBytes::from_string(n))
                .with_host(StrBytes::from_string(h))
                .with_port(p)
                .with_unknown_tagged_fields(t)
        });
    let voter = (
        any::<i32>(),
        any::<u128>(),
        prop::collection::vec(endpoint, 0..3),
        any::<i16>(),
        any::<i16>(),
    )
        .prop_map(|(id, dir, endpoints, min, max)| {
            Voter::default()
                .with_voter_id(BrokerId(id))
                .with_voter_directory_id(uuid::Uuid::from_u128(dir))
                .with_endpoints(endpoints)
                .with_k_raft_version_feature(
                    KRaftVersionFeature::default()
                        .with_min_supported_version(min)
                        .with_max_supported_version(max),
                )
        });
    (prop::collection::vec(voter, 0..4), arb_tags()).prop_map(|(voters, tags)| {
        ControlRecord::Voters(
            VotersRecord::default()
                .with_voters(voters)
                .with_unknown_tagged_fields(tags),
        )
    })
}

fn arb_control_record() -> impl Strategy<Value = ControlRecord> {
    let ids = || prop::collection::vec(any::<i32>(), 0..5);
    prop_oneof![
        (any::<i32>(), ids(), ids()).prop_map(|(l, v, g)| ControlRecord::leader_change(l, &v, &g)),
        any::<i64>().prop_map(ControlRecord::snapshot_header),
        Just(ControlRecord::snapshot_footer()),
        any::<i16>().prop_map(ControlRecord::kraft_version),
        arb_voters_record(),
    ]
}

proptest! {
    #[test]
    fn control_batches_round_trip(records in prop::collection::vec(arb_control_record(), 1..6), base in 0i64..1 << 40) {
        let batch = control_batch(base, 3, 99, &records);
        let (_, decoded) = decode_control_batch(&batch).unwrap();
        let expected: Vec<_> = records.iter().cloned().enumerate().map(|(i, r)| (base + i as i64, r)).collect();
        prop_assert_eq!(&decoded, &expected);
        for (_, r) in &decoded {
            let value = r.encode_value();
            prop_assert_eq!(ControlRecord::decode(&r.encode_key(), &value).unwrap().encode_value(), value);
        }
    }

    #[test]
    fn corrupted_values_never_panic(record in arb_control_record(), at in any::<prop::sample::Index>(), byte: u8, cut in any::<prop::sample::Index>()) {
        let mut value = record.encode_value().to_vec();
        let i = at.index(value.len());
        value[i] = byte;
        let _ = ControlRecord::decode(&record.encode_key(), &value);
        let _ = ControlRecord::decode(&record.encode_key(), &value[..cut.index(value.len())]);
    }
}
