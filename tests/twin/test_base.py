"""The twin's base: a real drive's PCIe link, as its kernel reports it, in the simulator's terms."""

from __future__ import annotations

import pytest

from ssdlab.twin.base import _pcie_fields


@pytest.mark.parametrize("gts, width, fields", [
    (16.0, 4, {"link": "pcie4x4"}),  # the simulator's own PCIe 4.0 x4: 7000 MB/s
    (8.0, 4, {"link": "pcie3x4"}),
    (32.0, 4, {"link": "pcie4x4", "payload_mbps": 14000.0}),  # PCIe 5.0 x4: twice 4.0's ceiling
    (8.0, 2, {"link": "pcie3x4", "payload_mbps": 1750.0}),  # a drive in an x2 slot
    (5.0, 4, {"link": "pcie3x4", "payload_mbps": 1777.0}),  # PCIe 2.0: 8b/10b
])
def test_a_pcie_link_is_the_simulators_nearest_with_its_own_ceiling(gts, width, fields):
    assert _pcie_fields(gts, width) == fields
