//! Property tests of the FTL and GC through the device: no data is ever lost.
//! And of the bounds of the simulator's inputs: any numbers in a preset and any
//! step either are refused with an error naming them or run without a panic.
//!
//! A small geometry (32 superblocks of 48 units, 60 % of raw capacity as user
//! space) makes garbage collection and folding run constantly. After every
//! operation the FTL invariants hold, and every read returns the version last
//! written (the version stamp of its page) or "unmapped" after a TRIM. Writes of
//! 512 B sectors that cover units in part (read-modify-write) are among them. One
//! variant wears out within the test (a rated life of 10 cycles): P/E counts only grow,
//! worn-out superblocks are retired empty, and writes stop when the drive is read-only
//! (as the closed loop stops them) while every read still finds its data. A rare purge
//! unmaps everything, and the tables it zeroes (only where they were written) must
//! read as unmapped everywhere after it.

use crate::config::tests::{full_text, numeric_keys, small, with_value};
use crate::config::{
    CacheConfig, DriveConfig, FirmwareConfig, Levelling, Refill, StaticCacheConfig, VictimKind,
    WearConfig,
};
use crate::controller::Controller;
use crate::geometry::NONE;
use crate::{Drive, Op, Step};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Action {
    Write(u32, u32),
    /// (unit, first sector in it, sectors): a write that covers units in part
    SectorWrite(u32, u32, u32),
    Trim(u32, u32),
    Read(u32),
    Idle(u32),
    /// Everything unmapped at once (the tables are zeroed where they were written)
    Purge,
}

fn action(n: u32) -> impl Strategy<Value = Action> {
    prop_oneof![
        60 => (0..n, 1..9u32).prop_map(|(l, k)| Action::Write(l, k)),
        20 => (0..n, 0..8u32, 1..9u32).prop_map(|(l, s, k)| Action::SectorWrite(l, s, k)),
        10 => (0..n, 1..20u32).prop_map(|(l, k)| Action::Trim(l, k)),
        30 => (0..n).prop_map(Action::Read),
        10 => (1..50u32).prop_map(Action::Idle),
        1 => Just(Action::Purge),
    ]
}

fn config(variant: u8, fill: f64) -> DriveConfig {
    let mut c = small(fill);
    match variant {
        0 => {}
        1 => {
            if let CacheConfig::Dynamic(d) = &mut c.cache {
                d.busy_fold_ratio = 0.5;
                d.refill = Refill::Idle;
            }
        }
        2 => {
            c.cache = CacheConfig::Static(StaticCacheConfig {
                static_gb: 0.0004,
                idle_fold: true,
                busy_fold_ratio: 0.0,
                refill: Refill::Busy,
            })
        }
        3 => c.cache = CacheConfig::None,
        4 => c.ftl.victim_policy = VictimKind::CostBenefit,
        6 => {
            c.wear = Some(WearConfig {
                rated_pe_cycles: 10,
                slc_pe_cycles: 100,
                slc_retire_pe_cycles: Some(10),
                endurance_median: 1.5,
                endurance_sigma: 0.3,
                levelling: Levelling::Static,
                static_spread_pe: Some(10),
                rated_tbw: None,
            })
        }
        _ => {
            c.controller.flush_idle_us = Some(5000.0);
            c.firmware = Some(FirmwareConfig {
                journal_entry_bytes: 16,
                checkpoint_mib: 1.0,
                checkpoint_us: 100.0,
                relocate_unit_ns: 200.0,
                deallocate_share: 0.0166667,
            })
        }
    }
    c.validate().unwrap();
    c
}

fn check_reads(dev: &Controller, expect: &[u64]) -> Result<(), TestCaseError> {
    for (l, &v) in expect.iter().enumerate() {
        let p = dev.ftl().l2p(l);
        if v == 0 {
            prop_assert_eq!(p, NONE, "lba {} should be unmapped", l);
        } else {
            prop_assert_ne!(p, NONE, "lba {} lost", l);
            prop_assert_eq!(
                dev.ftl().stamp[p as usize],
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
    fn no_data_is_lost(variant in 0u8..7, fill in prop_oneof![Just(0.5), Just(0.6), Just(0.75)],
                       write_cache in any::<bool>(),
                       actions in prop::collection::vec(action(1000), 200..1500)) {
        let cfg = config(variant, fill);
        let mut dev = Controller::new(&cfg).unwrap();
        dev.set_volatile_write_cache(write_cache); // off: every write padded to its program unit
        let n = dev.geo().user_units as u32;
        let mut expect = vec![0u64; n as usize];
        let mut t = 0u64;
        let wear = |dev: &Controller| -> Vec<f64> {
            (0..dev.geo().superblocks).map(|sb| dev.ftl().wear().cycles(sb)).collect()
        };
        let mut worn = wear(&dev);
        for a in actions {
            let writes = matches!(a, Action::Write(..) | Action::SectorWrite(..));
            if writes && dev.read_only() {
                continue; // refused, as the closed loop refuses it
            }
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
                    let p = dev.ftl().l2p(l as usize);
                    let v = expect[l as usize];
                    if v == 0 { prop_assert_eq!(p, NONE); } else { prop_assert_eq!(dev.ftl().stamp[p as usize], v); }
                }
                Action::Idle(ms) => {
                    let t1 = t + ms as u64 * 1_000_000;
                    dev.idle(t, t1);
                    t = t1;
                }
                Action::Purge => {
                    t = dev.purge(t);
                    expect.fill(0);
                }
            }
            if let Err(e) = dev.ftl().check() { prop_assert!(false, "{}", e); }
            let now = wear(&dev);
            prop_assert!(now.iter().zip(&worn).all(|(n, w)| n >= w), "a P/E count went down");
            worn = now;
        }
        check_reads(&dev, &expect)?;
    }
}

/// Overwriting the whole logical space many times keeps every LBA's last version (GC
/// heavy); the drive that wears out within the test retires superblocks on the way and
/// keeps every version written before it went read-only.
#[test]
fn repeated_full_overwrites_keep_data() {
    for variant in 0..7 {
        let cfg = config(variant, 0.75);
        let mut dev = Controller::new(&cfg).unwrap();
        let n = dev.geo().user_units as u32;
        let mut expect = vec![0u64; n as usize];
        let mut rng = crate::rng::Rng::new(7);
        let mut t = 0;
        for _ in 0..20 * n {
            if dev.read_only() {
                break;
            }
            let l = rng.below(n as u64) as u32;
            t = dev.write(l as u64, 1, 4096, t);
            expect[l as usize] = dev.seq;
        }
        dev.ftl().check().unwrap();
        let bad = dev.ftl().wear().bad_superblocks();
        assert_eq!(
            bad > 0,
            variant == 6,
            "variant {variant}: {bad} superblocks retired"
        );
        assert!(
            dev.activity().gc_units + dev.activity().fold_units > 0,
            "GC never ran"
        );
        for (l, &v) in expect.iter().enumerate() {
            if v != 0 {
                assert_eq!(dev.ftl().stamp[dev.ftl().l2p(l) as usize], v);
            }
        }
    }
}

/// What a hostile or mistaken preset may hold in place of one number.
#[derive(Debug, Clone)]
enum Number {
    Integer(i64),
    Float(f64),
    /// The preset's own value times this factor, of the same TOML type.
    Scaled(f64),
}

fn number() -> impl Strategy<Value = Number> {
    let integers = vec![
        0,
        -1,
        1,
        2,
        3,
        4,
        7,
        4096,
        65_536,
        u32::MAX as i64,
        i64::MAX,
        i64::MIN,
    ];
    let floats = vec![
        0.0,
        -1.0,
        0.5,
        1e-300,
        1e300,
        f64::MAX,
        f64::MIN_POSITIVE,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    prop_oneof![
        1 => prop::sample::select(integers).prop_map(Number::Integer),
        1 => prop::sample::select(floats).prop_map(Number::Float),
        1 => any::<f64>().prop_map(Number::Float),
        3 => (-4.0f64..4.0).prop_map(|e| Number::Scaled(10f64.powf(e))),
    ]
}

fn replace(original: &toml::Value, n: &Number) -> toml::Value {
    match (n, original) {
        (Number::Integer(i), _) => toml::Value::Integer(*i),
        (Number::Float(f), _) => toml::Value::Float(*f),
        (Number::Scaled(k), toml::Value::Integer(i)) => {
            toml::Value::Integer((*i as f64 * k) as i64)
        }
        (Number::Scaled(k), v) => toml::Value::Float(v.as_float().unwrap() * k),
    }
}

fn value_at<'a>(doc: &'a toml::Table, key: &str) -> &'a toml::Value {
    let (tables, field) = key.rsplit_once('.').unwrap();
    let table = tables
        .split('.')
        .fold(doc, |t, name| t[name].as_table().unwrap());
    &table[field]
}

/// A few small steps of every kind, to be run on any drive that loads.
fn tiny_steps(span: u64) -> [Step; 4] {
    let io = span.saturating_mul(2).clamp(4096, 8 << 20);
    [
        Step::new("w", Op::RandWrite, 4096, span)
            .qd(8)
            .io_size(io)
            .idle_after(0.01),
        Step::new("r", Op::RandRead, 4096, span)
            .qd(4)
            .io_size(256 << 10),
        Step::new("t", Op::Trim, 4096, span),
        Step::purge("p"),
    ]
}

/// Build-and-run only drives of at most this much NAND, to stay fast.
const RUN_AT_MOST_RAW_BYTES: u64 = 64 << 20;

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    #[test]
    fn any_numbers_in_a_preset_load_or_are_refused_and_a_loaded_one_runs(
        changes in prop::collection::vec((any::<prop::sample::Index>(), number()), 1..4)
    ) {
        let full = full_text();
        let doc: toml::Table = full.parse().unwrap();
        let keys = numeric_keys(&doc, "");
        let mut text = full.clone();
        for (index, n) in &changes {
            let key = index.get(&keys);
            text = with_value(&text, key, replace(value_at(&doc, key), n));
        }
        match DriveConfig::from_toml_str(&text) {
            Err(e) => prop_assert!(e.0.contains("drive"), "an error that names no key: {}", e),
            Ok(cfg) => {
                for f in cfg.bounded_fields() {
                    prop_assert!(f.bound.contains(f.value), "{} = {} loaded", f.key, f.value);
                }
                if cfg.raw_bytes() <= RUN_AT_MOST_RAW_BYTES {
                    let mut drive = Drive::new(cfg).expect("a preset that loads builds a drive");
                    for step in tiny_steps(drive.whole_span(4096)) {
                        // Errors are allowed (a drive smaller than a block); panics are not.
                        let _ = drive.run(&step);
                    }
                    if let Err(e) = drive.check_invariants() { prop_assert!(false, "{}", e); }
                }
            }
        }
    }
}

/// Step fields a hostile caller may send: mostly `usual` values, else the
/// extremes of the type and arbitrary numbers.
fn step_number(usual: &[u64]) -> impl Strategy<Value = u64> {
    let extremes = vec![0, 1, 511, 1 << 62, u64::MAX - 511, u64::MAX];
    prop_oneof![
        4 => prop::sample::select(usual.to_vec()),
        1 => prop::sample::select(extremes),
        1 => 0..(1u64 << 24),
    ]
}

fn step_seconds() -> impl Strategy<Value = f64> {
    prop::sample::select(vec![
        0.0,
        -1.0,
        1e-9,
        1e-6,
        0.001,
        0.5,
        1e6,
        1e300,
        f64::NAN,
        f64::INFINITY,
    ])
}

/// Little enough work to run in a test: a few thousand commands and short times.
fn is_quick(s: &Step) -> bool {
    s.bytes_limit() / s.bs <= 4096
        && s.runtime.is_none_or(|r| r <= 0.01)
        && s.idle_after <= 1.0
        && s.rate_iops.is_none_or(|r| r >= 1000)
        && s.duty_cycle.is_none_or(|d| d >= 0.1)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    #[test]
    fn any_step_is_refused_or_runs_and_never_panics(
        op in prop::sample::select(vec![Op::Read, Op::Write, Op::RandRead, Op::RandWrite, Op::RandRw, Op::Rw, Op::Trim]),
        bs in step_number(&[512, 4096, 65_536]),
        size in step_number(&[4096, 65_536, 1 << 20]),
        offset in step_number(&[0, 4096, 1 << 20]),
        iodepth in prop_oneof![1 => Just(0u32), 1 => Just(u32::MAX), 8 => 1..64u32],
        mix in prop::option::of(0..120u32),
        mix_anywhere in prop::bool::weighted(0.1),
        runtime in prop::option::weighted(0.2, step_seconds()),
        io_size in prop::option::weighted(0.3, step_number(&[4096, 1 << 20])),
        bursts in prop::option::weighted(0.2, (step_number(&[4096, 65_536]), step_seconds())),
        idle_after in prop_oneof![3 => Just(0.0), 1 => step_seconds()],
        rate in prop::option::weighted(0.2, step_number(&[1000, 100_000])),
    ) {
        let mut step = Step::new("p", op, bs, size).offset(offset).qd(iodepth).idle_after(idle_after);
        // A read share mostly where it belongs, sometimes where it does not.
        step.rwmixread = if op.is_mixed() || mix_anywhere { mix } else { None };
        step.runtime = runtime;
        step.io_size = io_size;
        (step.burst_bytes, step.duty_cycle) = bursts.map_or((None, None), |(b, d)| (Some(b), Some(d)));
        step.rate_iops = rate;
        let mut drive = Drive::new(small(0.7)).unwrap();
        let user = drive.user_bytes();
        match step.validate(user) {
            Err(e) => prop_assert!(e.starts_with("step p: "), "{}", e),
            Ok(()) if is_quick(&step) => {
                drive.run(&step).unwrap();
                if let Err(e) = drive.check_invariants() { prop_assert!(false, "{}", e); }
            }
            Ok(()) => {}
        }
    }
}
