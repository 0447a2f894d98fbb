"""Speed of the simulator core (issue 11): prints the figures of `cargo bench -p ssdsim`.

    .venv/bin/python benchmarks/sim_speed.py [PRESET]

Each scenario runs in its own process so its peak memory is its own
(crates/ssdsim/benches/speed.rs): a reference of this machine's memory and
compute speed (figures of a shared machine wander from day to day), the
whole-drive fill of a 1 TB preset (128 KiB QD32; target at most 3 s wall), 4 KiB
random writes at QD32 on the full drive in steady state with GC active (target
at least 5 million simulated commands per CPU-second), random reads and a 70/30
mix, and peak memory (target at most 1.5 GiB per TB).
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

if __name__ == "__main__":
    preset = sys.argv[1:] or ["wd-sn850-1tb"]
    sys.exit(subprocess.run(["cargo", "bench", "-q", "-p", "ssdsim", "--bench", "speed", "--", *preset],
                            cwd=ROOT).returncode)
