use std::collections::{BTreeSet, HashMap};

use super::*;

fn brokers(specs: &[(i32, Option<&str>, bool)]) -> Vec<UsableBroker> {
    specs
        .iter()
        .map(|(id, rack, fenced)| UsableBroker {
            id: *id,
            rack: rack.map(str::to_owned),
            fenced: *fenced,
        })
        .collect()
}

#[test]
fn errors_match_kafka() {
    let mut rng = JavaRandom::new(1);
    let b = brokers(&[(1, None, false)]);
    assert_eq!(
        place(&mut rng, &b, 1, 3).unwrap_err(),
        "The target replication factor of 3 cannot be reached because only 1 broker(s) are registered."
    );
    let fenced = brokers(&[(1, None, true), (2, None, true)]);
    assert_eq!(
        place(&mut rng, &fenced, 1, 1).unwrap_err(),
        "All brokers are currently fenced."
    );
    assert!(place(&mut rng, &b, 1, 0)
        .unwrap_err()
        .contains("must be positive"));
}

#[test]
fn replicas_are_distinct_and_unfenced_brokers_lead() {
    for seed in 0..50 {
        let mut rng = JavaRandom::new(seed);
        let b = brokers(&[
            (1, None, false),
            (2, None, false),
            (3, None, true),
            (4, None, false),
        ]);
        let placed = place(&mut rng, &b, 20, 3).unwrap();
        for replicas in &placed {
            let distinct: BTreeSet<i32> = replicas.iter().copied().collect();
            assert_eq!(distinct.len(), 3, "{replicas:?}");
            assert_ne!(
                replicas[0], 3,
                "a fenced broker must not be first: {replicas:?}"
            );
        }
    }
}

#[test]
fn leadership_is_spread_evenly() {
    let mut rng = JavaRandom::new(9);
    let b = brokers(&[(1, None, false), (2, None, false), (3, None, false)]);
    let placed = place(&mut rng, &b, 30, 2).unwrap();
    let mut leaders: HashMap<i32, usize> = HashMap::new();
    for replicas in &placed {
        *leaders.entry(replicas[0]).or_default() += 1;
    }
    assert_eq!(
        leaders.values().copied().collect::<BTreeSet<_>>(),
        BTreeSet::from([10])
    );
}

#[test]
fn replicas_spread_over_racks() {
    let mut rng = JavaRandom::new(3);
    let b = brokers(&[
        (1, Some("a"), false),
        (2, Some("a"), false),
        (3, Some("b"), false),
        (4, Some("b"), false),
        (5, Some("c"), false),
        (6, Some("c"), false),
    ]);
    let rack_of = |id: i32| ((id - 1) / 2) as usize;
    for replicas in place(&mut rng, &b, 40, 3).unwrap() {
        let racks: BTreeSet<usize> = replicas.iter().map(|r| rack_of(*r)).collect();
        assert_eq!(racks.len(), 3, "{replicas:?}");
    }
}

/// Differential test against Kafka 4.1.2's `StripedReplicaPlacer` with the same seeds
/// (`testdata/PlacementVectors.java`): 1500 random clusters with racks and fenced brokers.
#[test]
fn java_vectors() {
    let text = include_str!("../../testdata/placement_vectors.txt");
    let mut checked = 0;
    for (number, line) in text.lines().enumerate() {
        let (case, expected) = line.split_once(" => ").unwrap();
        let fields: HashMap<&str, &str> = case
            .split(' ')
            .map(|kv| kv.split_once('=').unwrap())
            .collect();
        let seed: i64 = fields["seed"].parse().unwrap();
        let partitions: usize = fields["partitions"].parse().unwrap();
        let rf: i32 = fields["rf"].parse().unwrap();
        let cluster: Vec<UsableBroker> = fields["brokers"]
            .split(',')
            .map(|b| {
                let mut parts = b.split(':');
                let id = parts.next().unwrap().parse().unwrap();
                let rack = parts.next().unwrap();
                let fenced = parts.next().unwrap() == "f";
                UsableBroker {
                    id,
                    rack: (rack != "-").then(|| rack.to_owned()),
                    fenced,
                }
            })
            .collect();
        let actual = match place(&mut JavaRandom::new(seed), &cluster, partitions, rf) {
            Err(e) => format!("error={e}"),
            Ok(placed) => placed
                .iter()
                .map(|p| {
                    p.iter()
                        .map(|b| b.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .collect::<Vec<_>>()
                .join(";"),
        };
        assert_eq!(actual, expected, "case {} ({case})", number + 1);
        checked += 1;
    }
    assert_eq!(checked, 1500);
}
