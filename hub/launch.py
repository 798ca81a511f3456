"""Start the class hub, hand out a lesson or its solutions, and end the term; say what is wrong, and the fix,
before anything starts (never a traceback).

    python hub/launch.py serve              # what `make hub` runs (from .venv-hub)
    python hub/launch.py check              # the same checks, then exit
    python hub/launch.py link 02            # the link that hands out lesson 02 (nbgitpuller)
    python hub/launch.py release 02         # lesson 02's worked solutions, into every student's copy
    python hub/launch.py archive            # every home of the hub's accounts in one .tar.gz (ARCHIVE=path)
    python hub/launch.py clean [--yes]      # remove the hub's accounts, homes, group, folders and state
    python hub/launch.py python             # the Python .venv-hub is made from (one every account can run)

Passwords never come from the command line (any account sees a program's arguments in `ps`):

CLASS_PASSWORD_FILE    a file only root can read with the password every student types with their name
                       (8 characters or more); else CLASS_PASSWORD from the environment; else the one kept
                       from an earlier start; else, in a terminal, typed at a prompt. Kept in
                       HUB_STATE/class-password (root only) for the next start.
TEACHER_PASSWORD_FILE  the same for the teacher's password (32 characters or more); else TEACHER_PASSWORD from
                       the environment; else the one kept in HUB_STATE/teacher-password, made on the first start

Settings (environment variables; `make hub` passes its variables of the same names):

TEACHER            the teacher's login name, an admin (default: teacher)
STUDENTS           a file with the class list, one name a line: only these names may log in (default: any
                   valid name with the class password)
HUB_IP, HUB_PORT   where the hub listens (default 127.0.0.1:8000: this machine only). HUB_IP=0.0.0.0 serves
                   the classroom's network, in plain HTTP unless HUB_SSL_CERT and HUB_SSL_KEY are set
ISOLATION          users (default, needs root): each student is a system user with a private home;
                   none: every student runs as the hub's own account (no security boundary; a trial only)
HUB_STATE          the hub's own files: database, cookie key, passwords, released solutions (default .hub-state)
HUB_HANDOUT        the git repository the students copy from: the course without its unreleased solutions
                   (default .hub-handout)
HUB_HOME_BASE      where the students' homes go (default /home, or HUB_STATE/homes with ISOLATION=none)
HUB_GROUP          the students' system group (default attn-students)
HUB_RUNTIME_BASE   where each student's kernel sockets go, a folder of theirs per account (default /run/attn-hub)
KERNEL_IDLE_MINUTES  a kernel unused this long is stopped, its memory freed (default 30; 0: never)
MEMORY_PER_PROCESS   the most memory one program of a student may take, e.g. 2G (default 2G; 0: no limit)
COURSE, BRANCH     the git repository and branch the lessons come from (default: this checkout and its
                   current branch; what is committed there is what the students get)
HUB_URL, COURSE_URL  for `link` only: the hub's address and the course's git URL as the students' servers
                   see them, when they are not this machine's (a hub on Kubernetes: docs/hub.md)
ARCHIVE            for `archive` only: the file to write (default /var/backups/attn-hub-<group>-<date>.tar.gz)
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
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


def gitconfig_name(course: Path | str) -> str:
    """The name of a course's git settings file for its students (one per course)."""
    import hashlib

    return f"gitconfig-{hashlib.sha1(str(course).encode()).hexdigest()[:12]}"


def write_gitconfig(course: Path, handout: Path, folder: Path) -> Path:
    """The git system config (GIT_CONFIG_SYSTEM) of the students and of the hub's own git commands, in
    ``folder``, one file per course (two hubs on two courses never share one): /etc/gitconfig, and the course
    and the handout as safe.directory entries (git names a repository by ``<work tree>/.git`` there, a linked
    work tree too; a bare one by its own folder), so git reads them although another account owns them."""
    path = folder / gitconfig_name(course)
    text = "[include]\n\tpath = /etc/gitconfig\n" if Path("/etc/gitconfig").exists() else ""
    try:
        folder.mkdir(mode=0o755, parents=True, exist_ok=True)
        path.write_text(text + f"[safe]\n\tdirectory = {course}/.git\n\tdirectory = {handout}\n")
        path.chmod(0o644)
    except OSError as err:
        raise Problem(f"cannot write the students' git settings {path}: {err}") from err
    return path


def git_env(gitconfig: str) -> dict[str, str]:
    """Environment that lets a student's git read the handout (the course as students get it), which another
    user (root) owns. Git refuses such a repository unless its ``safe.directory`` names it, and for a local clone
    it reads that only from the system or global config file (not from ``-c`` or GIT_CONFIG_COUNT), so the
    hub writes a system config file of its own (write_gitconfig: the handout, ``<course>/.git`` and /etc/gitconfig)."""
    return {"GIT_CONFIG_SYSTEM": gitconfig, "GIT_TERMINAL_PROMPT": "0"}


def _secret_file(path: Path, mode: int = 0o600) -> None:
    """Make ``path`` a file only its owner (root) may read, before anything is written into it."""
    path.touch(mode=mode, exist_ok=True)
    os.chmod(path, mode)


def _read_secret(name: str, env: dict[str, str], kept: Path, ask: str | None) -> tuple[str, bool]:
    """A password, and whether it is new: from the file ${name}_FILE (readable by its owner only), else the
    environment variable ``name``, else the copy ``kept`` from an earlier start (not new), else (``ask``, in a
    terminal) typed twice at a prompt; '' when none."""
    if env.get(f"{name}_FILE"):
        path = Path(env[f"{name}_FILE"])
        if not path.is_file():
            raise Problem(f"{name}_FILE={path}: no such file (write the password in it, one line)")
        if path.stat().st_mode & 0o077:
            raise Problem(f"{name}_FILE={path} can be read by other accounts: `chmod 600 {path}` (and choose a "
                          "new password if students had accounts here)")
        value = path.read_text().strip()
        if not value:
            raise Problem(f"{name}_FILE={path} is empty")
        return value, True
    if env.get(name):
        return env[name], True
    if kept.exists():
        return kept.read_text().strip(), False
    if ask and sys.stdin.isatty():
        import getpass

        first = getpass.getpass(f"{ask} (not shown as you type): ")
        if first and getpass.getpass("The same again: ") != first:
            raise Problem(f"the two {name.lower().replace('_', ' ')}s differ: run it again")
        return first, True
    return "", False


def _keep_secret(path: Path, value: str) -> None:
    """Write a password into the hub's state, readable by root only (the mode is set before it is written)."""
    _secret_file(path)
    if path.read_text().strip() != value:
        path.write_text(value + "\n")


def places(env: dict[str, str] | None = None) -> dict[str, str]:
    """Where the hub keeps what it makes (its state, the handout, the students' homes, group and runtime
    folders): what `serve` makes and `archive` and `clean` read. No checks."""
    env = dict(os.environ if env is None else env)
    isolation = env.get("ISOLATION") or "users"
    state = Path(env.get("HUB_STATE") or REPO / ".hub-state").resolve()
    return {
        "ISOLATION": isolation,
        "GROUP": env.get("HUB_GROUP") or "attn-students",
        "HOME_BASE": env.get("HUB_HOME_BASE") or ("/home" if isolation == "users" else str(state / "homes")),
        "RUNTIME_BASE": env.get("HUB_RUNTIME_BASE") or "/run/attn-hub",
        "STATE": str(state),
        "HANDOUT": str(Path(env.get("HUB_HANDOUT") or REPO / ".hub-handout").resolve()),
        "COURSE": str(Path(env.get("COURSE") or REPO).resolve()),
    }


def settings(env: dict[str, str] | None = None, serving: bool = True) -> dict[str, str]:
    """The ATTN_HUB_* variables of hub/jupyterhub_config.py, from the user's settings; Problem if one is wrong.
    ``serving=False`` (a link, a release): no passwords, proxy or free ports needed."""
    env = dict(os.environ if env is None else env)
    out = places(env)
    root = os.geteuid() == 0
    isolation = out["ISOLATION"]
    if isolation not in {"users", "none"}:
        raise Problem(f"ISOLATION={isolation!r}: use `users` (each student a system user) or `none` (one account)")
    if isolation == "users" and not root:
        raise Problem("ISOLATION=users makes each student a system user, which needs root: run `sudo make hub`. "
                      "For a trial on your own machine, `make hub ISOLATION=none` runs every student as you "
                      "(no protection between students)")
    state = Path(out["STATE"])
    state.mkdir(parents=True, exist_ok=True)
    os.chmod(state, 0o700)  # the database, the cookie key and the passwords: the hub's alone
    if serving:
        class_file, teacher_file = state / "class-password", state / "teacher-password"
        password, new_class = _read_secret("CLASS_PASSWORD", env, class_file,
                                           ask="The class password, for every student")  # fmt: skip
        if not password:
            raise Problem("no class password: run `sudo make hub` in a terminal and type one when asked, or put it "
                          "in a file only root can read and run `sudo make hub CLASS_PASSWORD_FILE=/path/to/it` "
                          "(8 characters or more; students type it with their name)")
        if len(password) < 8:
            raise Problem(f"the class password has {len(password)} characters: use 8 or more")
        teacher_password, new_teacher = _read_secret("TEACHER_PASSWORD", env, teacher_file, ask=None)
        if not teacher_password:
            teacher_password, new_teacher = secrets.token_urlsafe(24), True
        if len(teacher_password) < 32:
            raise Problem(f"the teacher's password has {len(teacher_password)} characters: JupyterHub wants 32 or "
                          f"more (give none and one is made for you in {teacher_file})")
        if teacher_password == password:
            raise Problem("the teacher's password is the class password: the teacher's must be their own")
        for path, value, new in ((class_file, password, new_class), (teacher_file, teacher_password, new_teacher)):
            if new:
                _keep_secret(path, value)
        out |= {"CLASS_PASSWORD_FILE": str(class_file), "TEACHER_PASSWORD_FILE": str(teacher_file)}
    teacher = env.get("TEACHER") or "teacher"
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
    course = Path(out["COURSE"])
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
    idle = env.get("KERNEL_IDLE_MINUTES") or "30"
    if not idle.isdigit():
        raise Problem(f"KERNEL_IDLE_MINUTES={idle!r}: a whole number of minutes (0: never stop an idle kernel)")
    memory = (env.get("MEMORY_PER_PROCESS") or "2G").upper()
    if not re.fullmatch(r"0|\d+[MG]", memory):
        raise Problem(f"MEMORY_PER_PROCESS={memory!r}: a size such as 1500M or 2G (0: no limit)")
    if memory != "0" and int(memory[:-1]) * (1 if memory[-1] == "M" else 1024) < 1024:
        raise Problem(f"MEMORY_PER_PROCESS={memory}: a kernel that has run 02 holds about 300M of data already; "
                      "use 1G or more (0: no limit)")
    prlimit = shutil.which("prlimit") or ""
    if memory != "0" and not prlimit:
        raise Problem("prlimit (util-linux) is missing, which sets MEMORY_PER_PROCESS: `apt-get install util-linux`,"
                      " or MEMORY_PER_PROCESS=0 (no limit)")
    out |= {
        "PROXY": str(proxy),
        "VENV": str(Path(env.get("HUB_VENV") or VENV)),
        "BRANCH": branch,
        "FOLDER": FOLDER,
        # where every student can read it: the runtime folders' parent as root, the hub's state otherwise
        "GITCONFIG": str(write_gitconfig(course, Path(out["HANDOUT"]),
                                         Path(out["RUNTIME_BASE"]) if isolation == "users" else state)),
        "IP": ip,
        "PORT": str(port),
        "HUB_PORT": str(hub_port),
        "PROXY_API_PORT": str(proxy_api_port),
        "TEACHER": teacher,
        "STUDENTS": students,
        "KERNEL_IDLE_MINUTES": str(int(idle)),
        "MEMORY_PER_PROCESS": memory,
        "PRLIMIT": prlimit,
        "JUPYTER_CONFIG": str(REPO / "jupyter-config"),
        # extra arguments for every student's server (the browser tests: --LabApp.expose_app_in_browser=True)
        "SERVER_ARGS": env.get("HUB_SERVER_ARGS", ""),
    }
    if env.get("HUB_SSL_CERT"):
        out |= {"SSL_CERT": env["HUB_SSL_CERT"], "SSL_KEY": env["HUB_SSL_KEY"]}
    return out


def check_students_can_run(s: dict[str, str]) -> None:
    """As root with ISOLATION=users: an account with no rights of its own (nobody) can start the students'
    Python with JupyterLab and the course package, and read the handout (the course as the students get it)."""
    if s["ISOLATION"] != "users":
        return
    if not Path(s["HOME_BASE"]).is_dir():
        raise Problem(f"HUB_HOME_BASE={s['HOME_BASE']} is not a folder")
    python = Path(s["VENV"]) / "bin" / "python"
    probes = {
        "the students' Python (.venv-hub)": [str(python), "-c", "import jupyterlab, nbgitpuller, helpers"],
        "the handout (the course's copy for students)": ["git", "ls-remote", f"file://{s['HANDOUT']}", s["BRANCH"]],
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


def _lesson_notebook(lesson: str, course: Path) -> Path:
    notebooks = sorted((course / "notebooks").glob("*.ipynb"))
    match = [p for p in notebooks if p.name == lesson or p.stem == lesson or p.name.startswith(f"{lesson}-")]
    if len(match) != 1:
        raise Problem(f"lesson {lesson!r}: {'none' if not match else len(match)} notebooks match; "
                      f"use one of {[p.name[:2] for p in notebooks]}")
    return match[0]


def link(lesson: str, s: dict[str, str], base: str | None = None) -> str:
    """The teacher's link to ``lesson`` ("02", or a notebook's name): it opens the lesson in the student's own
    copy, first bringing in the course's newer files that the student has not changed (nbgitpuller)."""
    notebook = _lesson_notebook(lesson, Path(s["COURSE"]))
    base = base or os.environ.get("HUB_URL") or f"{'https' if s.get('SSL_CERT') else 'http'}://{s['IP']}:{s['PORT']}"
    query = urllib.parse.urlencode({
        "repo": os.environ.get("COURSE_URL") or f"file://{s['HANDOUT']}",
        "branch": s["BRANCH"],
        "targetpath": s["FOLDER"],
        "urlpath": f"lab/tree/{s['FOLDER']}/notebooks/{notebook.name}",
    })  # fmt: skip
    return f"{base}/hub/user-redirect/git-pull?{query}"


# -- the handout: what the students copy, the course without the worked solutions not yet released

SOLUTIONS = "notebooks/solutions"


def released(s: dict[str, str]) -> list[str]:
    """The lessons whose worked solutions the teacher released ("02", ...), from HUB_STATE/released."""
    path = Path(s["STATE"]) / "released"
    return sorted(set(path.read_text().split())) if path.exists() else []


def close_course(s: dict[str, str]) -> list[str]:
    """Close the course's git folder and its worked solutions to every other account (mode 0700), in the course
    and in this checkout: students copy from the handout, and the solutions reach them when released. Returns
    what stays open to other accounts (a linked work tree's git folder, which belongs to its main checkout)."""
    if s["ISOLATION"] != "users":
        return []
    open_still = []
    for repo in dict.fromkeys([Path(s["COURSE"]), REPO]):
        for sub in (".git", SOLUTIONS):
            path = repo / sub
            if path.is_dir() and not path.is_symlink():
                path.chmod(path.stat().st_mode & 0o700)
            elif path.is_file():  # a linked work tree: its objects are in the main checkout's .git
                common = Path(_git("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=repo))
                if common.stat().st_mode & 0o005:
                    open_still.append(str(common))
    return open_still


def publish(s: dict[str, str]) -> str:
    """Bring the handout (a bare git repository every account can read) up to the course's branch: one commit
    of the course's files without notebooks/solutions/, except the released lessons', on top of the handout's
    last one (a student's copy merges it like any commit of the course). Nothing new if nothing changed.
    Built in HUB_STATE/handout-build (the hub's alone), so no unreleased solution ever reaches the handout."""
    handout, build = Path(s["HANDOUT"]), Path(s["STATE"]) / "handout-build"
    env = {**os.environ, **git_env(s["GITCONFIG"]), "GIT_INDEX_FILE": str(build / "handout.index")}

    def git(*args: str, cwd: Path = build, **kw) -> str:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env, **kw)
        if out.returncode:
            raise Problem(f"git {' '.join(args)} failed in {cwd}: {out.stderr.strip()[-600:]}")
        return out.stdout.strip()

    old_umask = os.umask(0o022)  # the handout: readable by every account
    try:
        if not (handout / "HEAD").exists():
            handout.mkdir(mode=0o755, parents=True, exist_ok=True)
            git("init", "--quiet", "--bare", f"--initial-branch={s['BRANCH']}", str(handout), cwd=handout)
        if not (build / ".git").exists():
            build.mkdir(mode=0o700, parents=True, exist_ok=True)
            git("init", "--quiet", str(build))
        git("fetch", "--quiet", "--no-tags", "--depth=1", f"file://{s['COURSE']}",
            f"+refs/heads/{s['BRANCH']}:refs/course")
        parent = None
        if git("ls-remote", f"file://{handout}", f"refs/heads/{s['BRANCH']}"):
            git("fetch", "--quiet", "--no-tags", "--depth=1", f"file://{handout}",
                f"+refs/heads/{s['BRANCH']}:refs/handout")
            parent = git("rev-parse", "refs/handout")
        course = git("rev-parse", "refs/course")
        git("read-tree", "--empty")
        listing = git("ls-tree", "-r", "--full-tree", course)
        keep = released(s)
        lines = [line for line in listing.splitlines() if not line.split("\t", 1)[1].startswith(SOLUTIONS + "/")
                 or Path(line.split("\t", 1)[1]).name[:2] in keep]  # fmt: skip
        git("update-index", "--add", "--index-info", input="\n".join(lines) + "\n")
        tree = git("write-tree")
        if parent and git("rev-parse", f"{parent}^{{tree}}") == tree:
            return parent
        message = (f"The course at {course[:12]} for the students"
                   + (f"; worked solutions released: {', '.join(keep)}" if keep else "; no worked solutions"))
        who = {"GIT_AUTHOR_NAME": "make hub", "GIT_AUTHOR_EMAIL": "hub@localhost",
               "GIT_COMMITTER_NAME": "make hub", "GIT_COMMITTER_EMAIL": "hub@localhost"}  # fmt: skip
        env.update(who)
        commit = git("commit-tree", tree, *(["-p", parent] if parent else []), "-m", message)
        git("push", "--quiet", f"file://{handout}", f"{commit}:refs/heads/{s['BRANCH']}")
        return commit
    finally:
        os.umask(old_umask)


def accounts(group: str) -> list:
    """The system accounts whose primary group is ``group`` (every student and the teacher, once they had a
    server), by user id."""
    import grp
    import pwd

    try:
        gid = grp.getgrnam(group).gr_gid
    except KeyError:
        return []
    return sorted((p for p in pwd.getpwall() if p.pw_gid == gid), key=lambda p: p.pw_uid)


def release(lesson: str, s: dict[str, str]) -> list[str]:
    """Release ``lesson``'s worked solutions: into the handout, and into every copy made so far (as each student,
    the way their link merges the course's changes: their own edits stay). The names of the copies updated."""
    notebook = _lesson_notebook(lesson, Path(s["COURSE"]))
    number = notebook.name[:2]
    files = sorted((Path(s["COURSE"]) / SOLUTIONS).glob(f"{number}-*.ipynb"))
    if not files:
        have = sorted({p.name[:2] for p in (Path(s["COURSE"]) / SOLUTIONS).glob("*.ipynb")})
        raise Problem(f"lesson {number} has no worked solutions in {SOLUTIONS}/; these lessons have: {have}")
    path = Path(s["STATE"]) / "released"
    path.write_text("".join(f"{n}\n" for n in sorted({*released(s), number})))
    publish(s)
    if s["ISOLATION"] == "users":
        homes = [(Path(p.pw_dir), p.pw_name) for p in accounts(s["GROUP"])]
    else:  # every copy is the hub's own account's, in a folder of its own
        base = Path(s["HOME_BASE"])
        homes = [(home, None) for home in sorted(base.iterdir())] if base.is_dir() else []
    # a copy not made yet: the student's first login copies the handout, released solutions included
    homes = [(home, user) for home, user in homes if (home / s["FOLDER"] / ".git").is_dir()]

    def pull(home: Path, user: str | None) -> subprocess.CompletedProcess:
        cmd = [str(Path(s["VENV"]) / "bin" / "gitpuller"), f"file://{s['HANDOUT']}", s["BRANCH"],
               str(home / s["FOLDER"])]
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "NBGITPULLER_DEPTH": "1", **git_env(s["GITCONFIG"])}
        return subprocess.run(["runuser", "-u", user, "--", *cmd] if user else cmd, cwd=home, capture_output=True,
                              text=True, timeout=300, env=env)

    from concurrent.futures import ThreadPoolExecutor

    updated, failed = [], []
    with ThreadPoolExecutor(max_workers=4) as pool:  # a few at once: git is quick, sixty copies add up
        for (home, _), out in zip(homes, pool.map(lambda h: pull(*h), homes), strict=True):
            (failed if out.returncode else updated).append(home.name)
            if out.returncode:
                print(f"  {home.name}: {(out.stderr or out.stdout).strip()[-300:]}", file=sys.stderr)
    print(f"Released {', '.join(f.name for f in files)}: in the copies of {len(updated)} students now"
          + (f" (not in {', '.join(failed)}: see above; their next link brings it)" if failed else "")
          + "; every copy made from now on has it.")
    return updated


# -- the end of the term: an archive of every home, then nothing left


def hub_processes(s: dict[str, str]) -> list[int]:
    """Pids of a hub running on this state folder (hub/launch.py serve works in it)."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if os.readlink(proc / "cwd") == s["STATE"] and b"jupyterhub" in (proc / "cmdline").read_bytes():
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def archive(s: dict[str, str], dest: str | None = None) -> Path:
    """Every home of the hub's accounts (students and teacher), with owners and modes, in one .tar.gz that
    only root can read."""
    import datetime

    homes = [Path(p.pw_dir) for p in accounts(s["GROUP"]) if Path(p.pw_dir).is_dir()]
    if s["ISOLATION"] == "none":
        base = Path(s["HOME_BASE"])
        homes = sorted(base.iterdir()) if base.is_dir() else []
    if not homes:
        raise Problem(f"no homes to archive: no account of group {s['GROUP']} has one")
    stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H%M")
    path = Path(dest or f"/var/backups/attn-hub-{s['GROUP']}-{stamp}.tar.gz")
    path.parent.mkdir(parents=True, exist_ok=True)
    _secret_file(path)
    with open(path, "wb") as out:  # paths from /, without it: `tar -x -C /` puts a home back where it was
        subprocess.run(["tar", "--create", "--gzip", "--numeric-owner", "--file=-", "--directory=/",
                        *(str(h.relative_to("/")) for h in homes)], stdout=out, check=True)  # fmt: skip
    size = path.stat().st_size / 1e6
    print(f"Archived {len(homes)} homes ({', '.join(h.name for h in homes)}) in {path}, {size:.1f} MB, readable "
          "by root only. See one: tar -tzf ARCHIVE | less; restore one: "
          f"tar -xzpf {path} -C / {homes[0].relative_to('/')}")
    return path


def clean(s: dict[str, str], yes: bool) -> list[str]:
    """Remove every account of the hub's group (students and teacher) with its home and its processes, the
    group, the students' runtime folders, the handout and the hub's state; what it removed, one line each."""
    running = hub_processes(s)
    if running:
        raise Problem(f"the hub is running (pid {running[0]}): stop it first (Ctrl+C where it runs), then run "
                      "make hub-clean again")
    users = accounts(s["GROUP"]) if s["ISOLATION"] == "users" else []
    runtime = Path(s["RUNTIME_BASE"])
    plan = [f"account {p.pw_name} (uid {p.pw_uid}) and its home {p.pw_dir}" for p in users]
    plan += [f"group {s['GROUP']}"] if _group_exists(s["GROUP"]) else []
    plan += [f"{p}" for p in (runtime, Path(s["HANDOUT"]), Path(s["STATE"])) if p.exists()]
    if not plan:
        print("Nothing to remove: no account, group, runtime folder, handout or state of this hub.")
        return []
    print("make hub-clean removes:\n  " + "\n  ".join(plan))
    print(f"and keeps the course ({s['COURSE']}), .venv-hub and hub/node_modules. Students' work is lost unless "
          "archived first: make hub-archive.")
    if not yes:
        if not sys.stdin.isatty():
            raise Problem("nothing removed: run `make hub-clean` in a terminal to confirm, or `make hub-clean "
                          "CONFIRM=yes`")
        if input("Type yes to remove them: ").strip() != "yes":
            print("Nothing removed.")
            return []
    import signal

    done = []
    uids = {p.pw_uid for p in users}
    for status in Path("/proc").glob("[0-9]*/status"):  # their programs first: userdel refuses a busy account
        try:
            if status.parent.stat().st_uid in uids:
                os.kill(int(status.parent.name), signal.SIGKILL)
        except (OSError, ValueError):
            continue
    for p in users:
        out = subprocess.run(["userdel", "--remove", p.pw_name], capture_output=True, text=True)
        if out.returncode not in (0, 12):  # 12: the home could not be removed (done below)
            for _ in range(20):  # a killed process may take a moment to go
                time.sleep(0.25)
                out = subprocess.run(["userdel", "--remove", p.pw_name], capture_output=True, text=True)
                if out.returncode in (0, 12):
                    break
            else:
                raise Problem(f"userdel {p.pw_name} failed: {out.stderr.strip()}")
        home = Path(p.pw_dir)
        if home.is_dir() and home.stat().st_uid == p.pw_uid:
            shutil.rmtree(home)
        shutil.rmtree(runtime / str(p.pw_uid), ignore_errors=True)
        done.append(f"account {p.pw_name} (uid {p.pw_uid}) and {home}")
    if _group_exists(s["GROUP"]):
        subprocess.run(["groupdel", s["GROUP"]], check=True, capture_output=True)
        done.append(f"group {s['GROUP']}")
    if runtime.is_dir():
        import pwd

        for entry in runtime.iterdir():  # a folder of an id no account has: a new account with it would get it
            gone = entry.name.isdigit() and not _uid_exists(int(entry.name), pwd)
            if gone or entry.name == gitconfig_name(s["COURSE"]):
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        try:
            runtime.rmdir()
            done.append(str(runtime))
        except OSError:
            done.append(f"{runtime}: this hub's folders (others' stay: {sorted(e.name for e in runtime.iterdir())})")
    for path in (Path(s["HANDOUT"]), Path(s["STATE"])):
        if path.exists():
            shutil.rmtree(path)
            done.append(str(path))
    print("Removed:\n  " + "\n  ".join(done))
    return done


def _group_exists(group: str) -> bool:
    import grp

    try:
        grp.getgrnam(group)
        return True
    except KeyError:
        return False


def _uid_exists(uid: int, pwd) -> bool:
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False


def _banner(s: dict[str, str], open_still: list[str]) -> None:
    import pwd

    url = f"{'https' if s.get('SSL_CERT') else 'http'}://{s['IP']}:{s['PORT']}"
    print(f"Class hub on {url}  (stop: Ctrl+C; students' files stay)", flush=True)
    print(f"  students: any name (a-z, 0-9, '-') and the class password"
          f"{'; only the names in STUDENTS' if s['STUDENTS'] else ''}")
    print(f"  teacher:  {s['TEACHER']}, password in {s['TEACHER_PASSWORD_FILE']} (root only); lands on the admin "
          f"page {url}/hub/admin")
    isolation = (f"each student a system user, home in {s['HOME_BASE']}" if s["ISOLATION"] == "users"
                 else f"NONE: every student runs as {pwd.getpwuid(os.geteuid()).pw_name}")
    print(f"  isolation: {isolation}")
    print(f"  lessons from {s['COURSE']} ({s['BRANCH']}); a lesson's link: make hub-link LESSON=02")
    keep = released(s)
    print(f"  worked solutions: {'released for ' + ', '.join(keep) if keep else 'none released'}; "
          "release a lesson's: make hub-release LESSON=02")
    for path in open_still:
        print(f"WARNING: {path} (this checkout's git objects, solutions included) can be read by every account: "
              "serve from a clone of your own (COURSE=, or run make hub in it)")
    if s["IP"] not in {"127.0.0.1", "localhost", "::1"}:
        print(f"WARNING: HUB_IP={s['IP']} serves every machine that can reach this one.", end=" ")
        if s.get("SSL_CERT"):
            print("HTTPS is on.")
        else:
            print("This is plain HTTP: on a shared network the passwords can be read as they pass. "
                  "Use it only on a network you trust, or set HUB_SSL_CERT and HUB_SSL_KEY.")
    print(flush=True)


COMMANDS = {"serve", "check", "link", "release", "archive", "clean", "python"}


def main(argv: list[str]) -> int:
    if len(argv) < 1 or argv[0] not in COMMANDS:
        print(__doc__)
        return 2
    sys.path.insert(0, str(HERE))
    command = argv[0]
    try:
        if command == "python":
            print(python_for_students())
            return 0
        if command in {"archive", "clean"}:
            if os.geteuid() != 0 and places()["ISOLATION"] == "users":
                raise Problem(f"make hub-{command} works on system accounts: run it as root (sudo)")
            s = places()
            if command == "archive":
                archive(s, os.environ.get("ARCHIVE") or None)
            else:
                clean(s, yes="--yes" in argv[1:])
            return 0
        s = settings(serving=command not in {"link", "release"})
        if command in {"link", "release"}:
            if len(argv) != 2:
                raise Problem(f"which lesson? `make hub-{command} LESSON=02`")
            if command == "link":
                if not os.environ.get("COURSE_URL"):  # this machine's hub: bring the handout up to the course
                    close_course(s)
                    publish(s)
                print(link(argv[1], s))
            else:
                close_course(s)
                release(argv[1], s)
            return 0
        if s["ISOLATION"] == "none" and os.geteuid() == 0:
            raise Problem("ISOLATION=none as root would run every student as root: run make hub as an ordinary "
                          "user for a trial, or as root without ISOLATION (each student a system user)")
        if s["ISOLATION"] == "users":
            ensure_group(s["GROUP"])
        open_still = close_course(s)
        publish(s)
        check_students_can_run(s)
        if command == "check":
            print("ok")
            return 0
    except Problem as err:
        print(f"make hub{'' if command in {'serve', 'check'} else '-' + command}: {err}", file=sys.stderr)
        return 1
    _banner(s, open_still)
    env = {**os.environ, **{f"ATTN_HUB_{k}": v for k, v in s.items()}}
    for name in ("CLASS_PASSWORD", "TEACHER_PASSWORD", "CLASS_PASSWORD_FILE", "TEACHER_PASSWORD_FILE"):
        env.pop(name, None)  # the hub reads the passwords from its state folder, root's alone
    os.chdir(s["STATE"])
    jupyterhub = str(Path(s["VENV"]) / "bin" / "jupyterhub")
    os.execve(jupyterhub, [jupyterhub, "-f", str(HERE / "jupyterhub_config.py")], env)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
