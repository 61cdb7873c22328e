//! Tests of the node thread's parts: its clock, and a node on a failing disk.

use super::*;

#[test]
fn node_clock_reads_wall_clock_ms_and_never_goes_back() {
    let clock = NodeClock::start();
    let wall = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let a = clock.now_ms();
    assert!(
        a.abs_diff(wall) < 5_000,
        "node clock {a} vs wall clock {wall}"
    );
    std::thread::sleep(Duration::from_millis(5));
    let b = clock.now_ms();
    assert!(b >= a + 5, "{a} then {b}");
}

mod disk_faults;
