"""Which power state a drive is in after an idle (METHODOLOGY.md section 4, idle-wake: "the
power state reached where known").

A simulated drive counts the seconds it spends in each state (`psN_s` among a step's device
counters), so the state it reached is known. A real host cannot see it without a meter; what
it knows is what the drive's APST table (feature 0x0c) allows after that long an idle, and
the report says "allowed by APST", never "reached".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ssdlab.telemetry.records import ApstEntry

REACHED = "reached"
ALLOWED_BY_APST = "allowed by APST"
_STATE_SECONDS = re.compile(r"ps(\d+)_s")


def deepest_state(device: Mapping[str, float] | None) -> int | None:
    """The deepest state with time in it among a step's device counters; None without them."""
    states = [int(m.group(1)) for key, seconds in (device or {}).items()
              if (m := _STATE_SECONDS.fullmatch(key)) and seconds > 0]
    return max(states, default=None)


def apst_allowed_state(entries: Sequence[ApstEntry], start_state: int, idle_s: float) -> int:
    """The state APST lets a drive in `start_state` reach within `idle_s` without a command.
    An entry's idle time counts from entering its state (the spec's "idle time prior to
    transition"), so a chain of entries adds up: with Linux's table for the SN850, PS0 goes
    to PS3 after 100 ms and PS3 to PS4 after 2000 more, PS4 from 2.1 s on. Pass no entries
    when APST is off."""
    by_state = {e.from_state: e for e in entries}
    state, elapsed, visited = start_state, 0.0, {start_state}
    while (entry := by_state.get(state)) and entry.target_state not in visited:
        elapsed += entry.idle_ms / 1000
        if elapsed > idle_s:
            break
        state = entry.target_state
        visited.add(state)
    return state
