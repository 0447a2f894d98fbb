"""The fio backend: real devices and files, wall time."""

from ssdlab.backends.fio.backend import FioBackend

__all__ = ["FioBackend"]
