"""Options shared by several subcommands."""

from pathlib import Path
from typing import Annotated, Any

import typer

from ssdlab.backends.sim_host import Cooling
from ssdlab.errors import SsdlabError
from ssdlab.model import Age
from ssdlab.units import parse_size

DbOption = Annotated[Path | None, typer.Option(
    "--db", help="SQLite database (default: $SSDLAB_DB, else $XDG_DATA_HOME/ssdlab/ssdlab.db)")]
JsonOption = Annotated[bool, typer.Option("--json", help="print JSON instead of a table")]
# what `run` and `sweep` run: the suite, which of its tests, at what scale
SuiteOption = Annotated[str, typer.Option(help="built-in suite name (`ssdlab suites`) or a suite .toml file")]
TestsOption = Annotated[str | None, typer.Option(help="only these test ids, comma-separated, in this order")]
ScaleOption = Annotated[float, typer.Option(help="0 < F <= 1: multiply spans, byte and time limits and idle times")]
# the simulated drive's host and prior life, for `run` (sim:PRESET targets) and `sweep`
ApstLatencyOption = Annotated[int | None, typer.Option(
    "--apst-latency-us", metavar="US",
    help="sim:PRESET only: the host's APST latency limit in µs (Linux's default 100000; 0: APST off)")]
NoLowPowerStatesOption = Annotated[bool, typer.Option(
    "--no-low-power-states",
    help="sim:PRESET only: a platform on which the drive cannot reach its non-operational power states "
         "(no PCIe L1.2)")]
CoolingOption = Annotated[Cooling | None, typer.Option(
    help="sim:PRESET only: how the drive is cooled (the simulator's default: a heatsink)")]
AmbientOption = Annotated[float | None, typer.Option(
    "--ambient-c", metavar="C", help="sim:PRESET only: the air around the drive, °C (default 35)")]
AgeOption = Annotated[str | None, typer.Option(
    metavar="AGE", help="sim:PRESET only: the drive worn before the first test, as its life before the run "
                        "would have left it: 2000pe (P/E cycles), 80% (of its rated cycles) or 400TBW")]
# the retention, endurance and trace tests' settings, for `run` and `sweep`
RetentionDaysOption = Annotated[float | None, typer.Option(
    "--retention-days", metavar="DAYS",
    help="the retention test: how long the drive is left powered off (default 365, JEDEC's client "
         "requirement); a real drive's run waits that long for `ssdlab resume`")]
RetentionCOption = Annotated[float | None, typer.Option(
    "--retention-c", metavar="C",
    help="the retention test: where the drive is kept while off, °C (default 30): a shelf, or an oven; "
         "gives the equivalent time at 30 °C")]
EnduranceVolumeOption = Annotated[str | None, typer.Option(
    "--endurance-volume", metavar="TB|%",
    help="the endurance test: what to write, TB (600TB) or a share of the rated TBW (100%); default the "
         "preset's rated TBW, which a real drive must state (its datasheet's)")]
EnduranceWorkloadOption = Annotated[str | None, typer.Option(
    "--endurance-workload", metavar="seq|random|jesd219",
    help="the endurance test: 128 KiB sequential passes, 4 KiB random writes, or the JESD219 enterprise "
         "mix (default)")]
EnduranceProbesOption = Annotated[int | None, typer.Option(
    "--endurance-probes", metavar="N",
    help="the endurance test: write the volume in N intervals, probing after each (default 10)")]
TraceOption = Annotated[list[str] | None, typer.Option(
    "--trace", metavar="FILE",
    help="the trace test: a trace to replay, in any format `ssdlab trace stats` reads; once per trace")]
TraceFormatOption = Annotated[str | None, typer.Option(
    "--trace-format", metavar="FORMAT",
    help="the trace test: the traces' format, when detection cannot tell")]
TraceDeviceOption = Annotated[str | None, typer.Option(
    "--trace-device", metavar="DEVICE", help="the trace test: replay only this disk of a trace of several")]
TraceFitOption = Annotated[str | None, typer.Option(
    "--trace-fit", metavar="wrap|scale",
    help="the trace test: offsets past the target wrap into it (default) or all scale by target / trace")]
TraceBlockOption = Annotated[int | None, typer.Option(
    "--trace-block", metavar="BYTES",
    help="the trace test: the target's logical block; requests grow to whole blocks (default 4096)")]
IdleCapOption = Annotated[float | None, typer.Option(
    "--idle-cap-ms", metavar="MS",
    help="the trace test: longest gap between issue times (default 25, the reviews'; 0: no cap)")]
TraceSpeedOption = Annotated[float | None, typer.Option(
    "--trace-speed", metavar="X", help="the trace test: replay X times as fast as recorded (default 1)")]
NoTimingOption = Annotated[bool, typer.Option(
    "--no-timing", help="the trace test: issue the records as fast as the drive takes them, --trace-qd at "
    "a time, instead of at their times")]
TraceQdOption = Annotated[int | None, typer.Option(
    "--trace-qd", metavar="N",
    help="the trace test: most commands outstanding (default 1023 in time, 32 with --no-timing)")]

# where `run`, `resume` and `sweep` reach a Dask cluster (distributed/), besides their own --cluster
SchedulerFileOption = Annotated[Path | None, typer.Option(
    "--scheduler-file", metavar="FILE",
    help="as --cluster, the address read from a Dask scheduler file (`dask scheduler --scheduler-file`)")]
TlsOption = Annotated[Path | None, typer.Option(
    "--tls", metavar="DIR",
    help="for a tls:// cluster: the directory of its certificates (`ssdlab fleet certs DIR`), whose client "
         "certificate this command shows")]
MixedVersionsOption = Annotated[bool, typer.Option(
    "--allow-mixed-versions", help="run on a fleet's workers whose ssdlab or fio differs from this machine's")]
RunIdArgument = Annotated[str, typer.Argument(
    help="run id from `ssdlab runs`, or `latest`")]
RunIdsArgument = Annotated[list[str], typer.Argument(
    help="run ids from `ssdlab runs`, or `latest`; the first is the reference")]


def test_settings(retention_days: float | None, retention_c: float | None, endurance_volume: str | None,
                  endurance_workload: str | None, endurance_probes: int | None, trace: list[str] | None,
                  trace_format: str | None, trace_device: str | None, trace_fit: str | None, trace_block: int | None,
                  idle_cap_ms: float | None, trace_speed: float | None, no_timing: bool,
                  trace_qd: int | None) -> dict[str, Any]:
    """The RunRequest fields the retention, endurance and trace tests' options give."""
    return {"retention_days": retention_days, "retention_c": retention_c, "endurance_volume": endurance_volume,
            "endurance_workload": endurance_workload, "endurance_probes": endurance_probes,
            "traces": tuple(trace or ()), "trace_format": trace_format, "trace_device": trace_device,
            "trace_fit": trace_fit, "trace_block": trace_block, "idle_cap_ms": idle_cap_ms,
            "trace_speed": trace_speed, "no_timing": no_timing, "trace_qd": trace_qd}


def size_option(option: str, text: str | None) -> int | None:
    """A size option's bytes (`64GiB`), refused with the option's name; None when not given."""
    if text is None:
        return None
    try:
        return parse_size(text)
    except ValueError as exc:
        raise SsdlabError(f"{option}: {exc}") from None


def parse_test_ids(text: str | None) -> tuple[str, ...] | None:
    """`--tests a, b`: the ids in order (the session refuses an empty or repeated list)."""
    if text is None:
        return None
    return tuple(t.strip() for t in text.split(",") if t.strip())


def parse_age(text: str | None) -> Age | None:
    """--age: the simulated drive's prior life; None when not given."""
    if text is None:
        return None
    try:
        return Age.parse(text)
    except ValueError as exc:
        raise SsdlabError(f"--age: {exc}") from None
