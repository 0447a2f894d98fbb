"""Accuracy of the SLC cache estimate (`ssdlab analyze fill`) on synthetic fills of known truth.

    .venv/bin/python benchmarks/fill_analysis_accuracy.py [--curves 300] [--seed 1]

Generates curves across the parameter space (500 GB–2 TB drives, caches of
6–300 GiB, cache/native ratios 1.5–6×, ±10 % multiplicative noise, dips inside
the cache, 1–3 GiB recovery bursts in phase 2, a phase 3 fold-and-creep, a
wandering native speed, no cache at all) and prints the worst and median error
of the estimate in GiB and %, how many estimates are within tolerance (5 % or
2 GiB, whichever is larger; a drive without a cache must get none), and how
many phase 3 tails were found.
Exits non-zero when any is out of tolerance.

The generator below is also what tests/analysis/test_analysis_fill.py draws its shapes from.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import median

import numpy as np

from ssdlab.analysis.fill import analyze_fill
from ssdlab.model import GibPoint

GB_IN_GIB = 10**9 / 2**30
NOISE = 0.10
CREEP_END = 0.9  # phase 3 creeps back up to this share of native speed at full
SUB_SAMPLES = 16  # points per segment at which the true speed is integrated

Uniform = Callable[[float, float], float]
Integer = Callable[[int, int], int]


@dataclass(frozen=True)
class FillShape:
    """A synthetic drive's fill: positions in GiB written, speeds in MB/s, spans as
    (start, length)."""

    capacity_gib: float
    cache_gib: float  # 0: no cache
    cache_mbps: float
    native_mbps: float
    segment_gib: float = 1.0
    dips: tuple[tuple[float, float], ...] = ()  # inside the cache, at native speed
    bursts: tuple[tuple[float, float], ...] = ()  # in phase 2, at cache speed
    native_swing: float = 0.0  # native speed wanders down to (1 - swing) x native
    fold_gib: float | None = None  # start of phase 3
    fold_mbps: float = 0.0  # speed when phase 3 starts, creeping up to CREEP_END x native
    noise: float = NOISE
    seed: int = 0

    def speed_at(self, gib: np.ndarray) -> np.ndarray:
        speed = self.native_mbps * (1 - self.native_swing * _wander(gib))
        speed = np.where(gib < self.cache_gib, self.cache_mbps, speed)
        for (start, length), mbps in ([(d, self.native_mbps) for d in self.dips]
                                      + [(b, self.cache_mbps) for b in self.bursts]):
            speed = np.where((gib >= start) & (gib < start + length), mbps, speed)
        if self.fold_gib is not None:
            progress = (gib - self.fold_gib) / (self.capacity_gib - self.fold_gib)
            creep = self.fold_mbps + (CREEP_END * self.native_mbps - self.fold_mbps) * progress
            speed = np.where(gib >= self.fold_gib, creep, speed)
        return speed


def _wander(gib: np.ndarray) -> np.ndarray:
    """An irregular, deterministic wave between 0 and 1 with features a few GiB wide."""
    return (1 + np.sin(2 * np.pi * gib / 11) * np.sin(2 * np.pi * gib / 37)) / 2


def synthetic_fill(shape: FillShape) -> list[GibPoint]:
    """The per-segment series a fill of `shape` would record, noise included."""
    count = math.floor(shape.capacity_gib / shape.segment_gib + 1e-9)
    ends = shape.segment_gib * np.arange(1, count + 1)
    if shape.capacity_gib - ends[-1] > 1e-9:
        ends = np.append(ends, shape.capacity_gib)
    sizes = np.diff(ends, prepend=0.0)
    inside = (np.arange(SUB_SAMPLES) + 0.5) / SUB_SAMPLES
    samples = (ends - sizes)[:, None] + sizes[:, None] * inside
    mbps = 1 / (1 / shape.speed_at(samples)).mean(axis=1)  # time-weighted over the segment
    jitter = np.random.default_rng(shape.seed).uniform(-shape.noise, shape.noise, len(ends))
    return [GibPoint(gib=float(g), mbps=float(m)) for g, m in zip(ends, mbps * (1 + jitter))]


def cache_tolerance_gib(truth_gib: float) -> float:
    return max(0.05 * truth_gib, 2.0)


def random_shape(uniform: Uniform, integer: Integer) -> FillShape:
    """A full-scale shape drawn from the parameter space; `uniform(a, b)` and
    `integer(a, b)` (inclusive) draw the numbers, from numpy or from hypothesis."""
    capacity = (500, 1000, 2000)[integer(0, 2)] * GB_IN_GIB
    cache_mbps = uniform(1500, 7000)
    native = cache_mbps / uniform(1.5, 6)
    seed = integer(0, 2**31)
    if integer(0, 9) == 0:
        return FillShape(capacity, 0, native, native, seed=seed)
    cache = uniform(6, 300)
    dips = ()
    if cache >= 16 and integer(0, 1):  # a dip well inside the cache, away from its start and end
        dips = ((integer(5, math.floor(cache) - 8), integer(1, 3)),)
    post_cache = ("steady", "variable", "folding")[integer(0, 2)]
    swing = uniform(0.1, 0.35) if post_cache == "variable" else 0.0
    fold = fold_mbps = None
    native_end = capacity
    if post_cache == "folding":
        fold = uniform(max(cache + 0.3 * (capacity - cache), 0.75 * capacity), 0.92 * capacity)
        fold_mbps = native / uniform(1.6, 3)
        native_end = fold
    bursts = []
    position = math.ceil(cache) + integer(2, 40)
    for _ in range(integer(0, 4)):
        length = integer(1, 3)
        if position + length > native_end:
            break
        bursts.append((position, length))
        position += length + integer(4, 60)
    return FillShape(capacity, cache, cache_mbps, native, dips=dips, bursts=tuple(bursts),
                     native_swing=swing, fold_gib=fold, fold_mbps=fold_mbps or 0.0, seed=seed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--curves", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    shapes = [random_shape(lambda a, b: float(rng.uniform(a, b)),
                           lambda a, b: int(rng.integers(a, b, endpoint=True)))
              for _ in range(args.curves)]
    errors_gib, errors_pct, within = [], [], 0
    no_cache = found_none = folds = folds_found = false_folds = 0
    for shape in shapes:
        analysis = analyze_fill(synthetic_fill(shape))
        estimate = analysis.slc_cache_gib
        found_fold = analysis.phases[-1].kind == "folding"
        folds += shape.fold_gib is not None
        folds_found += found_fold and shape.fold_gib is not None
        false_folds += found_fold and shape.fold_gib is None
        if not shape.cache_gib:
            no_cache += 1
            found_none += estimate is None
            within += estimate is None
            continue
        error = abs((estimate or 0.0) - shape.cache_gib)
        errors_gib.append(error)
        errors_pct.append(100 * error / shape.cache_gib)
        within += error <= cache_tolerance_gib(shape.cache_gib)
    print(f"{len(shapes)} synthetic fills (seed {args.seed}), {len(errors_gib)} with a cache, "
          f"{no_cache} without")
    print(f"cache estimate error: worst {max(errors_gib):.2f} GiB / {max(errors_pct):.2f} %, "
          f"median {median(errors_gib):.2f} GiB / {median(errors_pct):.2f} %")
    print(f"drives without a cache reported as such: {found_none}/{no_cache}")
    print(f"phase 3 found: {folds_found}/{folds}, where there is none: {false_folds}")
    print(f"within tolerance (5 % or 2 GiB): {within}/{len(shapes)}")
    return 0 if within == len(shapes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
