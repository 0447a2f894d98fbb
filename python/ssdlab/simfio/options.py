"""fio's options, as the simulator takes them: modelled, accepted but ignored, or refused.

Names are fio 3.33's (`fio --cmdhelp=all` and the block engines' own options), aliases
resolved to them. An option is one of:

- modelled (`UNDERSTOOD`): run.py reads it, and it changes the simulated job or its JSON;
- ignored: it changes nothing on a simulated drive (the drive is reached as with direct
  I/O, the host costs no time, the drive stores no data); listed in one note;
- refused: what the simulator cannot do yet, each with its reason, unless its value
  changes nothing (`HARMLESS`: fio's default, or off). An option the simulator does not
  know at all (a typo, another engine's option) is refused as well.

docs/sim-fio.md is the user's view of these lists.
"""

from __future__ import annotations

from enum import Enum

# fio's aliases of the options below (options.c `.alias`)
ALIASES = {"readwrite": "rw", "blocksize": "bs", "timeout": "runtime", "io_limit": "io_size",
           "fileoffset": "offset", "iodepth_batch_submit": "iodepth_batch",
           "iodepth_batch_complete": "iodepth_batch_complete_min", "blockalign": "ba",
           "blocksize_range": "bsrange", "blocksize_unaligned": "bs_unaligned",
           "nr_files": "nrfiles", "iomem": "mem", "iomem_align": "mem_align", "ratemin": "rate_min",
           "ratecycle": "rate_cycle", "wait_for_previous": "stonewall",
           "disable_bw": "disable_bw_measurement", "ss": "steadystate",
           "ss_dur": "steadystate_duration", "ss_ramp": "steadystate_ramp_time",
           "fill_fs": "fill_device"}

UNDERSTOOD = {"name", "description", "rw", "bs", "iodepth", "size", "offset",
              "io_size", "runtime", "time_based", "ramp_time", "rwmixread", "rwmixwrite",
              "thinktime", "thinktime_blocks", "stonewall", "new_group", "kb_base",
              "percentile_list", "clat_percentiles", "lat_percentiles", "slat_percentiles",
              "continue_on_error", "disk_util", "numjobs", "group_reporting", "bssplit", "ba",
              "random_distribution", "rate", "rate_iops", "flow", "flow_id", "fill_device",
              "verify", "do_verify", "write_lat_log", "write_bw_log", "write_iops_log",
              "log_avg_msec", "log_max_value", "log_offset", "per_job_logs", "log_prio",
              "bwavgtime", "iopsavgtime", "norandommap", "steadystate", "steadystate_duration",
              "steadystate_ramp_time"}

# Engines that send the job's I/O to a block device: ioengine is ignored as a host cost,
# but as with fio a synchronous engine keeps one I/O in flight whatever iodepth says
# (run.py), the others iodepth I/Os.
SYNC_ENGINES = ("psync", "sync", "pvsync", "pvsync2", "vsync")
ASYNC_ENGINES = ("libaio", "io_uring", "io_uring_cmd", "posixaio", "windowsaio", "solarisaio")

IGNORED: dict[str, tuple[str, ...]] = {
    "the simulated drive is the target, whatever file or directory the job names":
        ("filename", "directory", "filename_format", "unique_filename", "lockfile",
         "file_service_type", "openfiles", "allow_file_create", "allow_mounted_write",
         "create_serialize", "create_fsync", "create_on_open", "fallocate", "overwrite",
         "unlink", "unlink_each_loop"),
    "the drive is reached as with direct I/O: there is no page cache":
        ("direct", "buffered", "invalidate", "fadvise_hint", "pre_read", "atomic"),
    "the host's engine, CPUs, memory, scheduler and clock cost no drive time":
        ("ioengine", "thread", "nice", "prio", "prioclass", "cpumask", "cpus_allowed",
         "cpus_allowed_policy", "numa_cpu_nodes", "numa_mem_policy", "cgroup", "cgroup_nodelete",
         "cgroup_weight", "uid", "gid", "mem", "mem_align", "hugepage-size", "lockmem",
         "gtod_reduce", "gtod_cpu", "clocksource", "ioscheduler", "disable_lat", "disable_clat",
         "disable_slat", "disable_bw_measurement", "io_submit_mode", "iodepth_batch",
         "iodepth_batch_complete_min", "iodepth_batch_complete_max", "serialize_overlap",
         "hipri", "hipri_percentage", "fixedbufs", "registerfiles", "sqthread_poll",
         "sqthread_poll_cpu", "nonvectored", "uncached", "nowait", "force_async",
         "userspace_reap", "cmd_type", "thinktime_spin"),
    "commands around a job are not run for a simulated drive": ("exec_prerun", "exec_postrun"),
    "the simulated drive stores no data: its contents, compression, deduplication and how "
    "a verification checks them change nothing (verify= is run as the reads it makes)":
        ("zero_buffers", "refill_buffers", "scramble_buffers", "buffer_pattern",
         "buffer_compress_percentage", "buffer_compress_chunk", "dedupe_percentage", "dedupe_mode",
         "dedupe_working_set_percentage", "dedupe_global", "verify_interval",
         "verify_offset", "verify_pattern", "verify_fatal", "verify_dump", "verify_async",
         "verify_backlog", "verify_backlog_batch", "experimental_verify", "verify_state_load",
         "verify_state_save", "trim_percentage", "trim_verify_zero", "trim_backlog",
         "trim_backlog_batch"),
    "random offsets come from the simulator's own seeded generator (each block once per pass "
    "unless norandommap, as fio's random map)": ("randrepeat", "randseed", "allrandrepeat",
                                                 "random_generator", "rw_sequencer"),
    "host flush commands are not simulated":
        ("end_fsync", "fsync_on_close"),
    "the simulated drive does not use write lifetime hints": ("write_hint",),
    "the simulated drive returns no I/O errors":
        ("ignore_error", "error_dump", "exitall_on_error"),
    "sim fio prints JSON only, with samples per second of drive time, and writes the lat, bw "
    "and iops logs":
        ("significant_figures", "unit_base", "log_entries", "block_error_percentiles"),
}

REFUSED: dict[str, tuple[str, ...]] = {
    "several files, or loops of a job, are not simulated yet": ("nrfiles", "loops"),
    "starting a job late, waiting for a named job, or ending jobs together is not simulated yet":
        ("startdelay", "exitall", "exit_what", "wait_for", "flow_sleep"),
    "block sizes are bs= or bssplit=, aligned to the smallest or to ba=; other forms are not "
    "simulated yet": ("bsrange", "bs_unaligned", "bs_is_seq_rand"),
    "random offsets are spread by random_distribution over the span; other patterns are not "
    "simulated yet": ("percentage_random", "offset_increment", "offset_align"),
    "verifying without writing is not simulated": ("verify_only",),
    "sim fio writes the lat, bw and iops logs, uncompressed and timed from the job's start; "
    "other logs and log forms are not written yet":
        ("write_hist_log", "write_iolog", "log_hist_msec", "log_hist_coarseness",
         "log_compression", "log_compression_cpus", "log_store_compressed", "log_unix_epoch",
         "log_alternate_epoch", "log_alternate_epoch_clock_id"),
    "flushes and FUA writes are not simulated yet":
        ("sync", "fsync", "fdatasync", "write_barrier", "sync_file_range", "readfua", "writefua"),
    "a job's rate is rate= or rate_iops=, issued evenly; minimum rates and other processes are "
    "not simulated yet":
        ("rate_min", "rate_iops_min", "rate_process", "rate_cycle", "rate_ignore_thinktime"),
    "steering the queue depth by latency is not simulated yet":
        ("max_latency", "latency_target", "latency_window", "latency_percentile",
         "latency_run", "iodepth_low"),
    "think time after issuing blocks, or after seconds of I/O, is not simulated yet":
        ("thinktime_blocks_type", "thinktime_iotime"),
    "zoned drives are not simulated":
        ("zonemode", "zonesize", "zonecapacity", "zonerange", "zoneskip", "read_beyond_wp",
         "max_open_zones", "job_max_open_zones", "ignore_zone_limits", "zone_reset_threshold",
         "zone_reset_frequency"),
    "replaying an I/O log is not simulated by sim fio":
        ("read_iolog", "read_iolog_chunked", "replay_no_stall", "replay_redirect", "replay_scale",
         "replay_align", "replay_time_scale", "replay_skip", "merge_blktrace_file",
         "merge_blktrace_scalars", "merge_blktrace_iters"),
    "the job's span is set by size= and offset= on the drive":
        ("filesize", "opendir", "file_append", "create_only", "number_ios"),
    "merged read and write statistics are not printed yet": ("unified_rw_reporting",),
    "command priorities are not simulated": ("cmdprio", "cmdprio_percentage", "cmdprio_class",
                                             "cmdprio_bssplit"),
    "the statistics are what sim fio prints": ("stats",),
    "fio's built-in profiles are not simulated": ("profile",),
}

# Values of the options above that change nothing (fio's defaults, and "off"): taken quietly
HARMLESS: dict[str, frozenset[str]] = {
    **dict.fromkeys(("nrfiles", "loops", "stats"), frozenset({"1"})),
    **dict.fromkeys(("startdelay", "exitall", "bs_unaligned", "offset_increment", "offset_align",
                     "verify_only", "fsync", "fdatasync", "write_barrier", "readfua", "writefua",
                     "rate_min", "rate_iops_min", "max_latency", "latency_target",
                     "thinktime_iotime", "file_append", "create_only", "number_ios"),
                    frozenset({"0"})),
    **dict.fromkeys(("sync", "unified_rw_reporting"), frozenset({"0", "none"})),
    **dict.fromkeys(("log_compression", "log_unix_epoch", "log_alternate_epoch",
                     "log_store_compressed"), frozenset({"0"})),
    "thinktime_blocks_type": frozenset({"complete"}),
    "zonemode": frozenset({"none"}),
}


class Kind(Enum):
    MODELLED = "modelled"
    IGNORED = "ignored"
    REFUSED = "refused"


def _by_name(table: dict[str, tuple[str, ...]]) -> dict[str, str]:
    return {name: why for why, names in table.items() for name in names}


_WHY_IGNORED = _by_name(IGNORED)
_WHY_REFUSED = _by_name(REFUSED)


def canonical(key: str) -> str:
    return ALIASES.get(key, key)


def classify(name: str, value: str | None) -> tuple[Kind, str]:
    """What the simulator does with `name=value` (name as `canonical` gives it), and why."""
    if name == "ioengine" and value is not None and value not in SYNC_ENGINES + ASYNC_ENGINES:
        return Kind.REFUSED, ("not an engine that sends the job's I/O to a drive (the block "
                              f"engines are {', '.join(SYNC_ENGINES + ASYNC_ENGINES)})")
    if name in _WHY_IGNORED:
        return Kind.IGNORED, _WHY_IGNORED[name]
    if name in UNDERSTOOD:
        return Kind.MODELLED, ""
    # a flag written bare is on: 1
    if (value or "1").lower() in HARMLESS.get(name, ()):
        return Kind.MODELLED, ""
    if name in _WHY_REFUSED:
        return Kind.REFUSED, _WHY_REFUSED[name]
    return Kind.REFUSED, "not an option the simulator knows (a typo, or a fio option it does not take)"
