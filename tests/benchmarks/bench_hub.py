"""A class on one machine: N students on a real class hub (`make hub`'s), their servers, kernels and sliders.

Run: ``python tests/benchmarks/bench_hub.py --students 10`` as root, after ``make test-hub``'s installs
(`make bench-hub STUDENTS_N=60`). A script, not collected by pytest; it prints figures and asserts nothing
about time. Loopback only; the students are system users of a group of its own, removed at the end;
every wait is bounded, ``--deadline`` bounds the whole run, and a student starts a server or a kernel only
while the machine's available memory, less what the students starting at that moment will take, stays above
``--memory-floor`` GiB: a machine shared with other work must not run out. The students turned away are
counted and said: where memory limits first.

1. One student alone: logs in, starts a server (time to ready), opens 02 in headless Chromium, runs it and
   moves the first explorer's slider ``--moves`` times (``tests/benchmarks/bench_browser.py``'s
   measure: key press to the frame that paints the changed heatmap).
2. N - 1 more students log in at once and start their servers (time to ready, each); each runs 02's code
   cells in a kernel of its own through the server's kernel WebSocket, as a browser would, but without a
   browser: in a class the browsers are on the students' laptops, not on the server.
3. While those N - 1 move a slider every ``--pace`` seconds each (setting a slider's value in their
   kernel, as a browser's event does), the first student moves theirs again: the latency at N. With
   ``--steps 20,40,60`` the others start moving in groups, and the latency is measured with 20, 40, then 60
   students moving: how many one machine holds, from one run.
4. Memory per student: the proportional set size (PSS: shared pages split among their users) of every
   process of the student's account, their server and their kernel, with 02 run.
"""

from __future__ import annotations

import argparse
import json
import pwd
import statistics
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "hub"))

import bench_browser  # noqa: E402 - the in-page latency measure
import hubctl  # noqa: E402
import lab  # noqa: E402
from machine import describe  # noqa: E402

LESSON = "notebooks/02-query-key-value.ipynb"

# Run in a simulated student's kernel after 02: move one of the lesson's sliders one step, as an event does.
MOVE = """
from ipywidgets.widgets.widget import _instances as _w
_s = [w for w in list(_w.values()) if 'attn-slider' in getattr(w, '_dom_classes', ()) and hasattr(w, 'max')
      and not w.disabled]
_k = globals().get('_bench_k', 0); _bench_k = _k + 1
_x = _s[_k % len(_s)]
_x.value = type(_x.value)(_x.min + (_x.max - _x.min) * ((_k * 7) % 11) / 10)
"""


def _pct(values: list[float], q: float) -> float:
    return bench_browser._percentile(values, q)


def pss_kb(pid: int) -> int:
    """Proportional set size of a process, in kB (0 if it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def memory_of_uid(uid: int) -> tuple[int, int]:
    """(processes, PSS in kB) of every process of account ``uid``."""
    n, total = 0, 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            if status.stat().st_uid != uid:
                continue
        except OSError:
            continue
        n += 1
        total += pss_kb(int(status.parent.name))
    return n, total


class Kernel:
    """A kernel of a student's server, driven over its WebSocket as JupyterLab does (execute requests)."""

    def __init__(self, student: hubctl.Student, path: str):
        import websocket

        r = student.server_api("POST", "sessions", json={
            "path": f"{hubctl.FOLDER}/{path}", "type": "notebook", "name": Path(path).name,
            "kernel": {"name": "python3"}})  # fmt: skip
        r.raise_for_status()
        self.kernel_id = r.json()["kernel"]["id"]
        ws_url = student.hub.url.replace("http://",
                                         "ws://") + f"/user/{student.name}/api/kernels/{self.kernel_id}/channels"
        self.ws = websocket.create_connection(ws_url, header=[f"Authorization: token {student.token}"], timeout=120)
        self.session = uuid.uuid4().hex

    def execute(self, code: str, timeout: float = 180) -> None:
        msg_id = uuid.uuid4().hex
        self.ws.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": "bench", "session": self.session,
                       "date": "", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "buffers": [], "channel": "shell",
            "content": {"code": code, "silent": False, "store_history": False, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True},
        }))  # fmt: skip
        deadline = time.monotonic() + timeout
        reply = idle = False
        while not (reply and idle):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no reply to an execute request in {timeout:.0f} s")
            raw = self.ws.recv()
            if not isinstance(raw, str):
                continue  # a binary frame (buffers): none of ours
            msg = json.loads(raw)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "execute_reply":
                if msg["content"]["status"] != "ok":
                    raise RuntimeError(f"{msg['content'].get('ename')}: {msg['content'].get('evalue')}")
                reply = True
            elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                idle = True

    def close(self) -> None:
        self.ws.close()


def run_lesson(student: hubctl.Student) -> Kernel:
    """A kernel of 02 in the student's copy, every code cell of it run in order."""
    nb = student.read(LESSON)["content"]
    kernel = Kernel(student, LESSON)
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            kernel.execute(cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"]))
    return kernel


def available_gib() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 2**20
    return float("nan")


class MemoryBudget:
    """Admits a student's next step (a server, a kernel running 02) only if the memory available now, less what
    the steps admitted and not finished will take, leaves ``floor`` GiB; notes the lowest available memory."""

    SERVER, KERNEL = 0.15, 0.30  # GiB each takes (make bench-hub: 115 MB and 240 MB PSS), with a margin

    def __init__(self, floor: float):
        self.floor, self.pending, self.refused, self.lowest = floor, 0.0, 0, float("inf")
        self.lock = threading.Lock()

    def admit(self, gib: float) -> bool:
        with self.lock:
            free = available_gib()
            self.lowest = min(self.lowest, free)
            if free - self.pending - gib < self.floor:
                self.refused += 1
                return False
            self.pending += gib
            return True

    def done(self, gib: float) -> None:
        with self.lock:
            self.pending -= gib
            self.lowest = min(self.lowest, available_gib())

    def watch(self, stop: threading.Event) -> None:
        while not stop.is_set():
            self.lowest = min(self.lowest, available_gib())
            stop.wait(0.5)


def browser_latency(page, moves: int, gap_ms: int) -> list[float]:
    explorer = lab.explorers(page).first
    return bench_browser.bench_explorer(page, explorer, moves, gap_ms)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, default=10, help="N, students in all (1 to 80; default 10)")
    ap.add_argument("--steps", default="", help="measure the slider with this many students moving, e.g. 20,40,60 "
                    "(default: N alone, or every 20 up to N for N > 30)")
    ap.add_argument("--memory-floor", type=float, default=2.5, help="admit no student whose server or kernel "
                    "would leave less available memory than this (GiB)")
    ap.add_argument("--moves", type=int, default=20, help="the browser student's slider moves per phase")
    ap.add_argument("--gap-ms", type=int, default=300, help="pause between the browser student's moves")
    ap.add_argument("--pace", type=float, default=1.0, help="seconds between each other student's moves")
    ap.add_argument("--deadline", type=float, default=3600, help="give up after this many seconds")
    args = ap.parse_args(argv)
    if not 1 <= args.students <= 80:
        ap.error("--students must be 1 to 80")
    n = args.students
    steps = sorted({int(x) for x in args.steps.split(",") if x.strip()} | {n}) if args.steps else (
        [*range(20, n, 20), n] if n > 30 else [n])
    if not all(1 <= k <= n for k in steps):
        ap.error(f"--steps must lie between 1 and --students ({n})")
    why = hubctl.missing()
    if why or lab.find_chromium() is None:
        print(f"# bench_hub: skipped: {why or lab.INSTALL_HINT}", file=sys.stderr)
        return 2
    t_start = time.monotonic()
    deadline = t_start + args.deadline
    print(f"# bench_hub: {args.students} students on one class hub; {describe()}", flush=True)
    from playwright.sync_api import sync_playwright

    hub = hubctl.Hub()
    kernels: list[Kernel] = []
    stop = threading.Event()
    budget = MemoryBudget(args.memory_floor)
    threading.Thread(target=budget.watch, args=(stop,), daemon=True).start()
    try:
        hub.start()
        # 1. one student alone
        first = hubctl.Student(hub, "s01")
        assert first.log_in() == 302
        ready_alone = first.start_server()
        with sync_playwright() as p:
            browser = lab.launch_browser(p)
            page = lab.new_page(browser)
            page.goto(f"{hub.url}/hub/login", wait_until="domcontentloaded")
            page.fill("#username_input", "s01")
            page.fill("#password_input", hubctl.CLASS_PASSWORD)
            page.click("#login_submit")
            page.wait_for_url("**/user/s01/lab/**", timeout=180_000)

            class Server:
                def notebook_url(self, notebook):
                    return f"{hub.url}/user/s01/lab/tree/{hubctl.FOLDER}/notebooks/{Path(notebook).name}?reset"

            lab.run_notebook(page, Server(), Path(LESSON))
            lat1 = browser_latency(page, args.moves, args.gap_ms)
            print(f"# 1 student: server ready in {ready_alone:.1f} s; slider median {statistics.median(lat1):.1f} ms",
                  flush=True)

            # 2. the others, at once
            others = [hubctl.Student(hub, f"s{i:02d}") for i in range(2, args.students + 1)]
            ready: list[float] = []
            lesson_s: list[float] = []
            server_only = []
            with_kernel = ["s01"]
            if others:
                def arrive(s: hubctl.Student) -> float | None:
                    if not budget.admit(budget.SERVER):
                        return None  # turned away: no memory for their server
                    try:
                        assert s.log_in() == 302, f"{s.name} could not log in"
                        return s.start_server(timeout=max(60.0, deadline - time.monotonic()))
                    finally:
                        budget.done(budget.SERVER)

                def open_lesson(s: hubctl.Student) -> tuple[float, Kernel] | None:
                    if not budget.admit(budget.KERNEL):
                        return None  # turned away: no memory for a kernel of 02
                    try:
                        t0 = time.perf_counter()
                        k = run_lesson(s)
                        with_kernel.append(s.name)
                        return time.perf_counter() - t0, k
                    finally:
                        budget.done(budget.KERNEL)

                with ThreadPoolExecutor(max_workers=len(others)) as pool:
                    arrived = list(pool.map(arrive, others))  # the class logs in at once
                    ready = [t for t in arrived if t is not None]
                    others = [s for s, t in zip(others, arrived, strict=True) if t is not None]
                    server_only = [memory_of_uid(pwd.getpwnam(s.name).pw_uid) for s in others]
                    for opened in pool.map(open_lesson, others):  # and opens 02 at once
                        if opened is not None:
                            lesson_s.append(opened[0])
                            kernels.append(opened[1])
                print(f"# {1 + len(kernels)} of {n} students: servers ready, 02 run in every kernel "
                      f"({time.monotonic() - t_start:.0f} s so far)", flush=True)
                if budget.refused:
                    print(f"# memory limits first: {n - 1 - len(kernels)} students turned away, their server or "
                          f"kernel would have left less than {args.memory_floor} GiB available "
                          f"(lowest {budget.lowest:.1f} GiB)", flush=True)
            held = 1 + len(kernels)
            steps = sorted({k for k in steps if k <= held} | {held})

            # 4. memory, with every kernel holding 02
            per_student = [memory_of_uid(pwd.getpwnam(name).pw_uid) for name in with_kernel]
            students = set(hub.processes_of_students())
            hub_pids = [hub.proc.pid, *hubctl.descendants(hub.proc.pid)]
            hub_kb = sum(pss_kb(pid) for pid in hub_pids if pid not in students)

            # 3. everyone moves sliders; the browser student measures
            def keep_moving(k: Kernel) -> None:
                while not stop.is_set() and time.monotonic() < deadline:
                    t0 = time.monotonic()
                    k.execute(MOVE, timeout=120)
                    stop.wait(max(0.0, args.pace - (time.monotonic() - t0)))

            movers = [threading.Thread(target=keep_moving, args=(k,), daemon=True) for k in kernels]
            at_step: dict[int, list[float]] = {}
            for k in steps:  # k students moving: the browser student and k - 1 others
                for th in movers[: k - 1]:
                    if not th.is_alive() and th.ident is None:
                        th.start()
                at_step[k] = browser_latency(page, args.moves, args.gap_ms) if k > 1 else lat1
                print(f"# {k} students moving: slider median {statistics.median(at_step[k]):.1f} ms, "
                      f"p90 {_pct(at_step[k], 90):.1f} ms ({time.monotonic() - t_start:.0f} s so far)", flush=True)
            latn = at_step[held]
            stop.set()
            for th in movers:
                th.join(timeout=130)
            page.context.close()
            browser.close()
    except BaseException:
        print(f"# the hub's log, last lines:\n{hub.log_tail(60)}", file=sys.stderr)
        raise
    finally:
        stop.set()
        for k in kernels:
            try:
                k.close()
            except Exception:  # noqa: BLE001 - the hub stops its kernels anyway
                pass
        hub.remove()

    all_ready = [ready_alone, *ready]
    mem_mb = [kb / 1024 for _, kb in per_student]
    server_mb = [kb / 1024 for _, kb in server_only] or [float("nan")]
    print(f"{'students':>8} {'ready s (med / p90 / max)':>26} {'02 run s (med)':>14} {'MB/student (med / max)':>23} "
          f"{'slider ms at 1 (med / p90)':>27} {'at N (med / p90)':>17} {'x':>5}")
    print(f"{held:>8} {statistics.median(all_ready):>10.1f} / {_pct(all_ready, 90):>5.1f} / {max(all_ready):>5.1f} "
          f"{(statistics.median(lesson_s) if lesson_s else float('nan')):>14.1f} "
          f"{statistics.median(mem_mb):>13.0f} / {max(mem_mb):>6.0f} "
          f"{statistics.median(lat1):>18.1f} / {_pct(lat1, 90):>6.1f} "
          f"{statistics.median(latn):>8.1f} / {_pct(latn, 90):>6.1f} "
          f"{statistics.median(latn) / statistics.median(lat1):>5.2f}")
    print(f"# memory: {len(per_student)} students, {sum(p for p, _ in per_student)} processes, "
          f"{sum(mem_mb):.0f} MB in all (PSS of each student's server and kernel, 02 run); hub and proxy "
          f"{hub_kb / 1024:.0f} MB")
    print(f"# memory per student grows: server alone {statistics.median(server_mb):.0f} MB (median), with a kernel of "
          f"02 run {statistics.median(mem_mb):.0f} MB; each more lesson open is one more kernel")
    for k in steps[:-1]:
        ratio = statistics.median(at_step[k]) / statistics.median(lat1)
        print(f"# with {k} students moving: slider median / p90 {statistics.median(at_step[k]):.1f} / "
              f"{_pct(at_step[k], 90):.1f} ms, {ratio:.2f} x one alone")
    print(f"# the other {held - 1} students each moved a slider every {args.pace:g} s while the first moved theirs; "
          f"lowest available memory {budget.lowest:.1f} GiB ({budget.refused} students turned away); "
          f"total {time.monotonic() - t_start:.0f} s; "
          f"after: {describe()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
