"""Small builders of model values for tests."""

from ssdlab.model import DirectionResult, GibPoint, Latency, SecondPoint, StepResult


def latency(values_ns):
    hist = {}
    for v in values_ns:
        hist[v] = hist.get(v, 0) + 1
    return Latency.from_histogram(hist.items(), sum(values_ns) / len(values_ns),
                                  min(values_ns), max(values_ns))


def result(mbps=100.0, busy_s=1.0, bs=4096, direction="read", per_gib=(), started="2026-01-01T00:00:00+00:00"):
    nbytes = int(mbps * 1e6 * busy_s)
    d = DirectionResult(ios=nbytes // bs, bytes=nbytes, busy_s=busy_s,
                        latency=latency([10_000, 20_000, 30_000, 90_000]))
    return StepResult(started_at=started, busy_s=busy_s, idle_s=0.0, engine="test",
                      per_second=(SecondPoint(t_s=busy_s, mbps=mbps, iops=nbytes / bs / busy_s),),
                      per_gib=tuple(GibPoint(gib=g, mbps=m) for g, m in per_gib),
                      **{direction: d})
