"""The tables of the scores that hold more than one figure, for `show` and the report: the
power suite's (catalogue/power.py: power states, APST and thermal thresholds; wake-up latency
and power state per idle length; idle power; the thermal soak's first throttle; health
before the run and after its tests), slc-retirement's fills young and aged
(catalogue/aged.py), retention's reads fresh, after the wait and after idle
(catalogue/retention.py), and endurance's probes against the data written (catalogue/endurance.py)."""

from __future__ import annotations

from typing import Any

from ssdlab.catalogue.retention import TIERS, duration_words

PowerTable = tuple[str, tuple[str, ...], list[tuple[str, ...]]]  # caption, header, rows
WAKE_POLICIES = (("host policy", "host_policy"), ("APST off", "apst_off"))  # label, key in idle-wake's score


def wake_policies(score: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The policies an idle-wake score measured, labelled, in order; none for another score."""
    return [(label, score[key]) for label, key in WAKE_POLICIES if key in score]


def _text(value: Any, unit: str = "") -> str:
    return "" if value is None else f"{value:g}{unit}" if isinstance(value, float) else f"{value}{unit}"


def power_tables(test_id: str, score: dict[str, Any] | None) -> list[PowerTable]:
    """The tables of one test's score; none for a test whose score is one figure, or without a score."""
    if not score:
        return []
    if test_id == "power-states":
        states = [(str(s["index"]), _text(s["max_power_w"], " W"), _text(s["idle_power_w"], " W"),
                   _text(s["active_power_w"], " W"), _text(s["entry_latency_us"]), _text(s["exit_latency_us"]),
                   "yes" if s["operational"] else "no") for s in score["states"]]
        apst = [(str(e["from_state"]), str(e["idle_ms"]), str(e["target_state"])) for e in score["apst_table"]]
        limits = [(name, _text(score[key])) for name, key in (
            ("current power state", "current_state"), ("APST supported", "apst_supported"),
            ("APST enabled", "apst_enabled"), ("WCTEMP (°C)", "wctemp_c"), ("CCTEMP (°C)", "cctemp_c"),
            ("host-controlled thermal management", "hctma"), ("TMT1 (°C)", "tmt1_c"), ("TMT2 (°C)", "tmt2_c"))]
        return [("power states", ("state", "max power", "idle power", "active power", "entry µs", "exit µs",
                                  "operational"), states),
                ("APST and thermal thresholds", ("", ""), limits),
                *([("APST table", ("from state", "idle ms", "to state"), apst)] if apst else [])]
    if test_id == "idle-wake":
        return [_wake_table(score)]
    if test_id == "idle-power":
        return [("idle power", ("", "mW"), [("idle (APST on)", _text(score["value"])),
                                             ("active idle (APST off)", _text(score["active_idle_mw"]))])]
    if test_id == "thermal-soak":
        return [("thermal soak", ("", ""), [
            ("mean MB/s", _text(score["value"])), ("throttle events", _text(score["throttle_events"])),
            ("seconds to the first throttle", _text(score["seconds_to_first_throttle"])),
            ("GB written before it", _text(score["gb_before_first_throttle"])),
            ("throttled MB/s", _text(score["throttled_mbps"]))])]
    if test_id == "slc-retirement":
        fills = (score["young"], score["aged"])
        return [(f"the fill young and aged to {score['age']}", ("", "young", "aged"), [
            ("SLC cache (GiB)", *(_text(f["slc_cache_gib"]) or "none seen" for f in fills)),
            *((label, *(_text(f[key]) for f in fills)) for label, key in (
                ("mean MB/s", "value"), ("MB/s over the last 16 GiB", "last16_mbps"),
                ("GiB written", "gib_written")))])]
    if test_id == "retention":
        return _retention_tables(score)
    if test_id == "endurance":
        return _endurance_tables(score)
    if test_id == "health":
        return [("health before the run and after its tests", ("", "before", "after", "change"),
                 [tuple(row) for row in score["before_after"]])]
    return []


def _wake_table(score: dict[str, Any]) -> PowerTable:
    """Per idle length and policy, the wake-up latency and, where known, the power state after
    that idle: reached (a simulated drive), or allowed by APST (a real one)."""
    policies = wake_policies(score)
    header, warm = ["idle s"], ["warm read"]
    rows = {idle_s: [idle_s] for idle_s in policies[0][1]["by_idle_s"]}
    for label, policy in policies:
        basis = policy.get("power_state_is")  # absent where not known, and in scores stored before it was
        header += [label, *([f"{label}: power state {basis}"] if basis else [])]
        warm += [f"{policy['warm_read_us']:.1f}", *([""] if basis else [])]
        for idle_s, row in rows.items():
            figures = policy["by_idle_s"][idle_s]
            row += [f"{figures['wake_us']:.1f} / {figures['max_wake_us']:.1f}",
                    *([f"PS{figures['power_state']}"] if basis else [])]
    return ("wake-up latency (first read minus a warm read), median / max µs", tuple(header),
            [tuple(warm), *map(tuple, rows.values())])


def _retention_tables(score: dict[str, Any]) -> list[PowerTable]:
    """Each read's speed, slow share, decoding tiers (a simulated drive's) and check; then the wait."""
    reads = list(score["reads"].values())
    tiers = any(r["tiers"] for r in reads)
    header = ("read", "idle before", "MB/s", "> 300 µs %", "> 1 ms %", "> 2 ms %", "p99 µs", "max µs",
              *(("read retries", "soft decodes", "parity rebuilds", "uncorrectable") if tiers else ()), "check")
    rows = [(r["label"], duration_words(r["idle_before_s"]) if r["idle_before_s"] else "", _text(r["mbps"]),
             *(_text(v) for v in r["above_us"].values()), _text(r["p99_us"]), _text(r["max_us"]),
             *((_text((r["tiers"] or {}).get(t)) for t in TIERS) if tiers else ()),
             r["verify"]["summary"] if r["verify"] else "") for r in reads]
    wait = score["wait"]
    return [("reads fresh, after the wait and after powered idle", header, rows),
            ("the wait", ("", ""), [
                ("time off, planned", duration_words(wait["planned_s"])),
                ("time off, counted", duration_words(wait["counted_s"])),
                ("temperature (°C)", _text(wait["temperature_c"])),
                ("activation energy (eV)", f"{score['activation_ev']:g} ({score['activation_source']})"),
                ("equivalent at 30 °C", duration_words(score["equivalent_s_at_30c"])),
                ("finding", score["finding"])])]


ENDURANCE_HEADER = ("probe", "TB written", "seq. write MB/s", "fill MB/s", "SLC cache GiB", "QD1 read µs",
                    "QD1 p99 µs", "% used", "spare %", "media errors", "write amplification")


def _endurance_tables(score: dict[str, Any]) -> list[PowerTable]:
    """Each probe's figures against the data written; then the run's outcome."""
    rows = []
    for index, probe in enumerate(score["probes"]):
        health = probe.get("health") or {}
        rows.append((str(index), _text(probe["written_tb"]), *(_text(probe.get(key)) for key in (
            "seq_write_mbps", "sustained_mbps", "slc_cache_gib", "qd1_read_mean_us", "qd1_read_p99_us")),
            *(_text(health.get(key)) for key in ("percentage_used", "available_spare_pct", "media_errors")),
            _text(probe.get("write_amplification"))))
    stopped = score["read_only"]
    outcome = [("workload", score["workload"]), ("volume planned (TB)", _text(score["volume_bytes"] / 1e12)),
               ("written (TB)", _text(score["written_tb"])),
               ("read-only after (TB)", f"{stopped['after_tb']:g} ({stopped['counted_from']})" if stopped else "no"),
               ("finding", score["finding"])]
    return [("probes against the data written", ENDURANCE_HEADER, rows), ("the run", ("", ""), outcome)]
