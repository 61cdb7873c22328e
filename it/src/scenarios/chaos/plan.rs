//! The fault plan: drawn from one seed before the cluster starts, so `IT_CHAOS_SEED=<seed>`
//! replays the same faults on the same targets with the same durations (which controller is
//! *active* when a fault comes is the cluster's business, so "the active controller" is part
//! of the plan, not its id).

use std::fmt;

/// splitmix64: tiny, seedable, the same sequence on every platform and crate version.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// True with probability `num/den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.next_u64() % den < num
    }

    /// Fisher-Yates.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.range(0, i as u64) as usize;
            v.swap(i, j);
        }
    }
}

/// What is done to the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// SIGKILL, down for `hold_ms`, restart.
    Kill,
    /// SIGTERM (graceful stop), down for `hold_ms`, restart.
    Term,
    /// SIGSTOP for `hold_ms`, SIGCONT.
    Stop,
    /// Its veth down for `hold_ms`, up.
    Partition,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 4] = [Kind::Kill, Kind::Term, Kind::Stop, Kind::Partition];

    /// `sigkill`, `sigterm`, `sigstop`, `partition`.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Kill => "sigkill",
            Kind::Term => "sigterm",
            Kind::Stop => "sigstop",
            Kind::Partition => "partition",
        }
    }

    /// Whether the target is restarted afterwards (a new process).
    pub fn restarts(self) -> bool {
        matches!(self, Kind::Kill | Kind::Term)
    }
}

/// Who gets the fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Whichever controller leads when the fault comes.
    Active,
    /// Controller with this id (it may happen to lead).
    Node(i32),
}

/// One planned fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// 1-based position in the plan.
    pub n: usize,
    /// What.
    pub kind: Kind,
    /// To whom.
    pub target: Target,
    /// Stop/partition length, or downtime before a restart.
    pub hold_ms: u64,
    /// For restarts: `sync; echo 3 > /proc/sys/vm/drop_caches` before starting the process.
    pub drop_caches: bool,
    /// Quiet time after the cluster recovered, before the next fault.
    pub pause_ms: u64,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let who = match self.target {
            Target::Active => "the active controller".to_string(),
            Target::Node(id) => format!("controller {id}"),
        };
        write!(f, "#{} {} {who}", self.n, self.kind.label())?;
        match self.kind {
            Kind::Kill | Kind::Term => write!(
                f,
                ", restart after {} ms{}",
                self.hold_ms,
                if self.drop_caches {
                    " with the page cache dropped"
                } else {
                    ""
                }
            ),
            Kind::Stop | Kind::Partition => write!(f, " for {} ms", self.hold_ms),
        }
    }
}

/// Draws `count` faults for controllers `1..=controllers`. The first eight cover every kind
/// against both the active and a random controller (in a seeded order), the rest are drawn
/// freely; the first two restarts are one with and one without the page cache dropped.
pub fn make(seed: u64, count: usize, controllers: i32) -> Vec<Fault> {
    let mut rng = Rng::new(seed);
    let mut cover: Vec<(Kind, bool)> = Kind::ALL
        .iter()
        .flat_map(|k| [(*k, true), (*k, false)])
        .collect();
    rng.shuffle(&mut cover);
    let mut restarts = 0;
    (0..count)
        .map(|i| {
            let (kind, active) = match cover.get(i) {
                Some(c) => *c,
                None => (Kind::ALL[rng.range(0, 3) as usize], rng.chance(1, 2)),
            };
            let target = if active {
                Target::Active
            } else {
                Target::Node(rng.range(1, controllers as u64) as i32)
            };
            let hold_ms = match kind {
                Kind::Kill | Kind::Term => rng.range(0, 4_000),
                Kind::Stop => rng.range(2_000, 7_000),
                Kind::Partition => rng.range(3_000, 10_000),
            };
            let drop_caches = kind.restarts() && {
                restarts += 1;
                match restarts {
                    1 => true,
                    2 => false,
                    _ => rng.chance(1, 2),
                }
            };
            Fault {
                n: i + 1,
                kind,
                target,
                hold_ms,
                drop_caches,
                pause_ms: rng.range(3_000, 7_000),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_plan_other_seed_other_plan() {
        assert_eq!(make(42, 100, 5), make(42, 100, 5));
        assert_ne!(make(42, 10, 3), make(43, 10, 3));
    }

    #[test]
    fn short_plan_covers_every_kind_on_both_targets_and_both_restarts() {
        for seed in 0..50 {
            let p = make(seed, 10, 3);
            assert_eq!(p.len(), 10);
            for k in Kind::ALL {
                assert!(p.iter().any(|f| f.kind == k && f.target == Target::Active));
                assert!(p
                    .iter()
                    .any(|f| f.kind == k && matches!(f.target, Target::Node(_))));
            }
            let restarts: Vec<_> = p.iter().filter(|f| f.kind.restarts()).collect();
            assert!(restarts.iter().any(|f| f.drop_caches));
            assert!(restarts.iter().any(|f| !f.drop_caches));
            assert!(p.iter().all(|f| match f.target {
                Target::Node(id) => (1..=3).contains(&id),
                Target::Active => true,
            }));
        }
    }

    #[test]
    fn splitmix_is_stable() {
        // Reference values of splitmix64 seeded with 0.
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }
}
