"""Purge by NVMe sanitize, where the drive has it and it erases nothing but the target.

Sanitize acts on the controller (/dev/nvme0), not the namespace, and erases every namespace
of its NVM subsystem, of which the safety checks looked at one: it is used only when that
one is all the subsystem can hold (Identify Controller NN 1; or one namespace in sysfs, on a
drive that can hold none unseen: no namespace management, one controller). Block erase
(SANICAP bit 1) is preferred to crypto erase (bit 0); overwrite (bit 2), a pass over the
whole drive that wears it, is never used. The drive sanitizes in the background after the
command completes: the sanitize log is read every POLL_S until it says the sanitize ended,
for at most twice the drive's own estimate plus MARGIN_S, or NO_ESTIMATE_S when it gives
none; then the run stops with an error, since nothing else can reach a drive that
sanitizes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ssdlab.errors import SsdlabError
from ssdlab.external import Commands
from ssdlab.targets.consent import Cleared
from ssdlab.targets.sysfs import SYSFS
from ssdlab.telemetry.nvme import NvmeCli, controller_node, parse_sanitize_log
from ssdlab.telemetry.output import TIMEOUT_S, failure
from ssdlab.telemetry.records import Capabilities, SanitizeLog

BLOCK_ERASE, CRYPTO_ERASE = 2, 4  # the Sanitize command's SANACT
ACTIONS = {BLOCK_ERASE: "block erase", CRYPTO_ERASE: "crypto erase"}
# SSTAT bits 2:0 of the sanitize log
NEVER, COMPLETED, IN_PROGRESS, FAILED, COMPLETED_WITHOUT_DEALLOCATION = range(5)
POLL_S = 2.0
MARGIN_S = 600.0
NO_ESTIMATE_S = 3600.0
_NAMESPACE = re.compile(r"nvme\d+(?:c\d+)?n\d+")  # nvme0n1, and nvme0c0n1 under native multipath


@dataclass(frozen=True)
class Sanitized:
    """`method`: what purged the drive, None when sanitize did not; `commands`: the sanitize
    and the log read that waited on it, as they ran (none when it was not tried); `note`: how
    it went, or why it was not used or failed."""

    method: str | None
    commands: tuple[str, ...]
    note: str


def sanitize(cleared: Cleared, commands: Commands, sleep: Callable[[float], None],
             sys_root: Path = SYSFS) -> Sanitized:
    """Sanitize the controller of the NVMe namespace `cleared` when that erases nothing
    else; like any purge, only with the token of the safety checks and the user's consent."""
    controller = controller_node(cleared.path)
    try:
        caps = NvmeCli(controller, commands).capabilities()
    except SsdlabError as exc:
        return _not_used(f"Identify Controller could not be read: {exc}")
    action = BLOCK_ERASE if caps.sanitize_block_erase else CRYPTO_ERASE if caps.sanitize_crypto_erase else None
    if action is None:
        return _not_used(f"{controller} has neither sanitize block erase nor crypto erase (Identify SANICAP)")
    if reason := _others_erased(caps, controller, sys_root):
        return _not_used(reason)
    log_argv = ["nvme", "sanitize-log", controller, "-o", "json"]
    try:
        before = _read_log(log_argv, commands)
    except SsdlabError as exc:
        return _not_used(f"the sanitize log could not be read: {exc}")
    if before.status == IN_PROGRESS:
        return _not_used(f"a sanitize is already in progress on {controller}")
    argv = ["nvme", "sanitize", controller, f"--sanact={action}"]
    done = commands.run(argv, timeout=TIMEOUT_S)
    if done.returncode != 0:
        return Sanitized(None, (" ".join(argv),), f"sanitize failed: {failure(argv, done)}")
    estimate_s = before.block_erase_s if action == BLOCK_ERASE else before.crypto_erase_s
    return _waited(controller, ACTIONS[action], estimate_s, argv, log_argv, commands, sleep)


def _waited(controller: str, action: str, estimate_s: int | None, argv: list[str], log_argv: list[str],
            commands: Commands, sleep: Callable[[float], None]) -> Sanitized:
    """The sanitize `argv` started: its log read until it says the sanitize ended, or the
    bounded wait is over."""
    ran = (" ".join(argv), " ".join(log_argv))
    limit_s = NO_ESTIMATE_S if estimate_s is None else 2 * estimate_s + MARGIN_S
    waited_s = 0.0
    while True:
        try:
            log = _read_log(log_argv, commands)
        except SsdlabError as exc:
            return Sanitized(None, ran, f"sanitize failed: its log could not be read while it ran: {exc}")
        if log.status in (COMPLETED, COMPLETED_WITHOUT_DEALLOCATION):
            return Sanitized(f"NVMe sanitize, {action}", ran,
                             f"the sanitize log said the sanitize completed after {waited_s:g} s")
        if log.status not in (NEVER, IN_PROGRESS):  # NEVER: the drive has not logged it yet
            return Sanitized(None, ran, f"sanitize failed: the sanitize log's status is {log.status}"
                             + (" (failed)" if log.status == FAILED else ""))
        if waited_s >= limit_s:
            estimated = "no estimate" if estimate_s is None else f"an estimate of {estimate_s} s"
            raise SsdlabError(f"the sanitize of {controller} has not ended after {waited_s:g} s (the drive gave "
                              f"{estimated}); the drive goes on with it: once `nvme sanitize-log {controller}` "
                              "says it completed, `ssdlab resume` the run")
        sleep(POLL_S)
        waited_s += POLL_S


def _not_used(reason: str) -> Sanitized:
    return Sanitized(None, (), f"sanitize not used: {reason}")


def _read_log(argv: list[str], commands: Commands) -> SanitizeLog:
    done = commands.run(argv, timeout=TIMEOUT_S)
    if done.returncode != 0:
        raise failure(argv, done)
    return parse_sanitize_log(done.stdout, " ".join(argv))


def _others_erased(caps: Capabilities, controller: str, sys_root: Path) -> str | None:
    """Why a sanitize of `controller` may erase a namespace besides the target; None when
    the target is all the NVM subsystem can hold."""
    if caps.max_namespaces == 1:
        return None
    seen = namespaces(controller, sys_root)
    whole = "it erases every namespace of the NVM subsystem"
    if len(seen) != 1:
        return f"{whole}, and {controller} has {len(seen)}" + (f" ({', '.join(seen)})" if seen else "")
    if caps.namespace_management or caps.multi_controller:
        return (f"{whole}, which may hold up to {caps.max_namespaces} (Identify NN), some maybe unseen here "
                "(the drive manages namespaces, or has another controller)")
    return None


def namespaces(controller: str, sys_root: Path = SYSFS) -> list[str]:
    """The namespaces the kernel shows under a controller (/dev/nvme0 or nvme0)."""
    directory = sys_root / "class" / "nvme" / Path(controller).name
    try:
        return sorted(entry.name for entry in directory.iterdir() if _NAMESPACE.fullmatch(entry.name))
    except OSError:
        return []
