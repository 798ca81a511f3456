"""Run a command (make test's notebook passes) again on narrower SIMD kernels than this CPU's widest.

NumPy picks its kernels for exp, sums and the like at run time by CPU, and OpenBLAS picks its matrix
product kernels the same way, so a notebook executed on a CPU with AVX-512 can print other last digits
on one with only AVX2 or older (and strict nbval then fails there). This script runs the command once per
narrower tier of kernels than this CPU's widest, checks in a child Python that NumPy took it, and prints
what it disabled:

- on a CPU with AVX-512: first without NumPy's AVX-512 targets and with OpenBLAS's AVX2 kernels
  (``OPENBLAS_CORETYPE=Haswell``), as on an AVX2-only CPU such as many AMD EPYCs; then without AVX2 too
  (NumPy's SSE baseline, OpenBLAS ``Sandybridge``), as on an older CPU;
- on a CPU with AVX2 and no AVX-512: the second of those;
- on another processor (Arm, POWER, ...): without NumPy's widest dispatch target.

NumPy's switch is ``NPY_DISABLE_CPU_FEATURES`` (the names of its dispatch targets). If
``OPENBLAS_CORETYPE`` is already set in the environment (some machines set it because older OpenBLAS
builds misbehave on their processor), it is left alone.

Usage: ``python tests/tools/simd.py [--pass first|last] -- pytest --nbval ... notebooks``; it stops at the first
failing pass. ``--pass first`` runs only the first of those passes (``make test-simd``: on an AVX-512 CPU the
AVX2 tier), ``--pass last`` only the narrowest (``make test-lowest`` runs its tests there, so CI covers every
tier with one pass fewer). With nothing narrower to try, it says so and exits 0 without running the command
(the first pass ran it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

AVX512 = ("AVX512", "X86_V4")  # name prefixes of NumPy's AVX-512 dispatch targets (2.0: AVX512F, AVX512_SKX...)
AVX2 = ("X86_V3", "AVX2", "FMA3", "AVX", "F16C", "FMA4", "XOP")  # NumPy >= 2.4 groups these as X86_V3


def narrower() -> list[tuple[list[str], str | None]]:
    """Per pass: the NumPy dispatch targets to disable and an OpenBLAS core type (None: leave it)."""
    on = [name for name in __cpu_dispatch__ if __cpu_features__.get(name)]  # in NumPy's order, widest last
    avx512 = [name for name in on if name.startswith(AVX512)]
    avx2 = [name for name in on if name.startswith(AVX2) and name not in avx512]
    passes = [(avx512, "Haswell")] if avx512 else []
    if avx2:
        passes.append((avx512 + avx2, "Sandybridge"))
    if not passes and on:
        passes.append((on[-1:], None))  # another processor (Arm, POWER, ...): its widest dispatch target
    return passes


def features_in_child(env: dict[str, str], names: list[str]) -> dict[str, bool]:
    """Which of `names` a fresh Python started with `env` reports as on."""
    code = ("import json; from numpy._core._multiarray_umath import __cpu_features__ as f; "
            f"print(json.dumps({{n: bool(f.get(n)) for n in {names!r}}}))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    usage = "usage: python tests/tools/simd.py [--pass first|last] -- COMMAND [ARGS...]"
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        print(usage, file=sys.stderr)
        return 2
    command, options = argv[argv.index("--") + 1:], argv[:argv.index("--")]
    if options not in ([], ["--pass", "first"], ["--pass", "last"]):
        print(f"{usage}\ngot options {options}", file=sys.stderr)
        return 2
    passes = narrower()
    if options:
        passes = passes[:1] if options[1] == "first" else passes[-1:]
    if not passes:
        print(f"== SIMD pass: NumPy {np.__version__} dispatches nothing wider than its baseline on this CPU; "
              "nothing narrower to try, skipped")
    for disable, coretype in passes:
        code = run_pass(command, disable, coretype)
        if code:
            return code
    return 0


def run_pass(command: list[str], disable: list[str], coretype: str | None) -> int:
    """Run `command` once with `disable` switched off in NumPy and OpenBLAS set to `coretype`."""
    env = dict(os.environ, NPY_DISABLE_CPU_FEATURES=" ".join(disable))
    still_on = [name for name, on in features_in_child(env, disable).items() if on]
    if still_on:
        print(f"== SIMD pass: NumPy {np.__version__} did not disable {still_on} "
              f"(NPY_DISABLE_CPU_FEATURES={env['NPY_DISABLE_CPU_FEATURES']!r})", file=sys.stderr)
        return 1
    kept = [name for name in __cpu_dispatch__ if __cpu_features__.get(name) and name not in disable]
    if "OPENBLAS_CORETYPE" in os.environ:
        blas = f"OpenBLAS core type left as this machine sets it ({os.environ['OPENBLAS_CORETYPE']})"
    elif coretype:
        env["OPENBLAS_CORETYPE"] = coretype
        blas = f"OpenBLAS core type {coretype}"
    else:
        blas = "OpenBLAS core type unchanged"
    print(f"== SIMD pass: NumPy {np.__version__} with {' '.join(disable)} disabled "
          f"(widest left: {kept[-1] if kept else 'the baseline'}); {blas}", flush=True)
    return subprocess.run(command, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
