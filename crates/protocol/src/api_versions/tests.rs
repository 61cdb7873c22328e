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
                    answer_api_versions(body, version, &table, &java_controller_features(), None),
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

/// A v5 request frame built by hand from Kafka 4.4's schema: header v2, then
/// ClientSoftwareName, ClientSoftwareVersion, ClusterId (compact nullable string), NodeId.
fn v5_request_frame(cluster_id: Option<&[u8]>, node_id: i32) -> Bytes {
    let mut payload = BytesMut::new();
    payload.put_i16(18);
    payload.put_i16(5);
    payload.put_i32(9);
    payload.put_i16(5);
    payload.put_slice(b"probe");
    payload.put_u8(0); // header tagged fields
    payload.put_u8(18);
    payload.put_slice(b"apache-kafka-java");
    payload.put_u8(6);
    payload.put_slice(b"4.4.0");
    match cluster_id {
        None => payload.put_u8(0),
        Some(id) => {
            payload.put_u8(id.len() as u8 + 1);
            payload.put_slice(id);
        }
    }
    payload.put_i32(node_id);
    payload.put_u8(0);
    payload.freeze()
}

fn table_with_v5() -> ApiTable {
    ApiTable::new([(ApiKey::ApiVersions, 0, 5), (ApiKey::Vote, 0, 2)]).unwrap()
}

fn decode_v5(frame: Bytes) -> ApiVersionsRequest {
    match decode_request(frame, &table_with_v5()).unwrap() {
        InboundRequest::Request(request) => match request.body {
            kafka_protocol::messages::RequestKind::ApiVersions(body) => body,
            other => panic!("not ApiVersions: {other:?}"),
        },
        InboundRequest::UnsupportedApiVersions(_) => panic!("v5 is in the table"),
    }
}

fn ours() -> ServerIdentity {
    ServerIdentity {
        cluster_id: "MkU3OEVBNTcwNTJENDM2Qg".into(),
        node_id: 3000,
    }
}

fn answer_code(
    request: &ApiVersionsRequest,
    version: i16,
    identity: Option<&ServerIdentity>,
) -> i16 {
    let features = java_controller_features();
    answer_api_versions(request, version, &table_with_v5(), &features, identity).error_code
}

#[test]
fn v5_request_fields_decode_from_kafkas_layout() {
    let request = decode_v5(v5_request_frame(Some(b"MkU3OEVBNTcwNTJENDM2Qg"), 3000));
    assert_eq!(
        request.cluster_id.as_deref(),
        Some("MkU3OEVBNTcwNTJENDM2Qg")
    );
    assert_eq!(request.node_id, 3000);
    let absent = decode_v5(v5_request_frame(None, -1));
    assert_eq!((absent.cluster_id, absent.node_id), (None, -1));
}

#[test]
fn v5_identity_mismatch_is_rebootstrap_required() {
    let id = ours();
    let rebootstrap = ResponseError::RebootstrapRequired.code();
    assert_eq!(rebootstrap, 129);
    let ok = decode_v5(v5_request_frame(Some(b"MkU3OEVBNTcwNTJENDM2Qg"), 3000));
    assert_eq!(answer_code(&ok, 5, Some(&id)), 0);
    let other_cluster = decode_v5(v5_request_frame(Some(b"AAAAAAAAAAAAAAAAAAAAAA"), 3000));
    assert_eq!(answer_code(&other_cluster, 5, Some(&id)), rebootstrap);
    let other_node = decode_v5(v5_request_frame(Some(b"MkU3OEVBNTcwNTJENDM2Qg"), 3001));
    assert_eq!(answer_code(&other_node, 5, Some(&id)), rebootstrap);
    // A ClusterId without a NodeId (-1) does not match either, as in KafkaApis.
    let no_node = decode_v5(v5_request_frame(Some(b"MkU3OEVBNTcwNTJENDM2Qg"), -1));
    assert_eq!(answer_code(&no_node, 5, Some(&id)), rebootstrap);
    // No ClusterId: nothing to check, whatever the NodeId.
    let no_cluster = decode_v5(v5_request_frame(None, 77));
    assert_eq!(answer_code(&no_cluster, 5, Some(&id)), 0);
    // Below v5 the fields do not exist; without an identity nothing is checked.
    assert_eq!(answer_code(&other_cluster, 4, Some(&id)), 0);
    assert_eq!(answer_code(&other_cluster, 5, None), 0);
}

#[test]
fn v5_rebootstrap_answer_is_the_bare_error_and_invalid_comes_first() {
    let id = ours();
    let mut request = decode_v5(v5_request_frame(Some(b"other"), 1));
    let response = answer_api_versions(
        &request,
        5,
        &table_with_v5(),
        &java_controller_features(),
        Some(&id),
    );
    assert_eq!(response, rebootstrap_required_response());
    assert!(response.api_keys.is_empty() && response.finalized_features.is_empty());
    request.client_software_name = StrBytes::from_static_str("bad name!");
    assert_eq!(
        answer_code(&request, 5, Some(&id)),
        ResponseError::InvalidRequest.code()
    );
}

#[test]
fn v5_response_encodes_like_v4() {
    // The v5 response schema is v4's: the same body bytes at both versions.
    let response = api_versions_response(&java_controller_table(), &java_controller_features(), 5);
    let encode = |v| {
        encode_response(
            ApiKey::ApiVersions,
            v,
            7,
            &ResponseKind::ApiVersions(response.clone()),
        )
        .unwrap()
    };
    assert_eq!(encode(5), encode(4));
}

#[test]
fn hostile_v5_cluster_ids_are_decode_errors() {
    // A ClusterId claiming more bytes than the frame holds.
    let mut frame = v5_request_frame(Some(b"abc"), 1).to_vec();
    let at = frame.len() - 1 - 4 - 3 - 1;
    frame[at] = 0x7f;
    assert!(decode_request(Bytes::from(frame), &table_with_v5()).is_err());
    // A ClusterId that is not UTF-8.
    let frame = v5_request_frame(Some(&[0xff, 0xfe, 0xfd]), 1);
    assert!(decode_request(frame, &table_with_v5()).is_err());
    // A varint length of 2^35: longer than any frame.
    let mut frame = v5_request_frame(None, 1).to_vec();
    let at = frame.len() - 1 - 4 - 1;
    frame.splice(at..=at, [0xff, 0xff, 0xff, 0xff, 0x7f]);
    assert!(decode_request(Bytes::from(frame), &table_with_v5()).is_err());
}

#[test]
fn no_finalized_features_means_epoch_minus_one_and_none_listed() {
    // KAFKA-19964: what Kafka 4.4's controller answers before its loader caught up.
    let features = ApiVersionsFeatures {
        finalized: None,
        ..java_controller_features()
    };
    let response = api_versions_response(&java_controller_table(), &features, 4);
    assert_eq!(response.finalized_features_epoch, -1);
    assert!(response.finalized_features.is_empty());
    assert_eq!(response.supported_features.len(), 6);
}
