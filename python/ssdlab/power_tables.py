"""The tables of the power suite's scores (catalogue/power.py), for `show` and the report:
power states, APST and thermal thresholds; wake-up latency per idle length; idle power;
the thermal soak's first throttle; health before the run and after its tests."""

from __future__ import annotations

from typing import Any

PowerTable = tuple[str, tuple[str, ...], list[tuple[str, ...]]]  # caption, header, rows


def _text(value: Any, unit: str = "") -> str:
    return "" if value is None else f"{value:g}{unit}" if isinstance(value, float) else f"{value}{unit}"


def power_tables(test_id: str, score: dict[str, Any] | None) -> list[PowerTable]:
    """The tables of one test's score; none for a test outside the power suite or without a score."""
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
        policies = [(label, score[key]) for label, key in (("host policy", "host_policy"), ("APST off", "apst_off"))
                    if key in score]
        rows = [(idle_s, *(f"{p['by_idle_s'][idle_s]['wake_us']:.1f} / {p['by_idle_s'][idle_s]['max_wake_us']:.1f}"
                           for _, p in policies))
                for idle_s in policies[0][1]["by_idle_s"]]
        warm = ("warm read", *(f"{p['warm_read_us']:.1f}" for _, p in policies))
        return [("wake-up latency (first read minus a warm read), median / max µs",
                 ("idle s", *(label for label, _ in policies)), [warm, *rows])]
    if test_id == "idle-power":
        return [("idle power", ("", "mW"), [("idle (APST on)", _text(score["value"])),
                                             ("active idle (APST off)", _text(score["active_idle_mw"]))])]
    if test_id == "thermal-soak":
        return [("thermal soak", ("", ""), [
            ("mean MB/s", _text(score["value"])), ("throttle events", _text(score["throttle_events"])),
            ("seconds to the first throttle", _text(score["seconds_to_first_throttle"])),
            ("GB written before it", _text(score["gb_before_first_throttle"])),
            ("throttled MB/s", _text(score["throttled_mbps"]))])]
    if test_id == "health":
        return [("health before the run and after its tests", ("", "before", "after", "change"),
                 [tuple(row) for row in score["before_after"]])]
    return []
