"""Telemetry: the drive's condition (health, temperature, power) read beside every step."""
