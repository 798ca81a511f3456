"""The class hub of `make hub`, for real: JupyterHub, its proxy, students as system users, headless Chromium.

The tests run in file order on one hub (the module's fixture), started with `make hub` in a terminal as
docs/hub.md says (the class password typed at its prompt): amy logs in with the browser and moves a slider in
02; bob logs in beside her; amy's edit survives her server's restart and the hub's; the teacher's link brings a
changed lesson without touching amy's edited one; the teacher lands on the admin page; no password is in sight
of a student; a lesson's worked solutions reach the students when the teacher releases them, and only that
lesson's. Settings that cannot work are refused before JupyterHub starts, with the fix. Last, the end of the
term: every home archived, then `make hub-clean` leaves nothing of the hub behind.
"""

from __future__ import annotations

import grp
import json
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import hubctl
import lab
import pytest
from hubctl import FOLDER, Student

pytestmark = pytest.mark.hub

LESSON = "notebooks/02-query-key-value.ipynb"
LATER = "notebooks/04-multi-head-attention.ipynb"
SOLUTION = "notebooks/solutions/02-query-key-value-solutions.ipynb"
NOT_RELEASED = "notebooks/solutions/03-softmax-overflow-solutions.ipynb"
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
    # JupyterLab asks a new user "Would you like to get notified about official Jupyter news?" unless told
    # (jupyter-config/labconfig): by now (the lesson run) its question would be on screen
    assert page.get_by_text("official Jupyter news").count() == 0, "a student was asked about Jupyter's news"
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
        ({"CLASS_PASSWORD": "", "HUB_STATE": "new"}, "no class password"),
        ({"CLASS_PASSWORD": "short"}, "use 8 or more"),
        ({"CLASS_PASSWORD_FILE": "readable by all"}, "can be read by other accounts"),
        ({"CLASS_PASSWORD_FILE": "absent"}, "no such file"),
        ({"ISOLATION": "containers"}, "use `users`"),
        ({"ISOLATION": "none"}, "would run every student as root"),
        ({"TEACHER_PASSWORD": "too-short"}, "32 or more"),
        ({"COURSE": "/"}, "not a git repository"),
        ({"HUB_PORT": "in use"}, "is in use"),
        ({"PATH": "git only", "HUB_PROXY": "absent"}, "npm is missing"),
    ],
    ids=["no-password", "short-password", "password-file-open-to-all", "no-password-file", "bad-isolation",
         "none-as-root", "short-teacher-password", "no-course", "port-in-use", "no-npm"],
)
def test_a_bad_setting_is_refused_with_its_fix(hub, change, says, tmp_path):
    env = {**hub.env(), "HUB_PORT": str(lab._free_port())}  # hub.env() names the running hub's port
    if change.get("HUB_PORT") == "in use":
        change = {"HUB_PORT": str(hub.port)}  # the running hub's
    if change.get("HUB_STATE") == "new":  # a first start: no class password kept from an earlier one
        change = {**change, "HUB_STATE": str(tmp_path / "state")}
    if change.get("CLASS_PASSWORD_FILE") == "readable by all":
        (tmp_path / "pw").write_text("a-long-class-password\n")
        (tmp_path / "pw").chmod(0o644)
        change = {"CLASS_PASSWORD_FILE": str(tmp_path / "pw")}
    if change.get("CLASS_PASSWORD_FILE") == "absent":
        change = {"CLASS_PASSWORD_FILE": str(tmp_path / "absent")}
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
    ours = {hub.proc.pid, *hubctl.descendants(hub.proc.pid), *hub.processes_of_students()}
    listening = subprocess.run(["ss", "-Htlnp"], capture_output=True, text=True, check=True).stdout
    seen = 0
    for line in listening.splitlines():
        pids = {int(p) for p in re.findall(r"pid=(\d+)", line)}
        if pids & ours:
            seen += 1
            assert line.split()[3].startswith("127.0.0.1:"), f"listens beyond this machine: {line}"
    assert seen >= 4, f"expected the proxy (2 ports), the hub and amy's server, found {seen}:\n{listening}"


def test_the_teacher_lands_on_the_admin_page(hub, page):
    log_in_with_the_form(page, hub, "teacher", hub.teacher_password)
    page.wait_for_url("**/hub/admin**", timeout=60_000)
    page.get_by_text("amy", exact=True).first.wait_for(timeout=30_000)  # the class's list, amy on it


def test_no_password_in_sight_of_a_student(hub, amy, bob):
    """As docs/hub.md starts it, neither password is in any command line or environment a student (or an
    account with no rights) can read, while the hub started or now, nor in any file a student can read."""
    secrets = [hubctl.CLASS_PASSWORD, hub.teacher_password]
    assert len(secrets[1]) >= 32
    starting = hub.seen_while_starting
    assert starting["found"] == [], f"a password in sight while the hub started: {starting['found']}"
    # the watcher could see what it looks for: make's and JupyterHub's command lines (a password given there
    # would have been in them)
    assert any(p.startswith("make ") and " hub" in p for p in starting["cmdlines"]), starting["cmdlines"][:20]
    assert any("jupyterhub -f" in p for p in starting["cmdlines"])
    now = hubctl.finish(hubctl.as_student_in_background("amy", str(hubctl.REPO / "tests" / "hub" / "peek.py"),
                                                        stdin="\n".join(secrets) + "\n\n"))  # fmt: skip
    assert now["found"] == [], f"a password in sight of amy: {now['found']}"
    assert now["environs"] >= 2, "amy could read the environment of her own server and kernel, no more"
    assert any("jupyterhub-singleuser" in p for p in now["cmdlines"])
    # files: every file amy can read where the hub, its students and the teacher's checkout keep anything
    # (the installed environments excepted: made before the hub had a password)
    places = ["/etc", "/run", "/var/log", "/var/tmp", "/var/backups", "/dev/shm", "/home", "/srv", str(hub.tmp),
              str(hubctl.REPO)]  # fmt: skip
    grep = hubctl.as_student("amy", "grep", "-rlsF", "--exclude-dir=.venv", "--exclude-dir=.venv-lowest",
                             "--exclude-dir=.git", "-f", "-", *[p for p in places if Path(p).exists()],
                             stdin="\n".join(secrets) + "\n")  # fmt: skip
    # (grep exits 2 when it met files it may not read, 1 when it found nothing in the rest, 0 on a match)
    assert grep.returncode in (1, 2) and grep.stdout == "", f"a password in a file amy can read:\n{grep.stdout}"
    # the same search finds a file amy can read that holds it (the search works)
    probe = hub.home("amy") / "probe.txt"
    probe.write_text(f"x {hubctl.CLASS_PASSWORD} y\n")
    shutil.chown(probe, "amy")
    try:
        found = hubctl.as_student("amy", "grep", "-rlsF", "-f", "-", str(hub.home("amy")), stdin=secrets[0] + "\n")
        assert found.stdout.strip() == str(probe)
    finally:
        probe.unlink()


def _readable_by(name: str, path: Path) -> bool:
    return hubctl.as_student(name, "cat", str(path)).returncode == 0


def _in_handout(hub: hubctl.Hub, name: str, rel: str) -> bool:
    """Whether the handout (what students copy) holds the course's version of ``rel``, as ``name`` can see."""
    blob = subprocess.run(["git", "-C", str(hub.course), "rev-parse", f"HEAD:{rel}"], capture_output=True, text=True,
                          check=True).stdout.strip()  # fmt: skip
    return hubctl.as_student(name, "git", f"--git-dir={hub.handout}", "cat-file", "-e", blob).returncode == 0


def test_solutions_reach_the_students_when_the_teacher_releases_them(hub, amy, bob):
    course_solution = hub.course / SOLUTION
    assert course_solution.is_file() and (hub.course / NOT_RELEASED).is_file()
    copy = hub.home("amy") / FOLDER
    # before: not in amy's copy, not in what students copy, not readable in the course or this checkout
    assert not (copy / "notebooks" / "solutions").exists(), "a student's copy has the worked solutions"
    for path in (course_solution, hubctl.REPO / SOLUTION):
        assert not _readable_by("amy", path), f"amy can read {path}"
    assert not _in_handout(hub, "amy", SOLUTION)
    clone = hubctl.as_student("amy", "git", "clone", "--quiet", f"file://{hub.course}", "/tmp/amy-course-clone")
    assert clone.returncode != 0, "amy could clone the teacher's course, solutions included"
    # a release needs a lesson, one that has solutions
    refused = hub.make("hub-release")
    assert refused.returncode != 0 and "which lesson?" in refused.stderr, refused
    refused = hub.make("hub-release", "LESSON=00")
    assert refused.returncode != 0 and "no worked solutions" in refused.stderr, refused
    copies = [p.pw_name for p in hubctl.accounts(hub.group) if (Path(p.pw_dir) / FOLDER).is_dir()]
    assert {"amy", "bob"} <= set(copies)
    out = hub.make("hub-release", "LESSON=02")
    assert out.returncode == 0, out.stderr
    assert "02-query-key-value-solutions.ipynb" in out.stdout and f"copies of {len(copies)} students" in out.stdout
    # after: in every student's copy, theirs, readable by them; 03's nowhere they can read
    for name in copies:
        mine = hub.home(name) / FOLDER / SOLUTION
        assert mine.is_file() and mine.stat().st_uid == hub.home(name).stat().st_uid
        assert _readable_by(name, mine)
        assert json.loads(mine.read_text()) == json.loads(course_solution.read_text())
        assert sorted(p.name for p in mine.parent.iterdir()) == [mine.name], "more than 02's solutions"
        assert not _readable_by(name, hub.course / NOT_RELEASED)
    assert _in_handout(hub, "amy", SOLUTION) and not _in_handout(hub, "amy", NOT_RELEASED)
    assert EDIT in (copy / LESSON).read_text(), "the release overwrote amy's edit"
    # a student who logs in for the first time after the release gets it too, and not 03's
    dan = Student(hub, "dan")
    assert dan.log_in() == 302
    dan.start_server()
    assert (hub.home("dan") / FOLDER / SOLUTION).is_file()
    assert not (hub.home("dan") / FOLDER / NOT_RELEASED).exists()


def test_the_end_of_term_archives_every_home_then_leaves_nothing(hub, amy, tmp_path):
    """Last: make hub-archive, then make hub-clean (as docs/hub.md says) remove every account the hub made,
    the teacher's too, their homes, the group, the runtime folders, the handout and the hub's state."""
    teacher = Student(hub, "teacher")
    assert teacher.log_in(hub.teacher_password) == 302
    teacher.start_server()  # the teacher's own JupyterLab: a system account of the hub too
    users = {p.pw_name: p for p in hubctl.accounts(hub.group)}
    assert {"amy", "bob", "teacher"} <= set(users), set(users)
    refused = hub.make("hub-clean", "CONFIRM=yes")
    assert refused.returncode != 0 and "the hub is running" in refused.stderr, refused
    assert hub.stop() == []
    archive = tmp_path / "term.tar.gz"
    out = hub.make("hub-archive", f"ARCHIVE={archive}")
    assert out.returncode == 0, out.stderr
    assert (archive.stat().st_mode & 0o777) == 0o600, "the archive holds every student's work: root's alone"
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        edited = tar.extractfile(str(hub.home("amy") / FOLDER / LESSON).lstrip("/"))
        assert EDIT in edited.read().decode(), "amy's edit is not in the archive"
    assert any(n.endswith(f"teacher/{FOLDER}/{LESSON}") for n in names)
    unasked = hub.make("hub-clean")  # no terminal to ask in, no CONFIRM=yes: nothing removed
    assert unasked.returncode != 0 and "CONFIRM=yes" in unasked.stderr
    assert set(users) <= {p.pw_name for p in hubctl.accounts(hub.group)}
    out = hub.make("hub-clean", "CONFIRM=yes")
    assert out.returncode == 0, out.stderr
    for name in users:
        assert f"account {name} " in out.stdout, out.stdout
    # nothing left: no account of the group, no group, no home, no runtime folder, no handout, no state
    assert hubctl.accounts(hub.group) == []
    try:
        grp.getgrnam(hub.group)
        raise AssertionError(f"group {hub.group} is still there")
    except KeyError:
        pass
    for p in users.values():
        assert not Path(p.pw_dir).exists(), f"{p.pw_dir} is still there"
        assert not (Path(hub.runtime_base) / str(p.pw_uid)).exists()
        assert subprocess.run(["id", p.pw_name], capture_output=True).returncode != 0
    assert not hub.state.exists() and not hub.handout.exists()
    assert list(hub.homes.iterdir()) == []
    again = hub.make("hub-clean", "CONFIRM=yes")
    assert again.returncode == 0 and "Nothing to remove" in again.stdout
