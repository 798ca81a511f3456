"""A real class hub (hub/launch.py, as `make hub` starts it) for the tests and the load benchmark, and its
students as HTTP clients.

- ``Hub``: JupyterHub on free loopback ports, with a temporary state folder, a temporary folder for the
  students' homes and a system group of its own (``attn-t<hex>``), so nothing of a test run mixes with a
  real class. ``stop()`` ends the hub, its proxy, every student's server and kernel (and, bounded in time,
  anything left running as one of its students); ``remove()`` also deletes its students' accounts and
  group and its folders. Needs root (students are system users) and ``make test-hub``'s installs.
- ``Student``: logs in with the form (as a browser would), then uses a token of their own for the hub's
  REST API (start, stop their server) and their server's (files, kernels).

Only loopback addresses; every wait is bounded.
"""

from __future__ import annotations

import grp
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "ui"))

import lab  # noqa: E402 - tests/ui/lab.py: free ports, and the page helpers the browser tests use

HUB_VENV = REPO / ".venv-hub"
LAUNCH = REPO / "hub" / "launch.py"
CLASS_PASSWORD = f"class-{secrets.token_urlsafe(12)}"  # a new one each run: it is in no file of the tests
FOLDER = "attention-by-hand"


def missing() -> str | None:
    """Why a hub cannot run here (with the fix), or None."""
    if os.geteuid() != 0:
        return "the hub tests need root (each student is a system user): run make test-hub as root"
    if not (HUB_VENV / "bin" / "jupyterhub").exists():
        return "no .venv-hub: run make test-hub (it installs the students' environment)"
    if not (REPO / "hub" / "node_modules" / ".bin" / "configurable-http-proxy").exists():
        return "no configurable-http-proxy: run make test-hub (it installs it with npm)"
    return None


def as_student(name: str, *cmd: str, stdin: str = "", timeout: float = 300) -> subprocess.CompletedProcess:
    """``cmd`` run as the system account ``name`` (a student's rights, no more), ``stdin`` on its standard input
    (never a secret in its arguments)."""
    return subprocess.run(["runuser", "-u", name, "--", *cmd], input=stdin, capture_output=True, text=True,
                          timeout=timeout, cwd="/")  # fmt: skip


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, theirs, ...): make hub's JupyterHub, its proxy, the servers."""
    found, todo = [], [pid]
    while todo:
        kids = lab._children(todo.pop())
        found += kids
        todo += kids
    return found


def accounts(group: str) -> list[pwd.struct_passwd]:
    """The system accounts whose primary group is ``group`` (a hub's students and teacher)."""
    try:
        gid = grp.getgrnam(group).gr_gid
    except KeyError:
        return []
    return [p for p in pwd.getpwall() if p.pw_gid == gid]


def as_student_in_background(name: str, *cmd: str, stdin: str) -> subprocess.Popen:
    """``cmd`` (a Python script of the tests, run by the students' Python) as ``name``, ``stdin`` written to it
    and its standard input left open: ``finish`` closes it and returns what it printed, as JSON."""
    proc = subprocess.Popen(["runuser", "-u", name, "--", str(HUB_VENV / "bin" / "python"), *cmd], cwd="/",
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    proc.stdin.write(stdin)
    proc.stdin.flush()
    return proc


def finish(proc: subprocess.Popen, timeout: float = 60) -> dict:
    import json

    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, out
    return json.loads(out)


def clone_course(dest: Path) -> Path:
    """A course repository of the teacher's own (a clone of this checkout's HEAD), which tests may commit to."""
    subprocess.run(["git", "clone", "--quiet", "--depth", "1", f"file://{REPO}", str(dest)], check=True)
    for key, value in {"user.email": "teacher@example.org", "user.name": "Teacher"}.items():
        subprocess.run(["git", "-C", str(dest), "config", key, value], check=True)
    return dest


class Hub:
    """hub/launch.py serve on free loopback ports (see the module's docstring)."""

    def __init__(self, course: Path | None = None, server_args: str = "--LabApp.expose_app_in_browser=True"):
        self.tmp = Path(tempfile.mkdtemp(prefix="attn-hub-"))
        self.tmp.chmod(0o755)  # the students' homes are below it: they must be able to enter it
        self.homes = self.tmp / "homes"
        self.homes.mkdir(mode=0o755)
        self.state = self.tmp / "state"
        self.group = f"attn-t{secrets.token_hex(3)}"
        self.course = course or clone_course(self.tmp / "course")
        self.handout = self.tmp / "handout"
        self.server_args = server_args
        self.proc: subprocess.Popen | None = None
        self.terminal: int | None = None  # the pty's master side: make hub runs in a terminal, as a teacher's does
        self.seen_while_starting: dict = {}  # what an account with no rights saw while the hub started (peek.py)
        self.port = 0
        self.log_path = self.tmp / "hub.log"
        self.runtime_base = "/run/attn-hub"  # hub/launch.py's default: the path of a socket is short there

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def teacher_password(self) -> str:
        """The teacher's password, as the teacher finds it: made by the hub, in its state folder (root only)."""
        return (self.state / "teacher-password").read_text().strip()

    def env(self) -> dict[str, str]:
        """This hub's settings, as a teacher exports them: no password among them (docs/hub.md)."""
        return {
            **{k: v for k, v in os.environ.items() if "PASSWORD" not in k},
            "HUB_STATE": str(self.state),
            "HUB_HANDOUT": str(self.handout),
            "HUB_HOME_BASE": str(self.homes),
            "HUB_GROUP": self.group,
            "COURSE": str(self.course),
            "HUB_PORT": str(self.port),
            "HUB_API_PORT": str(lab._free_port()),
            "HUB_PROXY_API_PORT": str(lab._free_port()),
            "HUB_SERVER_ARGS": self.server_args,
        }

    def launch(self, *args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
        """hub/launch.py ``args`` (check, link, ...) with this hub's settings; its output."""
        return subprocess.run([str(HUB_VENV / "bin" / "python"), str(LAUNCH), *args], env=env or self.env(),
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)  # fmt: skip

    def make(self, *args: str, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
        """``make ARGS`` in the checkout with this hub's settings (no terminal: nothing can be asked)."""
        return subprocess.run(["make", "--no-print-directory", "-C", str(REPO), *args], env=env or self.env(),
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)  # fmt: skip

    def start(self, timeout: float = 90) -> None:
        """``make hub`` as docs/hub.md says, in a terminal of its own: on the first start it asks for the class
        password, which is typed there (twice); later starts use the one it kept."""
        import fcntl
        import pty
        import select
        import termios

        self.port = lab._free_port()
        master, slave = pty.openpty()

        def in_the_terminal() -> None:  # a session of its own whose controlling terminal is the pty, as a shell's
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                ["make", "--no-print-directory", "-C", str(REPO), "hub"], env=self.env(),
                stdin=slave, stdout=log, stderr=subprocess.STDOUT, preexec_fn=in_the_terminal,
            )  # fmt: skip
        os.close(slave)
        self.terminal = master
        shown, typed = b"", 0
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the hub exited with code {self.proc.returncode}:\n{self.log_tail()}")
            if select.select([master], [], [], 0)[0]:
                try:
                    shown += os.read(master, 4096)
                except OSError:
                    pass
                prompts = shown.count(b"class password") + shown.count(b"same again")
                if prompts > typed:  # the prompt: type the class password (getpass turns echo off first)
                    os.write(master, CLASS_PASSWORD.encode() + b"\n")
                    typed += 1
            try:
                if requests.get(f"{self.url}/hub/api/", timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.25)  # polling while the hub boots, not an assertion
        raise TimeoutError(f"the hub did not answer within {timeout:.0f} s:\n{self.log_tail()}")

    def student_uids(self) -> list[int]:
        return [p.pw_uid for p in accounts(self.group)]

    def processes_of_students(self) -> list[int]:
        uids = set(self.student_uids())
        found = []
        for status in Path("/proc").glob("[0-9]*/status"):
            try:
                uid = int(next(line for line in status.read_text().splitlines() if line.startswith("Uid:")).split()[1])
            except (OSError, StopIteration, ValueError):
                continue
            if uid in uids:
                found.append(int(status.parent.name))
        return found

    def stop(self, timeout: float = 30) -> list[int]:
        """Stop the hub as Ctrl+C would (it stops the proxy and every student's server, which shuts its
        kernels down); returns the pids of students' processes still alive after that, which it then kills."""
        proc, self.proc = self.proc, None
        kids = descendants(proc.pid) if proc is not None else []  # the proxy runs in a session of its own
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        left, deadline = self.processes_of_students(), time.monotonic() + 10
        while left and time.monotonic() < deadline:  # a server's own shutdown may take a moment
            time.sleep(0.2)
            left = self.processes_of_students()
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in [proc.pid, *kids] if proc is not None else []:
            try:
                os.killpg(pid, signal.SIGKILL)  # the proxy, had it outlived the hub
            except (ProcessLookupError, PermissionError):
                pass
        if self.terminal is not None:
            os.close(self.terminal)
            self.terminal = None
        return left

    def remove(self) -> None:
        """Stop, then delete the students' accounts, the group and every folder of this hub."""
        self.stop()
        try:
            gid = grp.getgrnam(self.group).gr_gid
        except KeyError:
            gid = None
        if gid is not None:
            for p in pwd.getpwall():
                if p.pw_gid == gid:
                    shutil.rmtree(Path(self.runtime_base) / str(p.pw_uid), ignore_errors=True)
                    subprocess.run(["userdel", p.pw_name], capture_output=True)
            subprocess.run(["groupdel", self.group], capture_output=True)
        import hashlib

        gitconfig = f"gitconfig-{hashlib.sha1(str(self.course.resolve()).encode()).hexdigest()[:12]}"  # launch.py's
        (Path(self.runtime_base) / gitconfig).unlink(missing_ok=True)
        try:
            Path(self.runtime_base).rmdir()  # made by the hub; only if no other hub's students use it
        except OSError:
            pass
        shutil.rmtree(self.tmp, ignore_errors=True)

    def log_tail(self, n: int = 40) -> str:
        if not self.log_path.exists():
            return "(no log)"
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])

    def link(self, lesson: str) -> str:
        """``make hub-link LESSON=...``, as docs/hub.md says: the link it prints."""
        out = self.make("hub-link", f"LESSON={lesson}")
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    def home(self, name: str) -> Path:
        return self.homes / name


class Student:
    """A student of ``hub``, by HTTP: log in with the class password, then a token of their own."""

    def __init__(self, hub: Hub, name: str):
        self.hub, self.name = hub, name
        self.session = requests.Session()
        self.token: str | None = None

    def log_in(self, password: str = CLASS_PASSWORD) -> int:
        """The login form, as a browser posts it; the HTTP status (302 on success, 403 refused)."""
        self.session.get(f"{self.hub.url}/hub/login", timeout=30)
        r = self.session.post(
            f"{self.hub.url}/hub/login", allow_redirects=False, timeout=60,
            data={"username": self.name, "password": password, "_xsrf": self.session.cookies.get("_xsrf")},
        )  # fmt: skip
        if r.status_code == 302:
            r = self.session.post(f"{self.hub.url}/hub/api/users/{self.name}/tokens", timeout=30,
                                  json={"note": "tests"},
                                  headers={"X-XSRFToken": self.session.cookies.get("_xsrf")})  # fmt: skip
            r.raise_for_status()
            self.token = r.json()["token"]
            return 302
        return r.status_code

    def _api(self, method: str, url: str, **kw) -> requests.Response:
        return self.session.request(method, url, headers={"Authorization": f"token {self.token}"},
                                    timeout=kw.pop("timeout", 60), **kw)  # fmt: skip

    def hub_api(self, method: str, path: str, **kw) -> requests.Response:
        return self._api(method, f"{self.hub.url}/hub/api/{path}", **kw)

    def server_api(self, method: str, path: str, **kw) -> requests.Response:
        return self._api(method, f"{self.hub.url}/user/{self.name}/api/{path}", **kw)

    def start_server(self, timeout: float = 180) -> float:
        """Start their server and wait until it answers; seconds from the request to ready."""
        t0 = time.perf_counter()
        r = self.hub_api("POST", f"users/{self.name}/server")
        assert r.status_code in (201, 202, 400), f"{r.text}\n{self.hub.log_tail()}"  # 400: already running
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            model = self.hub_api("GET", f"users/{self.name}").json()
            server = model.get("servers", {}).get("")
            if server and server.get("ready"):
                if self.server_api("GET", "status").status_code == 200:
                    return time.perf_counter() - t0
            # polling while the server starts, not an assertion; once a second, so that sixty students waiting
            # (make bench-hub) ask the hub 60 times a second, not 240 (a browser's page follows one event stream)
            time.sleep(1.0)
        raise TimeoutError(f"{self.name}'s server not ready in {timeout:.0f} s:\n{self.hub.log_tail()}")

    def stop_server(self, timeout: float = 60) -> None:
        r = self.hub_api("DELETE", f"users/{self.name}/server")
        assert r.status_code in (202, 204), r.text
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.hub_api("GET", f"users/{self.name}").json().get("servers"):
                return
            time.sleep(0.25)  # polling while the server stops, not an assertion
        raise TimeoutError(f"{self.name}'s server did not stop in {timeout:.0f} s")

    def server_pid(self) -> int | None:
        """The pid of their running server (from the hub's own record), or None."""
        model = self.hub_api("GET", f"users/{self.name}").json()
        state = (model.get("servers", {}).get("") or {}).get("state") or {}
        return state.get("pid")

    def read(self, rel: str) -> dict:
        """A file of their copy through their server (contents API): the model, content included."""
        r = self.server_api("GET", f"contents/{FOLDER}/{rel}")
        r.raise_for_status()
        return r.json()

    def write(self, rel: str, model: dict) -> None:
        r = self.server_api("PUT", f"contents/{FOLDER}/{rel}", json=model)
        assert r.status_code in (200, 201), r.text
