//! Property tests of the FTL and GC through the device: no data is ever lost.
//!
//! A small geometry (32 superblocks of 48 units, 60 % of raw capacity as user
//! space) makes garbage collection and folding run constantly. After every
//! operation the FTL invariants hold, and every read returns the version last
//! written (the version stamp of its page) or "unmapped" after a TRIM. Writes of
//! 512 B sectors that cover units in part (read-modify-write) are among them.

use crate::config::tests::small;
use crate::config::{CacheKind, DriveConfig};
use crate::device::Device;
use crate::geometry::NONE;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Action {
    Write(u32, u32),
    /// (unit, first sector in it, sectors): a write that covers units in part
    SectorWrite(u32, u32, u32),
    Trim(u32, u32),
    Read(u32),
    Idle(u32),
}

fn action(n: u32) -> impl Strategy<Value = Action> {
    prop_oneof![
        6 => (0..n, 1..9u32).prop_map(|(l, k)| Action::Write(l, k)),
        2 => (0..n, 0..8u32, 1..9u32).prop_map(|(l, s, k)| Action::SectorWrite(l, s, k)),
        1 => (0..n, 1..20u32).prop_map(|(l, k)| Action::Trim(l, k)),
        3 => (0..n).prop_map(Action::Read),
        1 => (1..50u32).prop_map(Action::Idle),
    ]
}

fn config(variant: u8, fill: f64) -> DriveConfig {
    let mut c = small(fill);
    match variant {
        0 => {}
        1 => c.cache.busy_fold_ratio = 0.5,
        2 => {
            c.cache.policy = CacheKind::Static;
            c.cache.static_gb = Some(0.0004);
        }
        _ => c.cache.policy = CacheKind::None,
    }
    c.validate().unwrap();
    c
}

fn check_reads(dev: &Device, expect: &[u64]) -> Result<(), TestCaseError> {
    for (l, &v) in expect.iter().enumerate() {
        let p = dev.ftl.l2p(l);
        if v == 0 {
            prop_assert_eq!(p, NONE, "lba {} should be unmapped", l);
        } else {
            prop_assert_ne!(p, NONE, "lba {} lost", l);
            prop_assert_eq!(
                dev.ftl.stamp[p as usize],
                v,
                "lba {} returns a stale version",
                l
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn no_data_is_lost(variant in 0u8..4, fill in prop_oneof![Just(0.5), Just(0.6), Just(0.75)],
                       actions in prop::collection::vec(action(1000), 200..1500)) {
        let cfg = config(variant, fill);
        let mut dev = Device::new(&cfg);
        let n = dev.geo().user_units as u32;
        let mut expect = vec![0u64; n as usize];
        let mut t = 0u64;
        for a in actions {
            match a {
                Action::Write(l, k) => {
                    let l = l % n;
                    let k = k.min(n - l);
                    t = dev.write(l as u64, k, k as u64 * 4096, t);
                    let last = dev.seq;
                    for i in 0..k {
                        expect[(l + i) as usize] = last - (k - 1 - i) as u64;
                    }
                }
                Action::SectorWrite(l, sector, sectors) => {
                    let off = (l % n) as u64 * 4096 + sector as u64 * 512;
                    let bytes = (sectors as u64 * 512).min(n as u64 * 4096 - off);
                    t = dev.write_at(off, bytes, t);
                    let (first, last) = (off / 4096, (off + bytes).div_ceil(4096) - 1);
                    for u in first..=last {
                        expect[u as usize] = dev.seq - (last - u);
                    }
                }
                Action::Trim(l, k) => {
                    let l = l % n;
                    let k = k.min(n - l);
                    t = dev.trim(l as u64, k as u64, t);
                    for i in 0..k {
                        expect[(l + i) as usize] = 0;
                    }
                }
                Action::Read(l) => {
                    let l = l % n;
                    t = dev.read(l as u64, 1, 4096, t);
                    let p = dev.ftl.l2p(l as usize);
                    let v = expect[l as usize];
                    if v == 0 { prop_assert_eq!(p, NONE); } else { prop_assert_eq!(dev.ftl.stamp[p as usize], v); }
                }
                Action::Idle(ms) => {
                    let t1 = t + ms as u64 * 1_000_000;
                    dev.idle(t, t1);
                    t = t1;
                }
            }
            if let Err(e) = dev.ftl.check() { prop_assert!(false, "{}", e); }
        }
        check_reads(&dev, &expect)?;
    }
}

/// Overwriting the whole logical space many times keeps every LBA's last version (GC heavy).
#[test]
fn repeated_full_overwrites_keep_data() {
    for variant in 0..4 {
        let cfg = config(variant, 0.75);
        let mut dev = Device::new(&cfg);
        let n = dev.geo().user_units as u32;
        let mut expect = vec![0u64; n as usize];
        let mut rng = crate::rng::Rng::new(7);
        let mut t = 0;
        for _ in 0..20 * n {
            let l = rng.below(n as u64) as u32;
            t = dev.write(l as u64, 1, 4096, t);
            expect[l as usize] = dev.seq;
        }
        dev.ftl.check().unwrap();
        assert!(
            dev.counters.gc_units + dev.counters.fold_units > 0,
            "GC never ran"
        );
        for (l, &v) in expect.iter().enumerate() {
            if v != 0 {
                assert_eq!(dev.ftl.stamp[dev.ftl.l2p(l) as usize], v);
            }
        }
    }
}
