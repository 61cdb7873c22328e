//! What metadata.version 4.3-IV0 … 4.4-IV2 (Kafka 4.3/4.4) change on the controller:
//! RegisterBrokerRecord v4 and cordoned log directories (KIP-1066), feature upgrades to the new
//! levels checked against every registered broker and controller, controller unregistration
//! records (KIP-1312) and CIDR ACL hosts (KIP-1276) replayed and kept.

use kafka_protocol::messages::broker_registration_request::Feature as BrokerFeature;
use kafka_protocol::messages::update_features_request::FeatureUpdateKey;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use kraftwerk_records::metadata::*;
use kraftwerk_records::metadata_version::MetadataVersion;
use uuid::Uuid;

use crate::controller::{ControllerRequest, ControllerResponse};
use crate::request::ControllerResult;
use crate::testing::{config, dir_of, registration, TestNode};

/// A registration like a Kafka 4.4.0 broker sends (metadata.version 7-33, share.version 0-2,
/// streams.version 0-1), with `dirs`.
fn registration_44(id: i32, dirs: Vec<Uuid>) -> BrokerRegistrationRequest {
    let feature = |name: &'static str, min: i16, max: i16| {
        BrokerFeature::default()
            .with_name(StrBytes::from_static_str(name))
            .with_min_supported_version(min)
            .with_max_supported_version(max)
    };
    registration(id, Uuid::from_u64_pair(id as u64, 1))
        .with_features(vec![
            feature("metadata.version", 7, 33),
            feature("kraft.version", 0, 1),
            feature("group.version", 0, 1),
            feature("transaction.version", 0, 2),
            feature("eligible.leader.replicas.version", 0, 1),
            feature("share.version", 0, 2),
            feature("streams.version", 0, 1),
        ])
        .with_log_dirs(dirs)
}

/// Registers and unfences 4.4 brokers `(id, dirs)`; returns their epochs.
fn add_44_brokers(node: &mut TestNode, brokers: &[(i32, Vec<Uuid>)]) -> Vec<i64> {
    let mut epochs = Vec::new();
    for (id, dirs) in brokers {
        let (response, _) = node.request(
            4,
            ControllerRequest::BrokerRegistration(registration_44(*id, dirs.clone())),
        );
        let ControllerResponse::BrokerRegistration(r) = response else {
            panic!("wrong response")
        };
        assert_eq!(r.error_code, 0, "registration of {id}");
        epochs.push(r.broker_epoch);
    }
    node.commit();
    for ((id, _), epoch) in brokers.iter().zip(&epochs) {
        let offset = node.next_offset();
        assert!(!node.heartbeat(*id, *epoch, false, false, offset).is_fenced);
    }
    node.commit();
    epochs
}

/// Appends and commits `records` as if this controller had written them.
fn append(node: &mut TestNode, records: Vec<ApiMessageAndVersion>) {
    node.append(&ControllerResult::of(records, ()));
    node.commit();
}

fn cordon(broker_id: i32, epoch: i64, dirs: Vec<Uuid>) -> ApiMessageAndVersion {
    ApiMessageAndVersion::new(
        BrokerRegistrationChangeRecord {
            broker_id,
            broker_epoch: epoch,
            cordoned_log_dirs: Some(dirs),
            ..Default::default()
        },
        3,
    )
}

#[test]
fn registrations_at_4_3_and_later_are_register_broker_record_v4() {
    for (mv, version) in [
        (MetadataVersion::V4_2_IV1, 3),
        (MetadataVersion::V4_3_IV0, 4),
        (MetadataVersion::V4_4_IV2, 4),
    ] {
        let mut node = TestNode::active(mv);
        add_44_brokers(&mut node, &[(1, vec![dir_of(1)])]);
        let versions: Vec<i16> = node
            .log
            .iter()
            .filter(|(_, r)| matches!(r.record, MetadataRecord::RegisterBroker(_)))
            .map(|(_, r)| r.version)
            .collect();
        assert_eq!(versions, vec![version], "{mv}");
    }
}

#[test]
fn cordoned_directories_are_kept_and_get_no_new_replicas() {
    let mut node = TestNode::active(MetadataVersion::V4_4_IV2);
    let two_dirs = vec![dir_of(5), Uuid::from_u64_pair(0x5555, 7)];
    let epochs = add_44_brokers(
        &mut node,
        &[
            (1, vec![dir_of(1)]),
            (2, vec![dir_of(2)]),
            (3, vec![dir_of(3)]),
            (4, vec![dir_of(4)]),
            (5, two_dirs.clone()),
        ],
    );
    // Broker 4's only directory is cordoned, one of broker 5's two.
    append(
        &mut node,
        vec![
            cordon(4, epochs[3], vec![dir_of(4)]),
            cordon(5, epochs[4], vec![two_dirs[0]]),
        ],
    );
    let image = node.controller.image();
    let b4 = image.cluster.broker(4).unwrap();
    assert_eq!(b4.cordoned_directories, Some(vec![dir_of(4)]));
    assert!(!b4.has_uncordoned_directories());
    assert!(image
        .cluster
        .broker(5)
        .unwrap()
        .has_uncordoned_directories());
    let usable: Vec<i32> = image.usable_brokers().iter().map(|b| b.id).collect();
    assert!(!usable.contains(&4) && usable.contains(&5), "{usable:?}");

    node.create_topic("t", 20, 3);
    let image = node.controller.image();
    let topic = image.topics.get_by_name("t").unwrap();
    let mut on_5 = 0;
    for p in topic.partitions.values() {
        assert!(
            !p.replicas.contains(&4),
            "replica on cordoned broker 4: {p:?}"
        );
        on_5 += usize::from(p.replicas.contains(&5));
    }
    assert!(on_5 > 0, "broker 5 still has an uncordoned directory");

    // The registration, cordoned directories included, survives image → records → image.
    let b4 = image.cluster.broker(4).unwrap().clone();
    let record = crate::write::register_broker_record(&b4, MetadataVersion::V4_4_IV2);
    assert_eq!(record.version, 4);
    let MetadataRecord::RegisterBroker(r) = &record.record else {
        panic!("{record:?}")
    };
    assert_eq!(r.cordoned_log_dirs, Some(vec![dir_of(4)]));

    // Uncordoning (an empty list) makes broker 4 usable again.
    append(&mut node, vec![cordon(4, epochs[3], vec![])]);
    let usable: Vec<i32> = node
        .controller
        .image()
        .usable_brokers()
        .iter()
        .map(|b| b.id)
        .collect();
    assert!(usable.contains(&4), "{usable:?}");
}

fn update(node: &mut TestNode, updates: &[(&'static str, i16)]) -> UpdateFeaturesResponse {
    let request = UpdateFeaturesRequest::default().with_feature_updates(
        updates
            .iter()
            .map(|(f, level)| {
                FeatureUpdateKey::default()
                    .with_feature(StrBytes::from_static_str(f))
                    .with_max_version_level(*level)
                    .with_upgrade_type(1)
            })
            .collect(),
    );
    let (response, _) = node.admin(1, ControllerRequest::UpdateFeatures(request));
    let ControllerResponse::UpdateFeatures(r) = response else {
        panic!()
    };
    r
}

#[test]
fn upgrades_to_4_4_levels_need_every_node_to_support_them() {
    // Two voters; the other one (3001) registered as a Kafka 4.3.1 controller would
    // (metadata.version up to 30, share.version up to 1).
    let mut cfg = config(MetadataVersion::V4_1_IV1);
    cfg.quorum_node_ids = vec![3000, 3001];
    let mut node = TestNode::new(cfg);
    node.become_leader();
    add_44_brokers(&mut node, &[(1, vec![dir_of(1)])]);
    let controller_43 = |mv_max: i16, share_max: i16| {
        let feature = |name: &str, max: i16| ControllerFeature {
            name: name.into(),
            min_supported_version: if name == "metadata.version" { 7 } else { 0 },
            max_supported_version: max,
            ..Default::default()
        };
        ApiMessageAndVersion::new(
            RegisterControllerRecord {
                controller_id: 3001,
                incarnation_id: Uuid::from_u64_pair(3001, 1),
                features: vec![
                    feature("metadata.version", mv_max),
                    feature("share.version", share_max),
                ],
                ..Default::default()
            },
            0,
        )
    };
    append(&mut node, vec![controller_43(30, 1)]);
    let r = update(&mut node, &[("metadata.version", 33)]);
    assert_eq!(r.error_code, 95);
    assert!(
        r.error_message
            .as_deref()
            .unwrap()
            .contains("Controller 3001 only supports versions 7-30"),
        "{:?}",
        r.error_message
    );
    let r = update(&mut node, &[("share.version", 2)]);
    assert_eq!(r.error_code, 95, "{:?}", r.error_message);
    // 4.3-IV0 is within everyone's range.
    let r = update(&mut node, &[("metadata.version", 30)]);
    assert_eq!(r.error_code, 0, "{:?}", r.error_message);
    node.commit();
    assert_eq!(
        node.controller.image().metadata_version(),
        MetadataVersion::V4_3_IV0
    );
    // Once 3001 runs 4.4 (re-registers), 4.4-IV2 and share.version 2 go through together.
    append(&mut node, vec![controller_43(33, 2)]);
    let r = update(&mut node, &[("metadata.version", 33), ("share.version", 2)]);
    assert_eq!(r.error_code, 0, "{:?}", r.error_message);
    node.commit();
    let image = node.controller.image();
    assert_eq!(image.metadata_version(), MetadataVersion::V4_4_IV2);
    assert_eq!(image.features.level("share.version"), 2);
}

#[test]
fn unregister_controller_and_cidr_acl_records_replay() {
    let mut node = TestNode::active(MetadataVersion::V4_4_IV2);
    let acl = AccessControlEntryRecord {
        id: Uuid::from_u64_pair(9, 9),
        resource_type: 2,
        resource_name: "t".into(),
        pattern_type: 3,
        principal: "User:alice".into(),
        host: "192.168.0.0/16".into(),
        operation: 3,
        permission_type: 3,
        ..Default::default()
    };
    append(
        &mut node,
        vec![
            ApiMessageAndVersion::new(acl.clone(), 0),
            ApiMessageAndVersion::new(
                RegisterControllerRecord {
                    controller_id: 3002,
                    ..Default::default()
                },
                0,
            ),
        ],
    );
    let image = node.controller.image();
    assert_eq!(
        image.other.acls.get(&acl.id).unwrap().host,
        "192.168.0.0/16"
    );
    assert!(image.cluster.controller(3002).is_some());
    append(
        &mut node,
        vec![ApiMessageAndVersion::new(
            UnregisterControllerRecord {
                controller_id: 3002,
                ..Default::default()
            },
            0,
        )],
    );
    assert!(node.controller.image().cluster.controller(3002).is_none());
}

#[test]
fn unregister_controller_follows_kafka_4_4() {
    use crate::handlers::unregistration::{unregister_controller, CONTROLLER_ID_NOT_REGISTERED};
    let register = |id: i32| {
        ApiMessageAndVersion::new(
            RegisterControllerRecord {
                controller_id: id,
                ..Default::default()
            },
            0,
        )
    };
    // Below 4.4-IV2: UNSUPPORTED_VERSION, even for a registered controller.
    let mut node = TestNode::active(MetadataVersion::V4_4_IV1);
    append(&mut node, vec![register(3001)]);
    let cfg = config(MetadataVersion::V4_4_IV1);
    let r = unregister_controller(node.controller.image(), &cfg, 3001);
    assert_eq!(r.response.code, 35);
    assert!(r.records.is_empty());

    let mut node = TestNode::active(MetadataVersion::V4_4_IV2);
    append(&mut node, vec![register(3001)]);
    let cfg = config(MetadataVersion::V4_4_IV2);
    // Itself (node 3000): INVALID_REQUEST.
    let r = unregister_controller(node.controller.image(), &cfg, 3000);
    assert_eq!(
        (r.response.code, r.response.message.as_deref()),
        (
            42,
            Some("Controller cannot unregister itself while it is active.")
        )
    );
    // Unknown id.
    let r = unregister_controller(node.controller.image(), &cfg, 3009);
    assert_eq!(
        (r.response.code, r.response.message.as_deref()),
        (
            CONTROLLER_ID_NOT_REGISTERED,
            Some("Controller ID 3009 is not currently registered.")
        )
    );
    assert!(r.records.is_empty());
    // A registered one: one UnregisterControllerRecord v0, and replay removes it.
    let r = unregister_controller(node.controller.image(), &cfg, 3001);
    assert_eq!(r.response.code, 0);
    assert!(r.atomic);
    assert_eq!(r.records.len(), 1);
    assert_eq!(r.records[0].version, 0);
    append(&mut node, r.records);
    assert!(node.controller.image().cluster.controller(3001).is_none());
    let r = unregister_controller(node.controller.image(), &cfg, 3001);
    assert_eq!(r.response.code, CONTROLLER_ID_NOT_REGISTERED);
}

#[test]
fn heartbeat_cordoned_dirs_become_registration_changes_only_when_they_change() {
    use crate::handlers::unregistration::cordoned_directories_record;
    let mut node = TestNode::active(MetadataVersion::V4_3_IV0);
    let epochs = add_44_brokers(&mut node, &[(1, vec![dir_of(1)])]);
    let image = node.controller.image();
    // No list (before RECOVERY) or an unknown broker: nothing.
    assert!(cordoned_directories_record(image, 1, epochs[0], None).is_none());
    assert!(cordoned_directories_record(image, 9, 0, Some(&[])).is_none());
    // The first list, even empty, is a change (the registration has none).
    let first = cordoned_directories_record(image, 1, epochs[0], Some(&[])).unwrap();
    assert_eq!(first.version, 3);
    append(&mut node, vec![first]);
    let image = node.controller.image();
    assert!(cordoned_directories_record(image, 1, epochs[0], Some(&[])).is_none());
    let cordon = cordoned_directories_record(image, 1, epochs[0], Some(&[dir_of(1)])).unwrap();
    let MetadataRecord::BrokerRegistrationChange(r) = &cordon.record else {
        panic!("{cordon:?}")
    };
    assert_eq!(r.cordoned_log_dirs, Some(vec![dir_of(1)]));
    append(&mut node, vec![cordon]);
    assert!(
        cordoned_directories_record(node.controller.image(), 1, epochs[0], Some(&[dir_of(1)]))
            .is_none()
    );
    // Before 4.3-IV0 the field is ignored.
    let mut old = TestNode::active(MetadataVersion::V4_2_IV1);
    let epochs = add_44_brokers(&mut old, &[(1, vec![dir_of(1)])]);
    assert!(
        cordoned_directories_record(old.controller.image(), 1, epochs[0], Some(&[dir_of(1)]))
            .is_none()
    );
}

/// The same two through the request dispatch, as a Kafka 4.4 client and broker send them:
/// UnregisterController (api 94) answers on the wire and writes the record; a BrokerHeartbeat v2
/// with `CordonedLogDirs` becomes the broker's registration change.
#[test]
fn unregister_controller_and_cordoned_heartbeats_are_served() {
    use crate::handlers::unregistration::CONTROLLER_ID_NOT_REGISTERED;
    let mut node = TestNode::active(MetadataVersion::V4_4_IV2);
    append(
        &mut node,
        vec![ApiMessageAndVersion::new(
            RegisterControllerRecord {
                controller_id: 3001,
                ..Default::default()
            },
            0,
        )],
    );
    let unregister = |node: &mut TestNode, id: i32| {
        let (response, _) = node.request(
            0,
            ControllerRequest::UnregisterController(
                UnregisterControllerRequest::default().with_controller_id(id),
            ),
        );
        let ControllerResponse::UnregisterController(r) = response else {
            panic!("wrong response")
        };
        (r.error_code, r.error_message.map(|m| m.to_string()))
    };
    assert_eq!(
        unregister(&mut node, 3009),
        (
            CONTROLLER_ID_NOT_REGISTERED,
            Some("Controller ID 3009 is not currently registered.".to_string())
        )
    );
    assert_eq!(unregister(&mut node, 3001), (0, None));
    node.commit();
    assert!(node.controller.image().cluster.controller(3001).is_none());

    let epochs = add_44_brokers(&mut node, &[(1, vec![dir_of(1), dir_of(2)])]);
    let offset = node.next_offset();
    let request = BrokerHeartbeatRequest::default()
        .with_broker_id(BrokerId(1))
        .with_broker_epoch(epochs[0])
        .with_current_metadata_offset(offset)
        .with_cordoned_log_dirs(Some(vec![dir_of(2)]));
    let (response, _) = node.request(2, ControllerRequest::BrokerHeartbeat(request));
    let ControllerResponse::BrokerHeartbeat(r) = response else {
        panic!("wrong response")
    };
    assert_eq!((r.error_code, r.is_fenced), (0, false));
    node.commit();
    let registration = node.controller.image().cluster.broker(1).unwrap();
    assert_eq!(registration.cordoned_directories, Some(vec![dir_of(2)]));
}
