"""Run as a student (runuser): where, among the programs of this machine, can this account see a secret?

Reads the secrets from standard input, one a line, ended by an empty line (never from its arguments, where
every account would see them), then looks at every process's command line and environment that this account
may read, and prints JSON: {"found": [[secret's index, "cmdline" or "environ", pid, program], ...],
"cmdlines": [the programs whose command line it read], "environs": number read}.

With --watch it looks again every 50 ms until its standard input closes (a hub starting meanwhile).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path


def look(secrets: list[bytes], found: set, cmdlines: set, environs: set) -> None:
    for proc in Path("/proc").glob("[0-9]*"):
        for part in ("cmdline", "environ"):
            try:
                data = (proc / part).read_bytes()
            except OSError:  # another account's environment, or a process gone meanwhile
                continue
            try:
                program = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200]
            except OSError:
                program = "?"
            (cmdlines if part == "cmdline" else environs).add((proc.name, program))
            for i, secret in enumerate(secrets):
                if secret in data:
                    found.add((i, part, int(proc.name), program))


def main() -> int:
    secrets = []
    for line in sys.stdin:
        if not line.strip():
            break
        secrets.append(line.rstrip("\n").encode())
    found: set = set()
    cmdlines: set = set()
    environs: set = set()
    if "--watch" in sys.argv[1:]:
        closed = threading.Event()
        threading.Thread(target=lambda: (sys.stdin.read(), closed.set()), daemon=True).start()
        while not closed.is_set():
            look(secrets, found, cmdlines, environs)
            time.sleep(0.05)  # looking again while a hub starts, not a timed assertion
    look(secrets, found, cmdlines, environs)
    print(json.dumps({"found": sorted(found), "cmdlines": sorted({p for _, p in cmdlines}),
                      "environs": len(environs)}))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
