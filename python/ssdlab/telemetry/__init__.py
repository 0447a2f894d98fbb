"""Telemetry: a drive's condition (health log, temperatures, power states, power) read
from nvme-cli, smartctl, the kernel's hwmon and power meters, as validated records in
explicit units, beside every step."""
