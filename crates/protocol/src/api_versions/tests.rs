//! ApiVersions answers compared byte for byte with what an Apache Kafka 4.1.2 controller sent
//! (`testdata/java-4.1.2-controller-api-versions.txt`), given the same api list and features.

use super::*;
use crate::codec::{decode_request, encode_response, InboundRequest};
use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::ResponseKind;

const GOLDEN: &str = include_str!("../testdata/java-4.1.2-controller-api-versions.txt");

fn golden(label: &str) -> Vec<u8> {
    let line = GOLDEN
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| {
            l.strip_prefix(label)
                .and_then(|rest| rest.strip_prefix(' '))
        })
        .unwrap_or_else(|| panic!("no golden line {label}"));
    (0..line.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&line[i..i + 2], 16).unwrap())
        .collect()
}

/// The apis and versions the Java 4.1.2 controller advertised (`ApiKeys.apisForListener(CONTROLLER)`).
fn java_controller_table() -> ApiTable {
    use ApiKey::*;
    ApiTable::new([
        (Fetch, 4, 18),
        (SaslHandshake, 0, 1),
        (ApiVersions, 0, 4),
        (CreateTopics, 2, 7),
        (DeleteTopics, 1, 6),
        (DescribeAcls, 1, 3),
        (CreateAcls, 1, 3),
        (DeleteAcls, 1, 3),
        (DescribeConfigs, 1, 4),
        (AlterConfigs, 0, 2),
        (SaslAuthenticate, 0, 2),
        (CreatePartitions, 0, 3),
        (CreateDelegationToken, 1, 3),
        (RenewDelegationToken, 1, 2),
        (ExpireDelegationToken, 1, 2),
        (DescribeDelegationToken, 1, 3),
        (ElectLeaders, 0, 2),
        (IncrementalAlterConfigs, 0, 1),
        (AlterPartitionReassignments, 0, 1),
        (ListPartitionReassignments, 0, 0),
        (AlterClientQuotas, 0, 1),
        (DescribeUserScramCredentials, 0, 0),
        (AlterUserScramCredentials, 0, 0),
        (Vote, 0, 2),
        (BeginQuorumEpoch, 0, 1),
        (EndQuorumEpoch, 0, 1),
        (DescribeQuorum, 0, 2),
        (AlterPartition, 2, 3),
        (UpdateFeatures, 0, 2),
        (Envelope, 0, 0),
        (FetchSnapshot, 0, 1),
        (DescribeCluster, 0, 2),
        (BrokerRegistration, 0, 4),
        (BrokerHeartbeat, 0, 1),
        (UnregisterBroker, 0, 0),
        (AllocateProducerIds, 0, 0),
        (ControllerRegistration, 0, 0),
        (AssignReplicasToDirs, 0, 0),
        (AddRaftVoter, 0, 0),
        (RemoveRaftVoter, 0, 0),
        (UpdateRaftVoter, 0, 0),
    ])
    .unwrap()
}

/// The features the Java controller reported, in its order. `kraft.version` is finalized at 0,
/// which Java leaves out of `FinalizedFeatures`.
fn java_controller_features() -> ApiVersionsFeatures {
    let supported = |name: &str, min_version, max_version| SupportedFeature {
        name: name.into(),
        min_version,
        max_version,
    };
    ApiVersionsFeatures {
        supported: vec![
            supported("group.version", 0, 1),
            supported("kraft.version", 0, 1),
            supported("metadata.version", 7, 27),
            supported("share.version", 0, 1),
            supported("transaction.version", 0, 2),
            supported("eligible.leader.replicas.version", 0, 1),
        ],
        finalized: Some(FinalizedFeatures {
            epoch: 7,
            levels: vec![
                ("group.version".into(), 1),
                ("kraft.version".into(), 0),
                ("transaction.version".into(), 2),
                ("eligible.leader.replicas.version".into(), 1),
                ("metadata.version".into(), 27),
            ],
        }),
    }
}

/// Encodes the request the Java controller got (ClientSoftwareName apache-kafka-java / 4.1.2,
/// or `name` for the invalid case) and answers it the way the listener does.
fn answer(version: i16, software_name: &str) -> Vec<u8> {
    let table = java_controller_table();
    let mut payload = BytesMut::new();
    payload.put_i16(18);
    payload.put_i16(version);
    payload.put_i32(7);
    payload.put_i16(5);
    payload.put_slice(b"probe");
    if version >= 3 {
        payload.put_u8(0); // header tagged fields
        payload.put_u8(software_name.len() as u8 + 1);
        payload.put_slice(software_name.as_bytes());
        payload.put_u8(6);
        payload.put_slice(b"4.1.2");
        payload.put_u8(0);
    }
    let (response, response_version) =
        match decode_request(Bytes::from(payload.to_vec()), &table).unwrap() {
            InboundRequest::Request(request) => {
                let kafka_protocol::messages::RequestKind::ApiVersions(body) = &request.body else {
                    panic!("not ApiVersions")
                };
                (
                    answer_api_versions(body, version, &table, &java_controller_features()),
                    version,
                )
            }
            InboundRequest::UnsupportedApiVersions(_) => (unsupported_version_response(&table), 0),
        };
    encode_response(
        ApiKey::ApiVersions,
        response_version,
        7,
        &ResponseKind::ApiVersions(response),
    )
    .unwrap()
    .to_vec()
}

#[test]
fn matches_java_controller_bytes_at_every_version() {
    for version in 0..=4 {
        assert_eq!(
            answer(version, "apache-kafka-java"),
            golden(&version.to_string()),
            "ApiVersions v{version}"
        );
    }
}

#[test]
fn unsupported_version_falls_back_to_v0_like_java() {
    assert_eq!(answer(5, "apache-kafka-java"), golden("5"));
    // Any version above ours takes the same path.
    assert_eq!(answer(i16::MAX, "apache-kafka-java"), golden("5"));
}

#[test]
fn invalid_client_software_name_gets_invalid_request_like_java() {
    assert_eq!(answer(3, "bad name!"), golden("invalid3"));
}

#[test]
fn v3_drops_min_zero_features_but_v4_keeps_them() {
    let table = java_controller_table();
    let features = java_controller_features();
    let names = |v| -> Vec<String> {
        api_versions_response(&table, &features, v)
            .supported_features
            .iter()
            .map(|f| f.name.to_string())
            .collect()
    };
    assert_eq!(names(3), vec!["metadata.version"]);
    assert_eq!(names(4).len(), 6);
    assert!(names(2).is_empty(), "no features before v3");
}

#[test]
fn client_software_pattern_matches_kafka() {
    for ok in ["a", "apache-kafka-java", "4.1.2", "kraftwerk", "a.b-c", "0"] {
        assert!(is_valid_client_software_field(ok), "{ok}");
    }
    for bad in ["", "-a", "a-", ".", "a b", "a_b", "é"] {
        assert!(!is_valid_client_software_field(bad), "{bad}");
    }
}
