"""Which machine a benchmark ran on, and how busy it was: printed beside every figure."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name (Linux: /proc/cpuinfo), else what the platform module says."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load() -> str:
    """The load averages over 1, 5 and 15 minutes."""
    if not hasattr(os, "getloadavg"):
        return "load average unknown"
    return "load average " + " / ".join(f"{v:.2f}" for v in os.getloadavg()) + " (1 / 5 / 15 min)"


def describe() -> str:
    """One line: CPU model, cores, Python, and the load now."""
    return f"{cpu_model()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; {load()}"
