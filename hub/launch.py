"""Start the class hub, or print the teacher's link to a lesson; say what is wrong, and the fix, before
JupyterHub starts (never a traceback).

    python hub/launch.py serve              # what `make hub` runs (from .venv-hub)
    python hub/launch.py check              # the same checks, then exit
    python hub/launch.py link 02            # the link that hands out lesson 02 (nbgitpuller)
    python hub/launch.py python             # the Python .venv-hub is made from (one every account can run)

Settings (environment variables; `make hub` passes its variables of the same names):

CLASS_PASSWORD     the password every student types with their name (8 characters or more); required
TEACHER            the teacher's login name, an admin (default: teacher)
TEACHER_PASSWORD   the teacher's password (32 characters or more); by default one is made on the first
                   start and kept in HUB_STATE/teacher-password, readable by root only
STUDENTS           a file with the class list, one name a line: only these names may log in (default: any
                   valid name with the class password)
HUB_IP, HUB_PORT   where the hub listens (default 127.0.0.1:8000: this machine only). HUB_IP=0.0.0.0 serves
                   the classroom's network, in plain HTTP unless HUB_SSL_CERT and HUB_SSL_KEY are set
ISOLATION          users (default, needs root): each student is a system user with a private home;
                   none: every student runs as the hub's own account (no security boundary; a trial only)
HUB_STATE          the hub's own files: database, cookie key, teacher password, logs (default .hub-state)
HUB_HOME_BASE      where the students' homes go (default /home, or HUB_STATE/homes with ISOLATION=none)
HUB_GROUP          the students' system group (default attn-students)
HUB_RUNTIME_BASE   where each student's kernel sockets go, a folder of theirs per account (default /run/attn-hub)
COURSE, BRANCH     the git repository and branch the lessons are copied from (default: this checkout and
                   its current branch; what is committed there is what the students get)
HUB_URL, COURSE_URL  for `link` only: the hub's address and the course's git URL as the students' servers
                   see them, when they are not this machine's (a hub on Kubernetes: docs/hub.md)
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import urllib.parse
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
VENV = REPO / ".venv-hub"
PROXY = HERE / "node_modules" / ".bin" / "configurable-http-proxy"
FOLDER = "attention-by-hand"  # the copy's folder in a student's home


class Problem(Exception):
    """A setting that cannot work; the message says which and how to fix it."""


def _others_can_run(path: Path) -> bool:
    """True when an account other than the owner can reach ``path`` (o+x on every folder above it)."""
    path = path.resolve()
    for folder in [*reversed(path.parents)]:
        if not os.stat(folder).st_mode & 0o001:
            return False
    return bool(os.stat(path).st_mode & 0o005)


def python_for_students() -> str:
    """The Python .venv-hub is made from: $HUB_PYTHON, else python3 on PATH if every account can run it (a
    pyenv Python under /root is not), else /usr/bin/python3."""
    if os.environ.get("HUB_PYTHON"):
        return os.environ["HUB_PYTHON"]
    found = shutil.which("python3")
    if found:
        real = Path(subprocess.run([found, "-c", "import sys; print(sys.base_prefix)"], capture_output=True,
                                   text=True, check=True).stdout.strip())  # fmt: skip
        if _others_can_run(real / "bin") and _others_can_run(Path(os.path.realpath(found))):
            return found
    if Path("/usr/bin/python3").exists():
        return "/usr/bin/python3"
    raise Problem("no Python that every account can run: install Debian's (`apt-get install python3 python3-venv`)"
                  " or set HUB_PYTHON=/path/to/python3")


def _port_free(ip: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((ip, port))
        except OSError:
            return False
    return True


def _git(*args: str, cwd: Path | str | None = None) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if out.returncode:
        raise Problem(f"git {' '.join(args)} failed in {cwd}: {out.stderr.strip()}")
    return out.stdout.strip()


def write_gitconfig(course: Path, folder: Path) -> Path:
    """The students' git system config (GIT_CONFIG_SYSTEM), in ``folder``, one file per course (two hubs
    on two courses never share one): /etc/gitconfig, and the course repository as a safe.directory (git
    names a repository by ``<work tree>/.git`` there, a linked work tree too)."""
    import hashlib

    path = folder / f"gitconfig-{hashlib.sha1(str(course).encode()).hexdigest()[:12]}"
    text = "[include]\n\tpath = /etc/gitconfig\n" if Path("/etc/gitconfig").exists() else ""
    try:
        folder.mkdir(mode=0o755, parents=True, exist_ok=True)
        path.write_text(text + f"[safe]\n\tdirectory = {course}/.git\n")
        path.chmod(0o644)
    except OSError as err:
        raise Problem(f"cannot write the students' git settings {path}: {err}") from err
    return path


def settings(env: dict[str, str] | None = None, serving: bool = True) -> dict[str, str]:
    """The ATTN_HUB_* variables of hub/jupyterhub_config.py, from the user's settings; Problem if one is wrong.
    ``serving=False`` (a link): no passwords, proxy or free ports needed."""
    env = dict(os.environ if env is None else env)
    if not serving:
        env.setdefault("CLASS_PASSWORD", "-" * 8)
        env.setdefault("TEACHER_PASSWORD", "+" * 32)
    root = os.geteuid() == 0
    isolation = env.get("ISOLATION") or "users"
    if isolation not in {"users", "none"}:
        raise Problem(f"ISOLATION={isolation!r}: use `users` (each student a system user) or `none` (one account)")
    if isolation == "users" and not root:
        raise Problem("ISOLATION=users makes each student a system user, which needs root: run `sudo make hub`. "
                      "For a trial on your own machine, `make hub ISOLATION=none` runs every student as you "
                      "(no protection between students)")
    password = env.get("CLASS_PASSWORD", "")
    if not password:
        raise Problem("no class password: set one, e.g. `make hub CLASS_PASSWORD='a-long-phrase'` (8 characters or"
                      " more); students type it with their name")
    if len(password) < 8:
        raise Problem(f"CLASS_PASSWORD has {len(password)} characters: use 8 or more")
    state = Path(env.get("HUB_STATE") or REPO / ".hub-state").resolve()
    state.mkdir(parents=True, exist_ok=True)
    os.chmod(state, 0o700)  # the database, the cookie key and the teacher's password: the hub's alone
    teacher = env.get("TEACHER") or "teacher"
    from_file = state / "teacher-password"
    teacher_password = env.get("TEACHER_PASSWORD", "")
    if not teacher_password:
        if not from_file.exists():
            from_file.touch(mode=0o600)
            from_file.write_text(secrets.token_urlsafe(24) + "\n")
        teacher_password = from_file.read_text().strip()
    if len(teacher_password) < 32:
        raise Problem(f"TEACHER_PASSWORD has {len(teacher_password)} characters: JupyterHub wants 32 or more "
                      f"(unset it and one is made for you in {from_file})")
    if teacher_password == password:
        raise Problem("TEACHER_PASSWORD is the class password: the teacher's must be their own")
    students = ""
    if env.get("STUDENTS"):
        path = Path(env["STUDENTS"])
        if not path.is_file():
            raise Problem(f"STUDENTS={path}: no such file (one name a line)")
        names = [line.strip().lower() for line in path.read_text().splitlines() if line.strip()]
        from classroom import NAME

        bad = [n for n in names if not NAME.fullmatch(n)]
        if bad:
            raise Problem(f"STUDENTS: {bad[:5]} are not account names (a-z, 0-9 and '-', starting with a letter)")
        students = ",".join(names)
    if shutil.which("git") is None:
        raise Problem("git is missing: `apt-get install git`")
    course = Path(env.get("COURSE") or REPO).resolve()
    if not (course / ".git").exists():
        raise Problem(f"COURSE={course} is not a git repository: point it at a clone of the course")
    branch = env.get("BRANCH") or _git("rev-parse", "--abbrev-ref", "HEAD", cwd=course)
    if branch == "HEAD":
        raise Problem(f"{course} is on no branch (a detached HEAD): check out a branch, or set BRANCH=")
    _git("rev-parse", "--verify", f"refs/heads/{branch}", cwd=course)
    proxy = Path(env.get("HUB_PROXY") or PROXY)
    if serving and not proxy.exists():
        hint = ("npm is missing: install Node.js and npm (`apt-get install nodejs npm`), then run make hub again"
                if shutil.which("npm") is None else "run `make hub` (it installs it with npm into hub/node_modules)")
        raise Problem(f"configurable-http-proxy (JupyterHub's proxy) is not installed: {hint}")
    ip = env.get("HUB_IP") or "127.0.0.1"
    port = int(env.get("HUB_PORT") or 8000)
    hub_port = int(env.get("HUB_API_PORT") or 8081)
    proxy_api_port = int(env.get("HUB_PROXY_API_PORT") or 8001)
    for where, (host, p) in {"HUB_PORT": (ip, port), "HUB_API_PORT": ("127.0.0.1", hub_port),
                             "HUB_PROXY_API_PORT": ("127.0.0.1", proxy_api_port)}.items():  # fmt: skip
        if serving and not _port_free(host, p):
            raise Problem(f"port {p} on {host} is in use (another hub, or another server): stop it, or choose "
                          f"another port, e.g. `make hub {where}={p + 10}`")
    if bool(env.get("HUB_SSL_CERT")) != bool(env.get("HUB_SSL_KEY")):
        raise Problem("set both HUB_SSL_CERT and HUB_SSL_KEY (a certificate and its key), or neither")
    runtime_base = env.get("HUB_RUNTIME_BASE") or "/run/attn-hub"
    home_base = env.get("HUB_HOME_BASE") or ("/home" if isolation == "users" else str(state / "homes"))
    out = {
        "ISOLATION": isolation,
        "GROUP": env.get("HUB_GROUP") or "attn-students",
        "HOME_BASE": home_base,
        "RUNTIME_BASE": runtime_base,
        "STATE": str(state),
        "VENV": str(Path(env.get("HUB_VENV") or VENV)),
        "PROXY": str(proxy),
        "COURSE": str(course),
        "BRANCH": branch,
        "FOLDER": FOLDER,
        # where every student can read it: the runtime folders' parent as root, the hub's state otherwise
        "GITCONFIG": str(write_gitconfig(course, Path(runtime_base) if isolation == "users" else state)),
        "IP": ip,
        "PORT": str(port),
        "HUB_PORT": str(hub_port),
        "PROXY_API_PORT": str(proxy_api_port),
        "CLASS_PASSWORD": password,
        "TEACHER": teacher,
        "TEACHER_PASSWORD": teacher_password,
        "STUDENTS": students,
        "JUPYTER_CONFIG": str(REPO / "jupyter-config"),
        # extra arguments for every student's server (the browser tests: --LabApp.expose_app_in_browser=True)
        "SERVER_ARGS": env.get("HUB_SERVER_ARGS", ""),
    }
    if env.get("HUB_SSL_CERT"):
        out |= {"SSL_CERT": env["HUB_SSL_CERT"], "SSL_KEY": env["HUB_SSL_KEY"]}
    return out


def check_students_can_run(s: dict[str, str]) -> None:
    """As root with ISOLATION=users: an account with no rights of its own (nobody) can start the students'
    Python with JupyterLab and the course package, and read the course repository."""
    if s["ISOLATION"] != "users":
        return
    if not Path(s["HOME_BASE"]).is_dir():
        raise Problem(f"HUB_HOME_BASE={s['HOME_BASE']} is not a folder")
    from classroom import git_env

    python = Path(s["VENV"]) / "bin" / "python"
    probes = {
        "the students' Python (.venv-hub)": [str(python), "-c", "import jupyterlab, nbgitpuller, helpers"],
        "the course repository": ["git", "ls-remote", f"file://{s['COURSE']}", s["BRANCH"]],
    }
    for what, cmd in probes.items():
        out = subprocess.run(["runuser", "-u", "nobody", "--", *cmd], capture_output=True, text=True, cwd="/",
                             env={**os.environ, **git_env(s["GITCONFIG"])})  # fmt: skip
        if out.returncode:
            raise Problem(f"a student's account cannot use {what}: {(out.stderr or out.stdout).strip()[-400:]}\n"
                          "Each student runs as their own system user, so the checkout (and .venv-hub in it) must be "
                          "in folders every account may enter: clone the course under /srv or /opt, not under "
                          "/root, then run make hub there")


def ensure_group(group: str) -> None:
    try:
        import grp

        grp.getgrnam(group)
    except KeyError:
        subprocess.run(["groupadd", "--system", group], check=True)


def link(lesson: str, s: dict[str, str], base: str | None = None) -> str:
    """The teacher's link to ``lesson`` ("02", or a notebook's name): it opens the lesson in the student's own
    copy, first bringing in the course's newer files that the student has not changed (nbgitpuller)."""
    notebooks = sorted((Path(s["COURSE"]) / "notebooks").glob("*.ipynb"))
    match = [p for p in notebooks if p.name == lesson or p.stem == lesson or p.name.startswith(f"{lesson}-")]
    if len(match) != 1:
        raise Problem(f"lesson {lesson!r}: {'none' if not match else len(match)} notebooks match; "
                      f"use one of {[p.name[:2] for p in notebooks]}")
    base = base or os.environ.get("HUB_URL") or f"{'https' if s.get('SSL_CERT') else 'http'}://{s['IP']}:{s['PORT']}"
    query = urllib.parse.urlencode({
        "repo": os.environ.get("COURSE_URL") or f"file://{s['COURSE']}",
        "branch": s["BRANCH"],
        "targetpath": s["FOLDER"],
        "urlpath": f"lab/tree/{s['FOLDER']}/notebooks/{match[0].name}",
    })  # fmt: skip
    return f"{base}/hub/user-redirect/git-pull?{query}"


def _banner(s: dict[str, str]) -> None:
    import pwd

    url = f"{'https' if s.get('SSL_CERT') else 'http'}://{s['IP']}:{s['PORT']}"
    print(f"Class hub on {url}  (stop: Ctrl+C; students' files stay)", flush=True)
    print(f"  students: any name (a-z, 0-9, '-') and the class password"
          f"{'; only the names in STUDENTS' if s['STUDENTS'] else ''}")
    print(f"  teacher:  {s['TEACHER']}, password in {s['STATE']}/teacher-password (or TEACHER_PASSWORD); "
          f"admin page {url}/hub/admin")
    isolation = (f"each student a system user, home in {s['HOME_BASE']}" if s["ISOLATION"] == "users"
                 else f"NONE: every student runs as {pwd.getpwuid(os.geteuid()).pw_name}")
    print(f"  isolation: {isolation}")
    print(f"  lessons from {s['COURSE']} ({s['BRANCH']}); a lesson's link: make hub-link LESSON=02")
    if s["IP"] not in {"127.0.0.1", "localhost", "::1"}:
        print(f"WARNING: HUB_IP={s['IP']} serves every machine that can reach this one.", end=" ")
        if s.get("SSL_CERT"):
            print("HTTPS is on.")
        else:
            print("This is plain HTTP: on a shared network the passwords can be read as they pass. "
                  "Use it only on a network you trust, or set HUB_SSL_CERT and HUB_SSL_KEY.")
    print(flush=True)


def main(argv: list[str]) -> int:
    if len(argv) < 1 or argv[0] not in {"serve", "check", "link", "python"}:
        print(__doc__)
        return 2
    sys.path.insert(0, str(HERE))
    try:
        if argv[0] == "python":
            print(python_for_students())
            return 0
        s = settings(serving=argv[0] != "link")
        if argv[0] == "link":
            if len(argv) != 2:
                raise Problem("which lesson? `make hub-link LESSON=02`")
            print(link(argv[1], s))
            return 0
        if s["ISOLATION"] == "none" and os.geteuid() == 0:
            raise Problem("ISOLATION=none as root would run every student as root: run make hub as an ordinary "
                          "user for a trial, or as root without ISOLATION (each student a system user)")
        if s["ISOLATION"] == "users":
            ensure_group(s["GROUP"])
        check_students_can_run(s)
        if argv[0] == "check":
            print("ok")
            return 0
    except Problem as err:
        print(f"make hub: {err}", file=sys.stderr)
        return 1
    _banner(s)
    env = {**os.environ, **{f"ATTN_HUB_{k}": v for k, v in s.items()}}
    for secret in ("CLASS_PASSWORD", "TEACHER_PASSWORD"):  # only the ATTN_HUB_ copies, which students never see
        env.pop(secret, None)
    os.chdir(s["STATE"])
    jupyterhub = str(Path(s["VENV"]) / "bin" / "jupyterhub")
    os.execve(jupyterhub, [jupyterhub, "-f", str(HERE / "jupyterhub_config.py")], env)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
