"""Presets: the built-in ones are package data (found the same in a checkout and in a
wheel), and a user's preset file that is not one is refused with a clear message."""

import os
from pathlib import Path

import pytest

from ssdlab import presets
from ssdlab.errors import SsdlabError
from ssdlab.presets import builtin_names, load_preset
from tests.conftest import run_cli
from tests.paths import REPOSITORY

PACKAGE_DRIVES = REPOSITORY / "python" / "ssdlab" / "drives"


def test_builtin_presets_are_package_data():
    assert {"wd-sn850-1tb", "wd-black-2018-1tb", "samsung-980pro-1tb"} <= set(builtin_names())
    preset = load_preset("wd-sn850-1tb")
    assert Path(str(preset.path)) == PACKAGE_DRIVES / "wd-sn850-1tb.toml"
    assert preset.title == "WD Black SN850 1 TB"


def test_top_level_drives_is_the_package_directory():
    # The Rust tests, examples and README use drives/ from the repository root.
    assert (REPOSITORY / "drives").resolve() == PACKAGE_DRIVES.resolve()
    assert sorted(p.stem for p in (REPOSITORY / "drives").glob("*.toml")) == builtin_names()


def test_presets_cite_the_docs_not_a_private_file():
    for name in builtin_names():
        header = load_preset(name).text.split("\n\n")[0]
        assert "docs/simulator.md" in header, name
        assert "/work/shared" not in load_preset(name).text, name


def test_unknown_name_lists_the_presets():
    with pytest.raises(SsdlabError, match="unknown simulated drive 'nope'.*wd-sn850-1tb"):
        load_preset("nope")


def test_user_file_is_read(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(load_preset("wd-sn850-1tb").text)
    preset = load_preset(str(path))
    assert preset.name == str(path) and preset.text == path.read_text()


def test_byte_order_mark_is_dropped(tmp_path):
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + b"[drive]\n")
    assert load_preset(str(path)).text == "[drive]\n"


def test_missing_file(tmp_path):
    with pytest.raises(SsdlabError, match="cannot read the preset .*: No such file or directory"):
        load_preset(str(tmp_path / "absent.toml"))


def test_not_utf8(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'[drive]\nname = "caf\xe9"\n')
    with pytest.raises(SsdlabError, match=r"is not UTF-8 text \(byte 0xe9 on line 2\): save it as UTF-8"):
        load_preset(str(path))


def test_directory(tmp_path):
    with pytest.raises(SsdlabError, match="is a directory: give a preset file"):
        load_preset(f"{tmp_path}/")


def test_device_or_fifo_is_not_read(tmp_path):
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)  # reading it would block forever
    for spec in ("/dev/zero", str(fifo)):
        with pytest.raises(SsdlabError, match="is not a regular file"):
            load_preset(spec)


def test_nul_in_path():
    with pytest.raises(SsdlabError, match="cannot read the preset"):
        load_preset("bad\0name.toml")


def test_unreadable(tmp_path, monkeypatch):
    # Root reads any file, so the refusal of the kernel is simulated.
    path = tmp_path / "secret.toml"
    path.write_text("[drive]\n")

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(presets.Path, "open", refuse)
    with pytest.raises(SsdlabError, match="cannot read the preset .*secret.toml: Permission denied"):
        load_preset(str(path))


def test_cli_reports_a_bad_preset_without_a_traceback(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(b"\xff\xfe")
    proc = run_cli("drives", "show", str(path), check=False)
    message = " ".join(proc.stderr.split())  # the terminal wraps long lines
    assert proc.returncode == 2
    assert "is not UTF-8 text (byte 0xff on line 1)" in message and "Traceback" not in message
