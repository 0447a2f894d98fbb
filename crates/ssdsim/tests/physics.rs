//! Physics and timing: ceilings are never exceeded, reads take at least their
//! parts, idle and series follow the step's definition.
use crate::common::*;
use ssdsim::histogram::{bin_index, bin_value};
use ssdsim::{Drive, Op, Step};

/// Exact QD1 read latency on an idle drive: controller + fixed read latency + t_read + channel
/// transfer + link transfer.
fn expect_read_ns(t_read_us: f64) -> u64 {
    let ctrl = 2_000u64 + 1_000; // read_cmd_us = 2.0, read_latency_us = 1.0
    let t_read = (t_read_us * 1000.0) as u64;
    let chan = (4096.0f64 / 800e6 * 1e9).ceil() as u64; // 5120 ns at 800 MB/s
    let link = (4096.0f64 * (1e6f64 / 7000.0).round() / 1000.0).ceil() as u64; // 143 ps/B -> 586 ns
    ctrl + t_read + chan + link
}

#[test]
fn qd1_read_takes_exactly_overhead_plus_t_read_plus_transfers() {
    // Tolerance: 0 ns. Data folded into TLC (idle fold) is read with t_read(TLC).
    for (cache, t_read) in [(SLC_FOLD, 60.0), (SLC_KEEP, 25.0), (NO_CACHE, 60.0)] {
        let mut d = Drive::new(tiny(cache)).unwrap();
        d.run(
            &Step::new("w", Op::Write, 128 * KIB, 64 * MIB)
                .qd(4)
                .idle_after(5.0),
        )
        .unwrap();
        let r = d
            .run(&Step::new("r", Op::RandRead, 4 * KIB, 32 * MIB).runtime(0.05))
            .unwrap();
        let lat = &r.read.as_ref().unwrap().latency;
        let want = expect_read_ns(t_read);
        assert_eq!(lat.min_ns, want, "cache {cache}: min latency");
        assert_eq!(
            lat.max_ns, want,
            "cache {cache}: max latency (idle drive, QD1)"
        );
        assert_eq!(lat.histogram, vec![(bin_value(bin_index(want)), lat.count)]);
        // IOPS follow from the latency at QD1 (tolerance 0.1 %).
        let iops = r.iops();
        assert!((iops * want as f64 / 1e9 - 1.0).abs() < 1e-3, "iops {iops}");
    }
}

#[test]
fn reads_never_beat_their_parts_at_any_queue_depth() {
    // Every read takes at least overhead + t_read(SLC, the fastest mode) + transfers.
    let mut d = Drive::new(tiny(SLC_KEEP)).unwrap();
    d.run(&Step::new("w", Op::Write, 128 * KIB, 256 * MIB).qd(8))
        .unwrap();
    for qd in [1, 4, 32] {
        let r = d
            .run(
                &Step::new("r", Op::RandRead, 4 * KIB, 256 * MIB)
                    .qd(qd)
                    .runtime(0.05),
            )
            .unwrap();
        assert!(
            r.read.as_ref().unwrap().latency.min_ns >= expect_read_ns(25.0),
            "qd {qd}"
        );
    }
}

#[test]
fn qd1_write_takes_exactly_overhead_plus_link_plus_fixed_latency() {
    // A 4 KiB write on an idle drive completes when its data is in the write buffer:
    // write_cmd (3 us) + link transfer (586 ns) + write_latency (5 us). Tolerance: 0 ns.
    let mut d = Drive::new(tiny(SLC_FOLD)).unwrap();
    let r = d
        .run(&Step::new("w", Op::RandWrite, 4 * KIB, 64 * MIB).io_size(MIB))
        .unwrap();
    let lat = &r.write.as_ref().unwrap().latency;
    assert_eq!(
        (lat.min_ns, lat.max_ns),
        (3_000 + 586 + 5_000, 3_000 + 586 + 5_000)
    );
}

#[test]
fn unmapped_reads_skip_the_nand() {
    let mut d = Drive::new(tiny(NO_CACHE)).unwrap();
    let r = d
        .run(&Step::new("r", Op::RandRead, 4 * KIB, 64 * MIB).runtime(0.01))
        .unwrap();
    let lat = &r.read.as_ref().unwrap().latency;
    assert_eq!(
        lat.max_ns,
        2_000 + 1_000 + 586,
        "controller + fixed latency + link only"
    );
}

/// Die-parallelism ceiling N x P / t, in MB/s.
fn die_ceiling(dies: u32, planes: u32, page: u32, t_us: f64) -> f64 {
    (dies * planes * page) as f64 / (t_us * 1e-6) / 1e6
}

/// Writes complete once their data is in the write buffer (256 KiB per stream in `tiny`),
/// so the bytes a step writes are at most ceiling x busy time + one buffer.
fn write_bound_mbps(ceil: f64, r: &ssdsim::StepResult) -> f64 {
    ceil + 256.0 * 1024.0 / r.busy_s / 1e6
}

#[test]
fn throughput_never_exceeds_the_die_ceiling() {
    // Tolerance: none (ceilings are upper bounds, writes allowing for the write buffer they may
    // end in); the lower bound (>= 80 % of the ceiling) shows the test measures the limit it claims to.
    let mut d = Drive::new(tiny(NO_CACHE)).unwrap();
    let r = d
        .run(&Step::new("sw", Op::Write, 128 * KIB, 512 * MIB).qd(32))
        .unwrap();
    let ceil = die_ceiling(4, 2, 16384, 600.0);
    assert!(
        r.mbps() <= write_bound_mbps(ceil, &r),
        "{} > {ceil}",
        r.mbps()
    );
    assert!(r.mbps() >= 0.8 * ceil, "{} far below {ceil}", r.mbps());

    let mut d = Drive::new(tiny(SLC_KEEP)).unwrap();
    let r = d
        .run(&Step::new("sw", Op::Write, 128 * KIB, 64 * MIB).qd(32))
        .unwrap();
    let ceil = die_ceiling(4, 2, 16384, 200.0);
    assert!(
        r.mbps() <= write_bound_mbps(ceil, &r) && r.mbps() >= 0.8 * ceil,
        "SLC {} vs {ceil}",
        r.mbps()
    );

    // Random 4 KiB reads: each read senses a page for one unit; ceiling dies / t_read.
    let mut d = Drive::new(tiny(NO_CACHE)).unwrap();
    d.run(&Step::new("w", Op::Write, 128 * KIB, 512 * MIB).qd(32))
        .unwrap();
    let r = d
        .run(
            &Step::new("rr", Op::RandRead, 4 * KIB, 512 * MIB)
                .qd(64)
                .runtime(0.2),
        )
        .unwrap();
    let ceil_iops = 4.0 / 60e-6;
    assert!(r.iops() <= ceil_iops, "{} > {ceil_iops}", r.iops());
    assert!(
        r.iops() >= 0.7 * ceil_iops,
        "{} far below {ceil_iops}",
        r.iops()
    );
    // Sequential reads: min(dies x P / t_read, channels x rate, link).
    let r = d
        .run(&Step::new("sr", Op::Read, 128 * KIB, 512 * MIB).qd(32))
        .unwrap();
    let ceil = die_ceiling(4, 2, 16384, 60.0).min(2.0 * 800.0).min(7000.0);
    assert!(
        r.mbps() <= ceil && r.mbps() >= 0.8 * ceil,
        "seq read {} vs {ceil}",
        r.mbps()
    );
}

#[test]
fn throughput_never_exceeds_the_link_ceiling() {
    // PCIe 3.0 x4: 3500 MB/s of payload (CALIBRATION.md, physics). Tolerance: none.
    let mut d = Drive::new(preset("wd-black-2018-1tb")).unwrap();
    fill_to(&mut d, 0.02, 0.0);
    let r = d
        .run(&Step::new("sr", Op::Read, 1024 * KIB, 16 * GIB).qd(64))
        .unwrap();
    assert!(r.mbps() <= 3500.0, "{}", r.mbps());
    assert!(
        r.mbps() >= 3300.0,
        "{}: the link should be the limit here",
        r.mbps()
    );
    // PCIe 4.0 x4: 7000 MB/s.
    let mut d = Drive::new(preset("samsung-980pro-1tb")).unwrap();
    fill_to(&mut d, 0.02, 0.0);
    let r = d
        .run(&Step::new("sr", Op::Read, 1024 * KIB, 16 * GIB).qd(64))
        .unwrap();
    assert!(r.mbps() <= 7000.0, "{}", r.mbps());
}

#[test]
fn duty_cycle_sets_idle_time() {
    let mut d = Drive::new(tiny(SLC_FOLD)).unwrap();
    let r = d
        .run(
            &Step::new("b", Op::RandWrite, 4 * KIB, 64 * MIB)
                .io_size(8 * MIB)
                .bursts(MIB, 0.2)
                .idle_after(0.5),
        )
        .unwrap();
    assert_eq!(r.bursts, 8);
    // busy / (busy + idle) = 0.2 (tolerance 1e-6 relative), plus idle_after.
    let idle = r.idle_s - 0.5;
    assert!(
        (r.busy_s / (r.busy_s + idle) - 0.2).abs() < 1e-6,
        "busy {} idle {}",
        r.busy_s,
        idle
    );
    assert_eq!(r.write.as_ref().unwrap().bytes, 8 * MIB);
}

#[test]
fn limits_stop_the_step() {
    let mut d = Drive::new(tiny(SLC_FOLD)).unwrap();
    // Byte limit.
    let r = d
        .run(
            &Step::new("w", Op::RandWrite, 4 * KIB, 64 * MIB)
                .qd(8)
                .io_size(4 * MIB),
        )
        .unwrap();
    assert_eq!(r.write.as_ref().unwrap().bytes, 4 * MIB);
    // Time limit (virtual seconds; the last commands in flight finish after it, tolerance 1 ms).
    let r = d
        .run(
            &Step::new("w", Op::RandWrite, 4 * KIB, 64 * MIB)
                .qd(8)
                .runtime(0.1)
                .io_size(1 << 40),
        )
        .unwrap();
    assert!(r.busy_s >= 0.1 && r.busy_s < 0.101, "{}", r.busy_s);
    // No limit: the span once.
    let r = d
        .run(&Step::new("r", Op::Read, 128 * KIB, 32 * MIB).qd(4))
        .unwrap();
    assert_eq!(r.read.as_ref().unwrap().ios, 256);
    // Mixed: shares follow rwmixread (tolerance 2 points).
    let r = d
        .run(
            &Step::new("m", Op::RandRw, 4 * KIB, 64 * MIB)
                .mix(70)
                .qd(4)
                .io_size(64 * MIB),
        )
        .unwrap();
    let (rd, wr) = (
        r.read.as_ref().unwrap().ios as f64,
        r.write.as_ref().unwrap().ios as f64,
    );
    assert!((rd / (rd + wr) - 0.7).abs() < 0.02);
}

#[test]
fn per_gib_series_uses_the_fio_segment_rule() {
    // Under 16 GiB written: segments of bytes/16 rounded down to 1 MiB.
    let mut d = Drive::new(tiny(SLC_FOLD)).unwrap();
    let r = d.run(&Step::fill("f", 200 * MIB)).unwrap();
    assert_eq!(r.per_gib.len(), 16); // 200 MiB / 16 = 12.5 -> 12 MiB segments, 16 whole ones
    let seg = r.per_gib[0].gib;
    assert!((seg - 12.0 / 1024.0).abs() < 1e-12);
    assert!(r.per_gib.iter().all(|p| p.mbps > 0.0));
    // Per-second series covers the busy time.
    let r = d
        .run(
            &Step::new("w", Op::RandWrite, 4 * KIB, 64 * MIB)
                .qd(8)
                .runtime(2.5)
                .io_size(1 << 40),
        )
        .unwrap();
    assert_eq!(r.per_second.len(), 3);
    assert!((r.per_second[2].t_s - r.busy_s).abs() < 1e-3);
}

#[test]
fn trim_unmaps_and_purge_restores_fresh_state() {
    let mut d = Drive::new(tiny(SLC_FOLD)).unwrap();
    let span = d.whole_span(128 * KIB);
    d.run(&Step::new("f", Op::Write, 128 * KIB, span).qd(32))
        .unwrap();
    assert!(d.counters().mapped_bytes >= span);
    let r = d
        .run(&Step::new("t", Op::Trim, 64 * MIB, span / 2 / (64 * MIB) * (64 * MIB)).qd(1))
        .unwrap();
    let t = r.trim.as_ref().unwrap();
    assert!(t.ios > 0 && t.latency.max_ns > 4_000);
    assert!(d.counters().mapped_bytes < span / 2 + 64 * MIB);
    d.check_invariants().unwrap();
    d.run(&Step::purge("purge")).unwrap();
    let c = d.counters();
    assert_eq!(c.mapped_bytes, 0);
    assert_eq!(c.free_superblocks, c.superblocks);
    d.check_invariants().unwrap();
}

#[test]
fn runs_are_deterministic() {
    let steps = vec![
        Step::new("w", Op::RandWrite, 4 * KIB, 256 * MIB)
            .qd(16)
            .io_size(300 * MIB),
        Step::new("m", Op::RandRw, 4 * KIB, 256 * MIB)
            .mix(50)
            .qd(4)
            .runtime(0.2),
    ];
    let a = ssdsim::simulate(&tiny(SLC_FOLD), &steps).unwrap();
    let b = ssdsim::simulate(&tiny(SLC_FOLD), &steps).unwrap();
    assert_eq!(a, b);
}

#[test]
fn random_overwrites_amplify_writes_and_sequential_do_not() {
    let mut d = Drive::new(tiny(NO_CACHE)).unwrap();
    let span = d.whole_span(4 * KIB);
    d.run(&Step::new("f", Op::Write, 128 * KIB, d.whole_span(128 * KIB)).qd(32))
        .unwrap();
    let s = d
        .run(&Step::new("seq", Op::Write, 128 * KIB, d.whole_span(128 * KIB)).qd(32))
        .unwrap();
    assert!(
        s.counters.write_amplification < 1.05,
        "seq WA {}",
        s.counters.write_amplification
    );
    let r = d
        .run(
            &Step::new("rnd", Op::RandWrite, 4 * KIB, span)
                .qd(32)
                .io_size(2 * span),
        )
        .unwrap();
    assert!(
        r.counters.write_amplification > 1.5,
        "random WA {}",
        r.counters.write_amplification
    );
    assert!(r.counters.gc_bytes > 0);
    d.check_invariants().unwrap();
}

#[test]
fn bad_steps_are_refused_with_a_message() {
    let mut d = Drive::new(tiny(NO_CACHE)).unwrap();
    let e = d
        .run(&Step::new("x", Op::Write, 1000, 4096))
        .unwrap_err()
        .to_string();
    assert!(e.contains("bs = 1000"), "{e}");
    let e = d
        .run(&Step::new("x", Op::Write, 4096, 1 << 40))
        .unwrap_err()
        .to_string();
    assert!(e.contains("exceeds the drive"), "{e}");
}

const PRESETS: [&str; 5] = [
    "wd-black-2018-1tb",
    "wd-sn850-1tb",
    "samsung-980pro-1tb",
    "crucial-p5plus-1tb",
    "generic-qlc-1tb",
];

#[test]
fn every_preset_respects_its_ceilings() {
    // For every preset: sequential writes (into the SLC cache) stay under the link ceiling and
    // the SLC die ceiling plus one write buffer; sequential reads under the link, the channels
    // and the native die read ceiling. Tolerance: none.
    for name in PRESETS {
        let cfg = preset(name);
        let g = cfg.geometry.clone();
        let dies = g.channels * g.dies_per_channel;
        let link = cfg.host.link_mbps();
        let mut d = Drive::new(cfg.clone()).unwrap();
        let r = d
            .run(&Step::new("sw", Op::Write, 128 * KIB, 4 * GIB).qd(32))
            .unwrap();
        let slc = die_ceiling(dies, g.planes_per_die, g.page_bytes, cfg.nand.slc.t_prog_us);
        let buffer = 2.0 * cfg.controller.write_buffer_kib as f64 * 1024.0 / r.busy_s / 1e6;
        assert!(r.mbps() <= link, "{name}: write {} > link {link}", r.mbps());
        assert!(
            r.mbps() <= slc + buffer,
            "{name}: write {} > SLC die ceiling {slc}",
            r.mbps()
        );
        let r = d
            .run(
                &Step::new("sr", Op::Read, 128 * KIB, 4 * GIB)
                    .qd(32)
                    .idle_after(0.0),
            )
            .unwrap();
        let native = cfg.timing(cfg.native_mode);
        let read_ceiling = die_ceiling(
            dies,
            g.planes_per_die,
            g.page_bytes,
            cfg.nand.slc.t_read_us.min(native.t_read_us),
        )
        .min(g.channels as f64 * cfg.nand.channel_mbps)
        .min(link);
        assert!(
            r.mbps() <= read_ceiling,
            "{name}: read {} > {read_ceiling}",
            r.mbps()
        );
        d.check_invariants().unwrap();
    }
}

#[test]
fn idle_gc_does_not_churn_on_a_full_sequentially_written_drive() {
    // Free space below the idle threshold but nothing to gain: a long idle must not move data.
    let mut d = Drive::new(tiny(NO_CACHE)).unwrap();
    d.run(&Step::new("f", Op::Write, 128 * KIB, d.whole_span(128 * KIB)).qd(32))
        .unwrap();
    let r = d
        .run(&Step::new("idle", Op::Read, 128 * KIB, 128 * KIB).idle_after(600.0))
        .unwrap();
    assert_eq!(r.counters.gc_bytes, 0);
    assert_eq!(r.counters.nand_write_bytes, 0);
}

#[test]
fn tightest_over_provisioning_survives_heavy_overwrites() {
    // The least spare the validation accepts (gc_low + 3 superblocks), every cache policy:
    // random and sequential overwrites of the whole span, idle in between; nothing panics,
    // the invariants hold and every LBA stays mapped.
    let dynamic = "policy = \"dynamic\"\nfree_share = 1.0\nmax_cell_share = 1.0\nidle_fold = true\nbusy_fold_ratio = 0.75";
    for cache in [NO_CACHE, SLC_FOLD, SLC_KEEP, dynamic] {
        let mut cfg = tiny(cache);
        cfg.user_capacity_gb = 0.728;
        if cfg.validate().is_err() {
            cfg.user_capacity_gb = 0.72;
        }
        cfg.validate().unwrap();
        let mut d = Drive::new(cfg).unwrap();
        let span = d.whole_span(128 * KIB);
        d.run(&Step::new("f", Op::Write, 128 * KIB, span).qd(32))
            .unwrap();
        d.run(
            &Step::new("r", Op::RandWrite, 4 * KIB, span)
                .qd(32)
                .io_size(2 * span)
                .idle_after(1.0),
        )
        .unwrap();
        d.run(&Step::new("s", Op::Write, 128 * KIB, span).qd(8))
            .unwrap();
        d.run(
            &Step::new("m", Op::RandRw, 4 * KIB, span)
                .mix(30)
                .qd(16)
                .io_size(span),
        )
        .unwrap();
        d.check_invariants().unwrap();
        assert_eq!(d.counters().mapped_bytes, span, "cache {cache}");
    }
}

#[test]
fn a_span_is_transferred_once_in_whole_blocks_like_fio() {
    // fio rounds a span down to whole blocks: 2.5 MiB at bs=1M is 2 writes, not a third
    // that wraps to the start.
    let mut d = Drive::new(tiny(NO_CACHE)).unwrap();
    for op in [Op::Write, Op::Trim, Op::Read] {
        let r = d.run(&Step::new("x", op, MIB, 5 * MIB / 2)).unwrap();
        let dir = [&r.write, &r.trim, &r.read]
            .into_iter()
            .flatten()
            .next()
            .unwrap();
        assert_eq!((dir.ios, dir.bytes), (2, 2 * MIB), "{op:?}");
    }
}
