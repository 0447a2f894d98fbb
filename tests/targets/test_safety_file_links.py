"""Hole 3 of issue 9: links planted around a file target.

The marker `X.img.ssdlab` is read and written without following links (a temporary file
renamed over it), and one that is a link or not a regular file is refused; a target path
that is a link is followed only to an existing file, never to create one; purge keeps the
file's inode, so the lock a run holds on it stays valid.
"""

import fcntl
import json
import os
import signal
from pathlib import Path

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.external import Commands
from ssdlab.targets import resolve as resolving
from ssdlab.targets.files import created_by_ssdlab, sidecar
from ssdlab.targets.purge import purge_file
from ssdlab.units import MiB

PRECIOUS = b"precious data that is not ssdlab's\n"


def target(path: Path, size: int | None = MiB, force: bool = False):
    return resolving.resolve(str(path), size=size, force=force, commands=Commands())


@pytest.fixture
def victim(tmp_path) -> Path:
    path = tmp_path / "elsewhere" / "victim.txt"
    path.parent.mkdir()
    path.write_bytes(PRECIOUS)
    return path


@pytest.fixture
def no_hang():
    """A marker read that blocks (a FIFO opened without O_NONBLOCK) fails instead of hanging."""
    class Blocked(Exception):  # not an OSError, which the code under test may catch
        pass

    def timed_out(*_):
        raise Blocked("blocked opening the marker")
    previous = signal.signal(signal.SIGALRM, timed_out)
    signal.alarm(5)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def test_a_marker_link_planted_before_creation_is_refused_and_nothing_is_written(tmp_path,
                                                                                   victim):
    path = tmp_path / "drive.img"
    sidecar(path).symlink_to(victim)
    with pytest.raises(SsdlabError) as excinfo:
        target(path)
    message = str(excinfo.value)
    assert f"{sidecar(path)} is a symbolic link (to {victim})" in message
    assert f"`rm {sidecar(path)}`" in message
    assert victim.read_bytes() == PRECIOUS
    assert not path.exists()


def test_a_marker_link_planted_on_our_file_is_refused_even_with_force(tmp_path, victim):
    path = tmp_path / "drive.img"
    target(path)
    sidecar(path).unlink()
    sidecar(path).symlink_to(victim)
    for force in (False, True):
        with pytest.raises(SsdlabError, match="is a symbolic link"):
            target(path, force=force)
    assert victim.read_bytes() == PRECIOUS


def test_a_marker_link_to_a_valid_marker_is_not_read_through(tmp_path):
    """Even a link to good marker content is refused: reading through it is what let a
    link decide which file ssdlab writes."""
    path = tmp_path / "drive.img"
    target(path)
    moved = tmp_path / "elsewhere.json"
    sidecar(path).rename(moved)
    sidecar(path).symlink_to(moved)
    before = moved.read_bytes()
    with pytest.raises(SsdlabError, match="is a symbolic link"):
        created_by_ssdlab(path)
    with pytest.raises(SsdlabError, match="is a symbolic link"):
        target(path)
    assert moved.read_bytes() == before


@pytest.mark.parametrize("make, kind", [(os.mkdir, "a directory"), (os.mkfifo, "a FIFO")])
def test_a_marker_that_is_not_a_regular_file_is_refused(tmp_path, make, kind, no_hang):
    path = tmp_path / "drive.img"
    target(path)
    sidecar(path).unlink()
    make(sidecar(path))
    with pytest.raises(SsdlabError, match=f"{sidecar(path)} is {kind}, not ssdlab's marker"):
        target(path, force=True)


def test_a_marker_hard_linked_to_another_file_is_replaced_not_written_through(tmp_path, victim):
    path = tmp_path / "drive.img"
    target(path)
    sidecar(path).unlink()
    os.link(victim, sidecar(path))  # same inode as the victim: writing in place would change it
    target(path, force=True)  # its content is not a marker, so the file is foreign: --force
    assert victim.read_bytes() == PRECIOUS
    assert sidecar(path).stat().st_ino != victim.stat().st_ino
    assert created_by_ssdlab(path)


def test_the_marker_is_written_by_rename_leaving_no_temporary_file(tmp_path):
    path = tmp_path / "drive.img"
    target(path)
    first = sidecar(path).stat().st_ino
    target(path, 2 * MiB)
    assert sidecar(path).stat().st_ino != first  # a new file renamed into place
    assert json.loads(sidecar(path).read_text()) == {"inode": path.stat().st_ino,
                                                     "size": 2 * MiB}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["drive.img", "drive.img.ssdlab"]


def test_a_dangling_link_as_target_is_refused_and_nothing_is_created(tmp_path):
    link = tmp_path / "drive.img"
    pointed = tmp_path / "elsewhere" / "new.img"
    pointed.parent.mkdir()
    link.symlink_to(pointed)
    for refuse in (lambda: target(link), lambda: resolving.refuse_file_path(link, force=True)):
        with pytest.raises(SsdlabError) as excinfo:
            refuse()
        message = str(excinfo.value)
        assert f"{link} is a symbolic link to {pointed}, which does not exist" in message
        assert f"`rm {link}`" in message
    assert not pointed.exists() and not sidecar(pointed).exists() and not sidecar(link).exists()


def test_a_link_to_a_file_ssdlab_created_is_followed_to_that_file(tmp_path):
    real = tmp_path / "drive.img"
    target(real, 2 * MiB)
    link = tmp_path / "link.img"
    link.symlink_to(real)
    resolving.refuse_file_path(link, force=False)  # planning agrees
    made = target(link, size=None)
    assert (made.path, made.capacity) == (real, 2 * MiB)
    assert not sidecar(link).exists()
    assert created_by_ssdlab(real) and created_by_ssdlab(link)


def test_a_link_to_a_foreign_file_is_refused(tmp_path, victim):
    link = tmp_path / "link.img"
    link.symlink_to(victim)
    with pytest.raises(SsdlabError, match="ssdlab did not create it"):
        target(link)
    assert victim.read_bytes() == PRECIOUS


def test_purge_keeps_the_inode_so_a_lock_held_on_the_file_stays_valid(tmp_path):
    path = tmp_path / "drive.img"
    made = target(path, 8 * MiB)
    with open(path, "r+b") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.write(b"data" * 1024)
        held.flush()
        ran = purge_file(made)
        assert os.fstat(held.fileno()).st_ino == path.stat().st_ino
        assert os.fstat(held.fileno()).st_nlink == 1  # still the file at `path`, not an orphan
    assert ran.commands == (f"truncate -s 0 {path}", f"posix_fallocate {path} 0 {8 * MiB}")
    assert path.stat().st_size == 8 * MiB and path.stat().st_blocks * 512 >= 8 * MiB
    assert path.read_bytes()[:4096] == bytes(4096)
    assert created_by_ssdlab(path)
