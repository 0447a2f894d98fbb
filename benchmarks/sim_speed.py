"""Speed of the simulator core (issue 3): prints the figures of `cargo bench -p ssdsim`.

    .venv/bin/python benchmarks/sim_speed.py [PRESET]

Three scenarios, each in its own process so its peak memory is its own
(crates/ssdsim/benches/speed.rs): the whole-drive fill of a 1 TB preset
(128 KiB QD32; target at most 10 s wall), 4 KiB random writes at QD32 on the
full drive in steady state with GC active (target at least 2 million simulated
commands per wall-second), and peak memory (target at most 2.5 GiB per TB).
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

if __name__ == "__main__":
    preset = sys.argv[1:] or ["wd-sn850-1tb"]
    sys.exit(subprocess.run(["cargo", "bench", "-q", "-p", "ssdsim", "--bench", "speed", "--", *preset],
                            cwd=ROOT).returncode)
