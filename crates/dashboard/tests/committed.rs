//! The committed dashboard is what the generator writes, and every query in it reads.

use kraftwerk_dashboard::{generate, queries, DASHBOARD_JSON};

#[test]
fn the_committed_dashboard_is_the_generated_one() {
    assert!(
        DASHBOARD_JSON == generate::dashboard_json(),
        "packaging/grafana/kraftwerk-controllers.json differs from crates/dashboard/src/generate.rs: \
         edit the generator and run `cargo run -p kraftwerk-dashboard`"
    );
}

#[test]
fn every_query_of_the_dashboard_reads() {
    let qs = queries(DASHBOARD_JSON).expect("the dashboard's queries read");
    assert!(qs.len() > 40, "{} queries", qs.len());
    // Every panel query names its metric and restricts it to the selected controllers.
    for q in &qs {
        assert!(
            !q.selectors.is_empty(),
            "{}: `{}` selects nothing",
            q.place,
            q.expr
        );
        for s in &q.selectors {
            assert!(s.metric.is_some(), "{}: `{s}` has no metric name", q.place);
        }
    }
}

#[test]
fn panels_have_unique_ids_and_sit_on_the_grid() {
    let d: serde_json::Value = serde_json::from_str(DASHBOARD_JSON).unwrap();
    let mut ids = std::collections::BTreeSet::new();
    let mut all: Vec<&serde_json::Value> = Vec::new();
    for p in d["panels"].as_array().unwrap() {
        all.push(p);
        all.extend(p["panels"].as_array().into_iter().flatten());
    }
    for p in all {
        assert!(ids.insert(p["id"].as_u64().unwrap()), "duplicate id in {p}");
        let g = &p["gridPos"];
        assert!(
            g["x"].as_u64().unwrap() + g["w"].as_u64().unwrap() <= 24,
            "{p}"
        );
    }
    assert_eq!(d["schemaVersion"], 39);
    assert_eq!(d["__inputs"][0]["name"], "DS_PROMETHEUS");
}
