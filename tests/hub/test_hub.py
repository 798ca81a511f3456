"""The class hub of `make hub`, for real: JupyterHub, its proxy, students as system users, headless Chromium.

The tests run in file order on one hub (the module's fixture): amy logs in with the browser and moves a
slider in 02; bob logs in beside her; amy's edit survives her server's restart and the hub's; the
teacher's link brings a changed lesson without touching amy's edited one. Settings that cannot work are
refused before JupyterHub starts, with the fix.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import hubctl
import lab
import pytest
from hubctl import FOLDER, Student

pytestmark = pytest.mark.hub

LESSON = "notebooks/02-query-key-value.ipynb"
LATER = "notebooks/04-multi-head-attention.ipynb"
EDIT = "amy's answer: the query of 'it' asks for an animal"


class StudentLab:
    """What tests/ui/lab.py's page helpers need of a server (``notebook_url``), for a student's JupyterLab
    behind the hub."""

    def __init__(self, hub: hubctl.Hub, name: str):
        self.hub, self.name = hub, name

    def notebook_url(self, notebook: Path) -> str:
        return f"{self.hub.url}/user/{self.name}/lab/tree/{FOLDER}/notebooks/{Path(notebook).name}?reset"


def log_in_with_the_form(page, hub: hubctl.Hub, name: str, password: str) -> None:
    page.goto(f"{hub.url}/hub/login", wait_until="domcontentloaded")
    page.fill("#username_input", name)
    page.fill("#password_input", password)
    page.click("#login_submit")


def uid_of_server(name: str) -> list[int]:
    """Uids of the processes running ``name``'s JupyterLab server (jupyterhub-singleuser with their name)."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            env = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if "jupyterhub-singleuser" in cmd and f"JUPYTERHUB_USER={name}".encode() in env:
            found.append(proc.stat().st_uid)
    return found


def test_a_wrong_password_and_a_system_account_are_refused(hub):
    assert Student(hub, "amy").log_in("not-the-class-password") == 403
    assert Student(hub, "root").log_in() == 403, "the class password must not open a system account"
    assert Student(hub, "Amy Smith").log_in() == 403, "not an account name"
    assert Student(hub, "teacher").log_in() == 403, "the teacher logs in with their own password only"
    assert not (hub.homes / "amy").exists()


def test_a_student_logs_in_gets_a_copy_and_moves_a_slider_in_02(hub, page):
    log_in_with_the_form(page, hub, "amy", hubctl.CLASS_PASSWORD)
    page.wait_for_url("**/user/amy/lab/**", timeout=180_000)  # spawn-pending, then her JupyterLab
    copy = hub.home("amy") / FOLDER
    assert (copy / LESSON).is_file(), "no copy of the lessons in amy's home"
    assert copy.stat().st_uid == (hub.home("amy")).stat().st_uid != 0, "the copy is not amy's own"
    assert (hub.home("amy").stat().st_mode & 0o777) == 0o700, "amy's home is readable by others"
    server = StudentLab(hub, "amy")
    lab.open_notebook(page, server, Path(LESSON))
    lab.run_all(page)
    lab.wait_heatmaps_loaded(page)
    assert lab.problems(page) == []
    explorer = lab.explorers(page).first
    before = lab.heatmap_text(explorer)
    handle = lab.pick_slider(explorer).locator(".noUi-handle").first
    handle.scroll_into_view_if_needed()
    lab.move_slider(handle)
    page.wait_for_function(f"root => ({lab._JS_HEATMAP_TEXT})(root) !== {json.dumps(before)}",
                           arg=explorer.element_handle(), timeout=lab.TIMEOUT_MS)  # fmt: skip
    assert lab.heatmap_text(explorer) != before
    assert set(uid_of_server("amy")) == {hub.home("amy").stat().st_uid}, "amy's server does not run as amy"
    assert lab.outside_requests(page) == [], "the hub's pages asked another machine for something"


@pytest.fixture(scope="module")
def amy(hub):
    s = Student(hub, "amy")
    assert s.log_in() == 302
    s.start_server()
    return s


@pytest.fixture(scope="module")
def bob(hub):
    s = Student(hub, "bob")
    assert s.log_in() == 302
    s.start_server()
    return s


def test_two_students_copies_are_separate(hub, amy, bob):
    model = amy.read(LESSON)
    model["content"]["cells"][0]["source"] = EDIT
    amy.write(LESSON, {"type": "notebook", "format": "json", "content": model["content"]})
    assert EDIT in (hub.home("amy") / FOLDER / LESSON).read_text()
    assert EDIT not in json.dumps(bob.read(LESSON)["content"]), "bob sees amy's edit"
    assert bob.server_api("GET", f"contents/../amy/{FOLDER}").status_code in (403, 404)
    # the boundary: bob's programs (his kernels, his terminal) cannot read amy's files
    peek = subprocess.run(["runuser", "-u", "bob", "--", "cat", str(hub.home("amy") / FOLDER / LESSON)],
                          capture_output=True, text=True, timeout=30)  # fmt: skip
    assert peek.returncode != 0 and "Permission denied" in peek.stderr
    assert set(uid_of_server("bob")) == {hub.home("bob").stat().st_uid} != {hub.home("amy").stat().st_uid}


def test_an_edit_survives_a_server_restart(hub, amy):
    amy.stop_server()
    assert uid_of_server("amy") == []
    amy.start_server()
    assert EDIT in json.dumps(amy.read(LESSON)["content"])


def test_an_edit_survives_a_hub_restart_and_the_hub_stops_everything(hub, amy):
    left = hub.stop()
    assert left == [], f"processes of students still running after the hub stopped: {left}"
    hub.start()
    again = Student(hub, "amy")
    assert again.log_in() == 302, "the hub forgot amy"
    again.start_server()
    assert EDIT in json.dumps(again.read(LESSON)["content"])


def _teacher_changes(course: Path, rel: str, first_cell: str | None = None) -> None:
    """Append a cell to a notebook of the course (and, if given, rewrite its first cell), as nbformat writes."""
    nb = json.loads((course / rel).read_text())
    nb["cells"].append({"cell_type": "markdown", "id": "teacher", "metadata": {}, "source": ["Added by the teacher."]})
    if first_cell is not None:
        nb["cells"][0]["source"] = [first_cell]
    (course / rel).write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


def test_the_link_hands_out_a_lesson_without_overwriting_an_edited_one(hub, page):
    # the teacher changes 04, which amy never opened, and 02, which she edited: its first cell, as she did,
    # and a new cell at the end
    _teacher_changes(hub.course, LATER)
    _teacher_changes(hub.course, LESSON, first_cell="The teacher's new introduction.")
    subprocess.run(["git", "-C", str(hub.course), "commit", "--quiet", "-am", "a new cell"], check=True)
    link = hub.link("04")
    assert link.startswith(f"{hub.url}/hub/user-redirect/git-pull?")
    log_in_with_the_form(page, hub, "amy", hubctl.CLASS_PASSWORD)
    page.wait_for_url("**/user/amy/lab/**", timeout=180_000)
    page.goto(link)
    page.wait_for_url(f"**/user/amy/lab/tree/{FOLDER}/{LATER}", timeout=120_000)
    copy = hub.home("amy") / FOLDER
    assert json.loads((copy / LATER).read_text()) == json.loads((hub.course / LATER).read_text()), (
        "the link did not bring the teacher's version of a lesson amy had not touched")
    mine = json.loads((copy / LESSON).read_text())  # still a notebook after the merge
    assert "".join(mine["cells"][0]["source"]) == EDIT, "the link overwrote amy's edit"
    # where amy did not write, the teacher's change comes in (git merges; on the same lines, hers wins)
    assert "".join(mine["cells"][-1]["source"]) == "Added by the teacher."


def test_a_new_student_s_first_click_on_the_link_makes_the_copy(hub, page):
    log_in_with_the_form(page, hub, "cara", hubctl.CLASS_PASSWORD)
    page.wait_for_url("**/user/cara/lab/**", timeout=180_000)
    page.goto(hub.link("04"))
    page.wait_for_url(f"**/user/cara/lab/tree/{FOLDER}/{LATER}", timeout=120_000)
    assert "Added by the teacher." in (hub.home("cara") / FOLDER / LATER).read_text()


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"CLASS_PASSWORD": ""}, "no class password"),
        ({"CLASS_PASSWORD": "short"}, "use 8 or more"),
        ({"ISOLATION": "containers"}, "use `users`"),
        ({"ISOLATION": "none"}, "would run every student as root"),
        ({"TEACHER_PASSWORD": "too-short"}, "32 or more"),
        ({"COURSE": "/"}, "not a git repository"),
        ({"HUB_PORT": "in use"}, "is in use"),
        ({"PATH": "git only", "HUB_PROXY": "absent"}, "npm is missing"),
    ],
    ids=["no-password", "short-password", "bad-isolation", "none-as-root", "short-teacher-password", "no-course",
         "port-in-use",
         "no-npm"],
)
def test_a_bad_setting_is_refused_with_its_fix(hub, change, says, tmp_path):
    env = {**hub.env(), "HUB_PORT": str(lab._free_port())}  # hub.env() names the running hub's port
    if change.get("HUB_PORT") == "in use":
        change = {"HUB_PORT": str(hub.port)}  # the running hub's
    if change.get("HUB_PROXY") == "absent":  # no npm, so no proxy either; git is still there
        (tmp_path / "bin").mkdir()
        (tmp_path / "bin" / "git").symlink_to(shutil.which("git"))
        change = {"PATH": str(tmp_path / "bin"), "HUB_PROXY": str(tmp_path / "no-proxy")}
    out = hub.launch("check", env={**env, **change})
    assert out.returncode == 1, out
    assert says in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert out.stderr.startswith("make hub: ")


def test_every_server_of_the_hub_listens_on_loopback_only(hub, amy):
    if shutil.which("ss") is None:
        pytest.skip("no ss (Debian's iproute2) to list the listening sockets")
    ours = {hub.proc.pid, *lab._children(hub.proc.pid), *hub.processes_of_students()}
    listening = subprocess.run(["ss", "-Htlnp"], capture_output=True, text=True, check=True).stdout
    seen = 0
    for line in listening.splitlines():
        pids = {int(p) for p in re.findall(r"pid=(\d+)", line)}
        if pids & ours:
            seen += 1
            assert line.split()[3].startswith("127.0.0.1:"), f"listens beyond this machine: {line}"
    assert seen >= 4, f"expected the proxy (2 ports), the hub and amy's server, found {seen}:\n{listening}"
