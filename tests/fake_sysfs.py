"""A fake /sys under tmp_path, laid out as the kernel does it: class/block/NAME and
dev/block/MAJ:MIN are symlinks into devices/, partitions nest in their disk's
directory, `device` links to the controller."""

from __future__ import annotations

from pathlib import Path


class FakeSysfs:
    def __init__(self, root: Path) -> None:
        self.root = root
        for d in ("class/block", "dev/block", "devices/virtual/block", "bus"):
            (root / d).mkdir(parents=True, exist_ok=True)

    def disk(self, name: str, dev: str, sectors: int, *, logical: int = 512,
             physical: int = 512, rotational: int = 0, attrs: dict[str, str] | None = None,
             controller: str | None = None, bus: str | None = None,
             controller_attrs: dict[str, str] | None = None) -> Path:
        directory = self.root / "devices/virtual/block" / name
        self._node(directory, name, dev, sectors, attrs)
        queue = directory / "queue"
        queue.mkdir()
        (queue / "logical_block_size").write_text(f"{logical}\n")
        (queue / "physical_block_size").write_text(f"{physical}\n")
        (queue / "rotational").write_text(f"{rotational}\n")
        if controller:
            ctrl = self.root / "devices/ctrl" / controller
            ctrl.mkdir(parents=True)
            for key, value in (controller_attrs or {}).items():
                (ctrl / key).write_text(value + "\n")
            if bus:
                (self.root / "bus" / bus).mkdir(exist_ok=True)
                (ctrl / "subsystem").symlink_to(self.root / "bus" / bus)
            (directory / "device").symlink_to(ctrl)
        return directory

    def partition(self, disk: str, name: str, dev: str, sectors: int,
                  attrs: dict[str, str] | None = None) -> Path:
        directory = self.root / "devices/virtual/block" / disk / name
        self._node(directory, name, dev, sectors, attrs)
        (directory / "partition").write_text("1\n")
        return directory

    def loop(self, name: str, dev: str, backing: Path | str, sectors: int, *, offset: int = 0,
             sizelimit: int = 0) -> Path:
        """An attached loop device over `backing`, as the kernel shows it in loop/
        (a path, with " (deleted)" after it once the file is unlinked)."""
        return self.disk(name, dev, sectors, attrs={"loop/backing_file": str(backing),
                                                    "loop/offset": str(offset),
                                                    "loop/sizelimit": str(sizelimit)})

    def hold(self, lower: str, upper: str) -> None:
        """`upper` (dm-0, md0) is built on `lower`: holders/ and slaves/ point at each other."""
        for name, sub, other in ((lower, "holders", upper), (upper, "slaves", lower)):
            link = self.root / "class/block" / name / sub / other
            link.symlink_to(self.root / "class/block" / other)

    def hwmon(self, name: str, attrs: dict[str, str]) -> Path:
        """An hwmon chip: devices/.../hwmon/hwmonN, linked from class/hwmon/hwmonN."""
        links = self.root / "class/hwmon"
        links.mkdir(parents=True, exist_ok=True)
        index = len(list(links.iterdir()))
        directory = self.root / f"devices/platform/{name}.{index}/hwmon/hwmon{index}"
        directory.mkdir(parents=True)
        for key, value in {"name": name, **attrs}.items():
            (directory / key).write_text(value + "\n")
        (links / f"hwmon{index}").symlink_to(directory)
        return links / f"hwmon{index}"

    def nvme_controller(self, name: str, *, hwmon: dict[str, str] | None = None, legacy_hwmon: bool = False,
                        chip_name: str = "nvme", attrs: dict[str, str] | None = None) -> Path:
        """class/nvme/NAME, linked to the controller directory a namespace's `device` points at, whose
        `device` links to its PCI function; with an hwmon chip holding `hwmon` files under the
        controller (current kernels) or under the PCI function (`legacy_hwmon`, the first kernels)."""
        ctrl = self.root / "devices/ctrl" / name
        pci = self.root / "devices/pci" / f"{name}-function"
        for directory in (ctrl, pci):
            directory.mkdir(parents=True, exist_ok=True)
        (ctrl / "device").symlink_to(pci)
        (self.root / "class/nvme").mkdir(parents=True, exist_ok=True)
        (self.root / "class/nvme" / name).symlink_to(ctrl)
        for key, value in (attrs or {}).items():
            (ctrl / key).parent.mkdir(parents=True, exist_ok=True)
            (ctrl / key).write_text(value + "\n")
        if hwmon is not None:
            chip = pci / "hwmon/hwmon1" if legacy_hwmon else ctrl / "hwmon1"
            chip.mkdir(parents=True)
            for key, value in {"name": chip_name, **hwmon}.items():
                (chip / key).write_text(value + "\n")
        return ctrl

    def _node(self, directory: Path, name: str, dev: str, sectors: int,
              attrs: dict[str, str] | None) -> None:
        directory.mkdir(parents=True)
        (directory / "dev").write_text(dev + "\n")
        (directory / "size").write_text(f"{sectors}\n")
        for sub in ("holders", "slaves"):
            (directory / sub).mkdir()
        for key, value in (attrs or {}).items():
            (directory / key).parent.mkdir(parents=True, exist_ok=True)
            (directory / key).write_text(value + "\n")
        (self.root / "class/block" / name).symlink_to(directory)
        (self.root / "dev/block" / dev).symlink_to(directory)


def mountinfo(path: Path, *lines: tuple[str, str, str, str]) -> Path:
    """A mountinfo file from (major:minor, mount point, fstype, source) rows."""
    text = "".join(f"{20 + i} 1 {dev} / {point} rw,relatime - {fstype} {source} rw\n"
                   for i, (dev, point, fstype, source) in enumerate(lines))
    path.write_text(text)
    return path
