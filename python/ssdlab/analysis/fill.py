"""Reading a whole-drive-fill curve: SLC cache size, phases and mean throughput.

The input is the per-GiB series of a fill (`GibPoint`: `gib` written at the end
of a segment, MB/s over that segment). Segments start at 0 and may have any
size: 1 GiB at full scale, a fraction of a GiB in small-scale runs, and the last
one is often partial. METHODOLOGY.md §1 names the phases: "cache" (phase 1),
"native" (phase 2, recovery bursts back to cache speed included) and "folding"
(phase 3: near full the drive slows further, then creeps back up).

Method, in the order `analyze_fill` applies it:

1. Sustained length S. A level counts only when it lasts S = 4 GiB, longer
   than the 1–3 GiB recovery bursts of phase 2. A short series uses 1/8 of its
   length instead, but never fewer than 3 segments, so one or two noisy
   segments never make a drop.
2. Robust cache level and drop threshold. The cache level H is the median of
   the first S written; a segment is *low* when slower than H/√1.5. Segments are
   classified one at a time, so the two levels must be further apart than the
   noise band: with ±10 % jitter that is (1.1/0.9)² ≈ 1.5, the smallest
   cache/native ratio this analysis is specified for, and H/√1.5 is the
   geometric midpoint between the levels at that ratio.
3. First sustained drop (a change-point search with a minimum run length S
   over the runs of high and low segments). A low run is a dip inside the
   cache, and is skipped, when it is shorter than S and cache speed then holds
   for at least S. It ends the cache phase when it lasts S, or when cache speed
   comes back for less than S and drops again: that return is a recovery burst
   of phase 2. The cache level is then re-estimated as the median of the whole
   cache phase and the search runs once more, so a start at the top of the
   noise band cannot set the threshold. No sustained drop means no cache
   (`slc_cache_gib` is None).
4. Folding. On the segments after the cache, bursts left out, a two-level
   piecewise-constant least-squares fit of log throughput (one change point,
   each side at least max(S, 5 % of the fill)) finds where a slower tail
   begins. It is phase 3 when the tail's geometric-mean speed is at least
   1.25× below the part before it: a dip that creeps back up still averages well
   below native speed, whereas noise or a wandering native speed does not.
5. Means are bytes over time (a harmonic mean weighted by segment size): each
   phase and the whole fill over their segments, and the last 16 GiB
   (`window_mean`, which the fill score uses too).

Limits, by construction: a cache shorter than S is not resolved; cache speed
returning less than S after the drop is read as a burst, so a dip within S of
the real cache end shortens the estimate to the dip; a first S more than about
1.2x faster than the rest of the cache is taken for the cache. With Gaussian
rather than bounded noise, σ = 5 % still gives exact estimates, σ = 7 % misses
about 3 % of caches (benchmarks/fill_analysis_accuracy.py's shapes).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ssdlab.model import GibPoint
from ssdlab.units import GiB

PhaseKind = Literal["cache", "native", "folding"]

SUSTAINED_GIB = 4.0
SHORT_SERIES_SHARE = 1 / 8
MIN_SUSTAINED_SEGMENTS = 3
MIN_CACHE_RATIO = 1.5
MIN_FOLD_SHARE = 0.05
MIN_FOLD_RATIO = 1.25
_EPS = 1e-9  # relative slack when comparing float lengths in GiB
LAST_WINDOW = 16 * GiB


@dataclass(frozen=True)
class FillPhase:
    kind: PhaseKind
    start_gib: float
    end_gib: float
    mean_mbps: float


@dataclass(frozen=True)
class FillAnalysis:
    """What a whole-drive-fill curve says; `finding` is one sentence for people."""

    slc_cache_gib: float | None
    phases: tuple[FillPhase, ...]
    last16_mbps: float
    mean_mbps: float
    finding: str

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict, MB/s rounded to 0.01."""
        return {"slc_cache_gib": self.slc_cache_gib,
                "phases": [{"start_gib": p.start_gib, "end_gib": p.end_gib,
                            "mean_mbps": round(p.mean_mbps, 2), "kind": p.kind}
                           for p in self.phases],
                "last16_mbps": round(self.last16_mbps, 2),
                "mean_mbps": round(self.mean_mbps, 2),
                "finding": self.finding}


def analyze_fill(series: Sequence[GibPoint]) -> FillAnalysis:
    """Cache size, phases and means of a fill series (see the module docstring)."""
    ends, mbps = _checked_arrays(series)
    sizes = np.diff(ends, prepend=0.0)
    sustained = _sustained_gib(sizes)
    cache = _cache_phase(mbps, sizes, sustained)
    cache_end = cache[0] if cache else 0
    bursts = mbps >= cache[1] if cache else np.zeros(len(mbps), dtype=bool)
    min_fold = max(sustained, MIN_FOLD_SHARE * ends[-1])
    fold_start = _folding_start(mbps, sizes, cache_end, bursts, min_fold)

    bounds = [0, cache_end, len(mbps) if fold_start is None else fold_start, len(mbps)]
    kinds: tuple[PhaseKind, ...] = ("cache", "native", "folding")
    phases = tuple(FillPhase(kind, float(ends[a - 1]) if a else 0.0, float(ends[b - 1]),
                             _bytes_over_time(sizes[a:b], mbps[a:b]))
                   for kind, a, b in zip(kinds, bounds, bounds[1:]) if b > a)
    slc_cache_gib = float(ends[cache_end - 1]) if cache else None
    return FillAnalysis(slc_cache_gib=slc_cache_gib, phases=phases,
                        last16_mbps=window_mean(series, LAST_WINDOW),
                        mean_mbps=_bytes_over_time(sizes, mbps),
                        finding=_finding(phases, slc_cache_gib, float(ends[-1])))


def window_mean(series: Sequence[GibPoint], window_bytes: int) -> float:
    """Bytes over time of the segments that end within the last `window_bytes`."""
    if not series:
        return 0.0
    end = series[-1].gib
    start = max(0.0, end - window_bytes / GiB)
    seconds = 0.0
    nbytes = 0.0
    previous = 0.0
    for point in series:
        size = (point.gib - previous) * GiB
        if point.gib > start and point.mbps > 0:
            nbytes += size
            seconds += size / (point.mbps * 1e6)
        previous = point.gib
    return nbytes / seconds / 1e6 if seconds else 0.0


def format_gib(gib: float) -> str:
    """'200 GiB', '37.5 GiB', '0.375 GiB': fill curves are read in GiB written."""
    return f"{round(gib, 3):g} GiB"


def _bytes_over_time(sizes_gib: np.ndarray, mbps: np.ndarray) -> float:
    """MB/s over segments of the given sizes: total bytes / total seconds."""
    return float(sizes_gib.sum() / (sizes_gib / mbps).sum())


def _sustained_gib(sizes_gib: np.ndarray) -> float:
    """How long (GiB) a level must last to count: step 1 of the method."""
    short_series = SHORT_SERIES_SHARE * float(sizes_gib.sum())
    return max(min(SUSTAINED_GIB, short_series),
               MIN_SUSTAINED_SEGMENTS * float(np.median(sizes_gib)))


def _checked_arrays(series: Sequence[GibPoint]) -> tuple[np.ndarray, np.ndarray]:
    if not series:
        raise ValueError("a fill series needs at least one point")
    ends = np.array([p.gib for p in series], dtype=float)
    mbps = np.array([p.mbps for p in series], dtype=float)
    if np.any(np.diff(ends) <= 0):
        raise ValueError("the GiB written must increase from point to point")
    if np.any(mbps <= 0):
        raise ValueError("every segment's MB/s must be greater than 0")
    return ends, mbps


def _cache_phase(mbps: np.ndarray, sizes: np.ndarray,
                 sustained: float) -> tuple[int, float] | None:
    """(segments in the cache phase, low/high threshold MB/s), or None without a cache."""
    first_stretch = max(1, int(np.searchsorted(np.cumsum(sizes), sustained * (1 + _EPS),
                                               side="right")))
    threshold = _drop_threshold(mbps[:first_stretch])
    end = _first_sustained_drop(mbps < threshold, sizes, sustained)
    if end:  # again, levelled on the whole cache phase rather than its start
        threshold = _drop_threshold(mbps[:end])
        end = _first_sustained_drop(mbps < threshold, sizes, sustained)
    return (end, threshold) if end else None


def _drop_threshold(cache_mbps: np.ndarray) -> float:
    return float(np.median(cache_mbps)) / math.sqrt(MIN_CACHE_RATIO)


def _first_sustained_drop(low: np.ndarray, sizes: np.ndarray, sustained: float) -> int | None:
    """Index of the segment where the first sustained low run starts (step 3)."""
    edges = [0, *(np.flatnonzero(np.diff(low.astype(np.int8))) + 1), len(low)]
    runs = list(zip(edges, edges[1:]))
    lasts = [sizes[a:b].sum() >= sustained * (1 - _EPS) for a, b in runs]
    for k, (start, _) in enumerate(runs):
        if not low[start]:
            continue
        # A drop that lasts, or one that cache speed interrupts only briefly (a burst).
        burst_follows = k + 2 < len(runs) and not lasts[k + 1]
        if lasts[k] or burst_follows:
            return start
    return None


def _folding_start(mbps: np.ndarray, sizes: np.ndarray, after: int, bursts: np.ndarray,
                   min_side_gib: float) -> int | None:
    """First segment of phase 3, by a one-change-point least-squares fit (step 4)."""
    kept = np.arange(after, len(mbps))
    kept = kept[~bursts[kept]]
    if len(kept) < 2:
        return None
    w = sizes[kept]
    wy = w * np.log(mbps[kept])
    left_w, left_wy = np.cumsum(w)[:-1], np.cumsum(wy)[:-1]
    right_w, right_wy = w.sum() - left_w, wy.sum() - left_wy
    # Minimising the two sides' squared error is maximising this sum.
    explained = left_wy ** 2 / left_w + right_wy ** 2 / right_w
    long_enough = (left_w >= min_side_gib * (1 - _EPS)) & (right_w >= min_side_gib * (1 - _EPS))
    if not long_enough.any():
        return None
    split = int(np.argmax(np.where(long_enough, explained, -np.inf)))
    slowdown = math.exp(left_wy[split] / left_w[split] - right_wy[split] / right_w[split])
    return int(kept[split + 1]) if slowdown >= MIN_FOLD_RATIO else None


def _finding(phases: tuple[FillPhase, ...], slc_cache_gib: float | None, total_gib: float) -> str:
    by_kind = {p.kind: p for p in phases}
    if slc_cache_gib is None:
        text = (f"no sustained drop from the starting speed: no SLC cache seen in the "
                f"{format_gib(total_gib)} written")
    else:
        cache, native = by_kind["cache"], by_kind["native"]
        text = (f"SLC cache of about {format_gib(slc_cache_gib)} at "
                f"{cache.mean_mbps:.0f} MB/s, then {native.mean_mbps:.0f} MB/s "
                f"({cache.mean_mbps / native.mean_mbps:.1f}x slower)")
    if "folding" in by_kind:
        fold = by_kind["folding"]
        text += (f"; from {format_gib(fold.start_gib)} the drive folds while writing "
                 f"and averages {fold.mean_mbps:.0f} MB/s")
    return text
