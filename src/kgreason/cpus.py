"""How many CPUs this process may run on: what its thread pools size themselves by (MiniLM's
batch threads, the graph kernels' parts). The affinity mask, not the machine's count, so a
process pinned by taskset or a container's cpuset does not oversubscribe its cores."""

from __future__ import annotations

import os


def usable_cpus() -> int:
    """The CPUs in this process's affinity mask (os.cpu_count() where there is none), >= 1."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
