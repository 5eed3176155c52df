"""CPU seconds of processes on this machine, read from /proc: figures that time lost to other
work does not inflate (clock ticks, so only sums over many requests say much)."""

import os
from pathlib import Path

TICK = 1 / os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of a process so far (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) * TICK


def backend_seconds() -> float:
    """CPU seconds so far of the PostgreSQL backend of Django's connection (on this machine)."""
    from django.db import connection

    if getattr(connection, "_bench_pid", None) is None or connection.connection is None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            connection._bench_pid = cursor.fetchone()[0]
    if not Path(f"/proc/{connection._bench_pid}").exists():  # a new connection: read its backend next time
        connection._bench_pid = None
        return 0.0
    return cpu_seconds(connection._bench_pid)


def machine_seconds() -> tuple[float, float]:
    """(busy, all) CPU seconds of the whole machine so far, summed over its cores (/proc/stat):
    the share busy between two readings says whether the machine was the bottleneck."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    return (sum(fields[:8]) - idle) * TICK, sum(fields[:8]) * TICK
