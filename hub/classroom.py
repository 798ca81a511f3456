"""The class hub's own parts, read by hub/jupyterhub_config.py: who may log in, each student's account and
each student's copy of the lessons.

Settings come from environment variables that hub/launch.py checks and sets (``make hub`` runs it):

ATTN_HUB_ISOLATION   ``users`` (each student a system user, the default as root) or ``none`` (one account)
ATTN_HUB_GROUP       the system group of the students' accounts (``users`` only)
ATTN_HUB_HOME_BASE   where their home folders go (``users``: useradd's base; ``none``: under the state folder)
ATTN_HUB_HANDOUT     the git repository the lessons are copied from: the course without its unreleased solutions
ATTN_HUB_BRANCH      its branch
ATTN_HUB_FOLDER      the folder of the copy in a student's home (``attention-by-hand``)
"""

from __future__ import annotations

import asyncio
import grp
import os
import pwd
import re
from pathlib import Path

from jupyterhub.authenticators.shared import SharedPasswordAuthenticator
from launch import git_env  # hub/launch.py, beside this file

# A student's name is the name of their system account: lowercase letters, digits and '-', at most 32.
NAME = re.compile(r"[a-z][a-z0-9-]{0,31}")


def setting(name: str, default: str | None = None) -> str:
    value = os.environ.get(f"ATTN_HUB_{name}", default)
    if value is None:
        raise RuntimeError(f"ATTN_HUB_{name} is not set: start the hub with `make hub` (hub/launch.py)")
    return value


class ClassAuthenticator(SharedPasswordAuthenticator):
    """JupyterHub's shared-password login (a name and the class password; the teacher, an admin, has a
    password of their own), which also refuses a name that is not a valid account name, and, as root,
    the name of a system account that is not one of the students' (``root``, ``www-data``, ...)."""

    async def authenticate(self, handler, data):
        name = self.normalize_username(data.get("username", ""))
        if not NAME.fullmatch(name):
            self.log.warning("login refused: %r is not a-z, 0-9 and '-' (starting with a letter)", name)
            return None
        if setting("ISOLATION") == "users" and not student_account_or_free(name, setting("GROUP")):
            self.log.warning("login refused: %r is a system account outside group %s", name, setting("GROUP"))
            return None
        return await super().authenticate(handler, data)


def student_account_or_free(name: str, group: str) -> bool:
    """True when no system account has this name, or the account's primary group is the students' group."""
    try:
        account = pwd.getpwnam(name)
    except KeyError:
        return True
    try:
        return account.pw_gid == grp.getgrnam(group).gr_gid
    except KeyError:
        return False


async def _run(*cmd: str, env: dict[str, str] | None = None) -> None:
    proc = await asyncio.create_subprocess_exec(
        *cmd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, **(env or {})} if env else None,
    )  # fmt: skip
    out, _ = await proc.communicate()
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {out.decode(errors='replace')[-2000:]}")


# A class logging in at once would run useradd many times at once, each locking /etc/passwd; the hub makes
# one account at a time (and retries a locked file). A first 30-student run of make bench-hub had a login
# fail with HTTP 500 whose cause was not kept; none failed since.
_ACCOUNTS = asyncio.Lock()


async def ensure_system_user(name: str, group: str, home_base: str) -> pwd.struct_passwd:
    """The student's system account: made on first login (primary group ``group``, a home of their own
    that only they can read, mode 0700), left as it is afterwards."""
    async with _ACCOUNTS:
        try:
            account = pwd.getpwnam(name)
        except KeyError:
            for attempt in range(5):  # another program may hold the lock for a moment
                try:
                    await _run("useradd", "--create-home", "--base-dir", home_base, "--gid", group,
                               "--shell", "/bin/bash", "--comment", "attention-by-hand student", name)  # fmt: skip
                    break
                except RuntimeError:
                    if attempt == 4:
                        raise
                    await asyncio.sleep(0.5)
            account = pwd.getpwnam(name)
    if account.pw_gid != grp.getgrnam(group).gr_gid:  # ClassAuthenticator refused it already; never serve it
        raise RuntimeError(f"system account {name!r} is not a student's (group {group})")
    os.chmod(account.pw_dir, 0o700)
    return account


async def copy_lessons(home: Path, user: str | None) -> None:
    """Clone the handout (the course as students get it) into ``home``/FOLDER once: on the first login. Never
    again afterwards, so a student's answers are theirs; the teacher's link (nbgitpuller) brings later changes
    into files they did not touch.
    ``user``: run git as this system user (so the copy is theirs), or None to run it as the hub's."""
    dest = home / setting("FOLDER")
    if dest.exists():
        return
    handout = setting("HANDOUT")  # the course without its unreleased worked solutions (hub/launch.py: publish)
    clone = ["git", "clone", "--quiet", "--depth", "1", "--branch", setting("BRANCH"), f"file://{handout}", str(dest)]
    if user is not None:
        clone = ["runuser", "-u", user, "--", *clone]
    await _run(*clone, env={**git_env(setting("GITCONFIG")), "HOME": str(home)})


def runtime_dir(account: pwd.struct_passwd) -> Path:
    """The student's Jupyter runtime folder: their kernels' Unix sockets (and connection files) live here.
    A short path (a socket's path is at most 107 bytes; one under a home can be longer) in a folder only
    root may write to, so no student can make another's in advance; the student's alone (0700)."""
    base = Path(setting("RUNTIME_BASE"))
    base.mkdir(mode=0o755, parents=True, exist_ok=True)
    os.chmod(base, 0o755)
    path = base / str(account.pw_uid)
    path.mkdir(mode=0o700, exist_ok=True)
    os.chown(path, account.pw_uid, account.pw_gid)
    os.chmod(path, 0o700)
    return path


async def prepare_student(spawner) -> None:
    """pre_spawn_hook: the student's account (isolation ``users``) or folder (``none``), and their copy."""
    name = spawner.user.name
    if setting("ISOLATION") == "users":
        account = await ensure_system_user(name, setting("GROUP"), setting("HOME_BASE"))
        await copy_lessons(Path(account.pw_dir), name)
        spawner.environment = {**spawner.environment, "JUPYTER_RUNTIME_DIR": str(runtime_dir(account))}
    else:
        home = Path(spawner.home_dir)
        home.mkdir(parents=True, exist_ok=True)
        await copy_lessons(home, None)
