"""The class hub's files, checked without starting it (make test-hub starts a real one, as root):
its defaults, its link, and the Kubernetes setup of docs/hub.md as far as this machine can check it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "hub"))

import launch  # noqa: E402 - hub/launch.py

K8S = yaml.safe_load((ROOT / "hub" / "k8s" / "config.yaml").read_text(encoding="utf-8"))
GUIDE = (ROOT / "docs" / "hub.md").read_text(encoding="utf-8")


def _course(tmp_path: Path) -> Path:
    """A course repository on branch ``term``, with this checkout's notebooks' and worked solutions' names (a
    clone may be on no branch, as CI's can be)."""
    course = tmp_path / "course"
    (course / "notebooks" / "solutions").mkdir(parents=True)
    for nb in [*(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "notebooks" / "solutions").glob("*.ipynb")]:
        (course / nb.relative_to(ROOT)).write_text(f'{{"name": "{nb.name}"}}')
    git = ["git", "-C", str(course), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(["git", "init", "--quiet", "--initial-branch=term", str(course)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "--quiet", "-m", "lessons"], check=True)
    return course


def _env(tmp_path: Path) -> dict[str, str]:
    proxy = tmp_path / "configurable-http-proxy"
    proxy.touch()
    return {"CLASS_PASSWORD": "a-class-password", "ISOLATION": "none", "HUB_STATE": str(tmp_path / "state"),
            "HUB_HANDOUT": str(tmp_path / "handout"), "HUB_PROXY": str(proxy), "PATH": os.environ["PATH"],
            "COURSE": str(_course(tmp_path))}  # fmt: skip


@pytest.fixture
def trial(tmp_path) -> dict[str, str]:
    """The settings of a hub with every default but the password and the course (ISOLATION=none: no root)."""
    return launch.settings(_env(tmp_path), serving=False)


def test_by_default_the_hub_serves_this_machine_only(trial):
    assert trial["IP"] == "127.0.0.1"
    assert trial["FOLDER"] == "attention-by-hand" and trial["BRANCH"] == "term"
    assert (Path(trial["STATE"]).stat().st_mode & 0o777) == 0o700, "the hub's state must be the hub's alone"


def test_the_teacher_s_password_is_made_once_readable_by_the_hub_alone(tmp_path):
    env = _free_ports(_env(tmp_path))
    path = Path(launch.settings(env)["TEACHER_PASSWORD_FILE"])
    first = path.read_text().strip()
    assert len(first) >= 32 and (path.stat().st_mode & 0o777) == 0o600
    launch.settings(env)
    assert path.read_text().strip() == first, "a restart must keep the teacher's password"


def _free_ports(env: dict[str, str]) -> dict[str, str]:
    import socket

    ports = []
    for _ in range(3):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(str(s.getsockname()[1]))
    return {**env, "HUB_PORT": ports[0], "HUB_API_PORT": ports[1], "HUB_PROXY_API_PORT": ports[2]}


def test_passwords_come_from_root_only_files_and_never_reach_jupyterhub_s_environment(tmp_path):
    env = _free_ports({k: v for k, v in _env(tmp_path).items() if k != "CLASS_PASSWORD"})
    with pytest.raises(launch.Problem, match="no class password"):  # no terminal here to ask in
        launch.settings(env)
    given = tmp_path / "class-password.txt"
    given.write_text("open-to-all-password\n")
    given.chmod(0o644)
    with pytest.raises(launch.Problem, match="can be read by other accounts"):
        launch.settings({**env, "CLASS_PASSWORD_FILE": str(given)})
    given.chmod(0o600)
    s = launch.settings({**env, "CLASS_PASSWORD_FILE": str(given)})
    kept = Path(s["CLASS_PASSWORD_FILE"])
    assert kept.read_text().strip() == "open-to-all-password" and (kept.stat().st_mode & 0o777) == 0o600
    teacher = Path(s["TEACHER_PASSWORD_FILE"]).read_text().strip()
    for secret in ("open-to-all-password", teacher):  # what becomes JupyterHub's environment: file names only
        assert not any(secret in value for value in s.values())
    assert launch.settings(env)["CLASS_PASSWORD_FILE"] == str(kept), "the next start uses the kept password"


def test_a_password_on_make_s_command_line_is_refused():
    out = subprocess.run(["make", "-n", "-C", str(ROOT), "hub", "CLASS_PASSWORD=visible-in-ps"], capture_output=True,
                         text=True)  # fmt: skip
    assert out.returncode != 0 and "can be read by every account" in out.stderr, out
    assert launch.REPO / "hub" / "launch.py" and "launch.py" not in out.stdout, "make hub ran"


def test_the_handout_leaves_out_the_solutions_until_a_lesson_s_are_released(trial):
    handout = Path(trial["HANDOUT"])

    def files(ref: str = trial["BRANCH"]) -> list[str]:
        out = subprocess.run(["git", f"--git-dir={handout}", "ls-tree", "-r", "--name-only", ref],
                             capture_output=True, text=True, check=True)  # fmt: skip
        return out.stdout.split()

    first = launch.publish(trial)
    assert "notebooks/02-query-key-value.ipynb" in files()
    assert not [f for f in files() if f.startswith("notebooks/solutions/")]
    assert launch.publish(trial) == first, "nothing changed: no new commit"
    (Path(trial["STATE"]) / "released").write_text("02\n")
    second = launch.publish(trial)
    assert [f for f in files() if f.startswith("notebooks/solutions/")] == [
        "notebooks/solutions/02-query-key-value-solutions.ipynb"]
    parent = subprocess.run(["git", f"--git-dir={handout}", "rev-parse", f"{second}^"], capture_output=True,
                            text=True, check=True).stdout.strip()  # fmt: skip
    assert parent == first, "a student's copy merges the release like any new commit of the course"
    with pytest.raises(launch.Problem, match="no worked solutions"):
        launch.release("00", trial)


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_jupyter_s_news_question_is_never_asked(app, tmp_path):
    """JupyterLab and Notebook 7 ask every new user "Would you like to get notified about official Jupyter
    news?" unless the setting fetchNews says; with make lab's settings (jupyter-config/) it says never."""
    import time

    import requests

    port = _free_ports({})["HUB_PORT"]
    config = str(ROOT / "jupyter-config")
    env = {**os.environ, "JUPYTER_CONFIG_PATH": config, "JUPYTER_PATH": config}
    cmd = [sys.executable, "-m", "jupyter", app, "--no-browser", f"--ServerApp.port={port}",
           "--IdentityProvider.token=t", f"--ServerApp.root_dir={tmp_path}",
           *(["--allow-root"] if os.geteuid() == 0 else [])]
    server = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/lab/api/settings/@jupyterlab/apputils-extension:notification"
        deadline, answer = time.monotonic() + 120, None
        while answer is None and time.monotonic() < deadline and server.poll() is None:
            try:
                answer = requests.get(url, headers={"Authorization": "token t"}, timeout=5).json()
            except (requests.RequestException, ValueError):
                time.sleep(0.25)  # polling while the server starts, not an assertion
        assert answer is not None, f"jupyter {app} did not answer"
        assert answer["schema"]["properties"]["fetchNews"]["default"] == "false"
        assert answer["schema"]["properties"]["checkForUpdates"]["default"] is False
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_lesson_s_link_opens_that_lesson_in_the_student_s_copy(trial):
    link = launch.link("02", trial)
    url = urllib.parse.urlsplit(link)
    assert (url.scheme, url.netloc, url.path) == ("http", "127.0.0.1:8000", "/hub/user-redirect/git-pull")
    query = dict(urllib.parse.parse_qsl(url.query))
    assert query["targetpath"] == trial["FOLDER"]
    assert query["repo"] == f"file://{trial['HANDOUT']}", "students copy the handout, not the teacher's course"
    assert query["urlpath"] == f"lab/tree/{trial['FOLDER']}/notebooks/02-query-key-value.ipynb"
    assert (ROOT / "notebooks" / "02-query-key-value.ipynb").is_file()
    with pytest.raises(launch.Problem, match="notebooks match"):
        launch.link("99", trial)


def test_kubernetes_values_use_the_same_login_folder_and_first_lesson():
    assert K8S["hub"]["config"]["JupyterHub"]["authenticator_class"] == "shared-password"
    single = K8S["singleuser"]
    folder, lesson = re.fullmatch(r"/lab/tree/([^/]+)/(notebooks/[^/]+\.ipynb)", single["defaultUrl"]).groups()
    assert folder == launch.FOLDER and (ROOT / lesson).is_file()
    clone = single["lifecycleHooks"]["postStart"]["exec"]["command"][-1]
    assert f"test -d {folder} ||" in clone and clone.endswith(f" {folder}"), "the copy is made once, in the same folder"


def test_kubernetes_memory_request_is_the_measured_memory_per_student():
    memory = K8S["singleuser"]["memory"]
    guarantee = re.fullmatch(r"(\d+)Mi", str(memory["guarantee"]))
    assert guarantee, f"guarantee {memory['guarantee']!r}: a number of MB, from make bench-hub"
    measured = re.search(r"memory per student: (\d+) MB", GUIDE, re.I)
    assert measured, "docs/hub.md states the memory per student that make bench-hub measured"
    assert int(guarantee.group(1)) == int(measured.group(1))
    limit = re.fullmatch(r"(\d+)([MG])i", str(memory["limit"]))
    assert int(limit.group(1)) * (1024 if limit.group(2) == "G" else 1) >= 2 * int(guarantee.group(1))


def test_kubernetes_stops_idle_kernels_as_make_hub_does(trial):
    args = dict(a.removeprefix("--").split("=", 1) for a in K8S["singleuser"]["cmd"][1:])
    assert int(args["MappingKernelManager.cull_idle_timeout"]) == int(trial["KERNEL_IDLE_MINUTES"]) * 60
    assert args["MappingKernelManager.cull_connected"] == "True"
    assert K8S["singleuser"]["extraEnv"]["OPENBLAS_NUM_THREADS"] == "1"


def test_the_students_image_is_built_from_environment_yml_and_copies_what_exists():
    dockerfile = (ROOT / "hub" / "k8s" / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"env update .*--file \S*environment\.yml", dockerfile)
    for line in re.findall(r"^COPY (.+)$", dockerfile, re.M):
        sources = [w for w in line.split()[:-1] if not w.startswith("--")]
        for src in sources:
            assert (ROOT / src).exists(), f"the Dockerfile copies {src}, which does not exist"
    env_yml = (ROOT / "environment.yml").read_text(encoding="utf-8")
    assert "jupyterhub>=" in env_yml and "nbgitpuller>=" in env_yml, "the image needs both for the hub and the link"


def test_every_folder_of_helpers_is_a_package_that_setuptools_installs():
    """A folder under helpers/ missing from pyproject.toml's packages (data/ was) made every install print a
    setuptools warning box, make hub's and make lab's first run included: setuptools finds them all now."""
    import tomllib
    from setuptools import find_namespace_packages

    tool = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    find = tool["setuptools"]["packages"]["find"]
    found = set(find_namespace_packages(where=str(ROOT), include=find["include"], exclude=find.get("exclude", ())))
    folders = {".".join(p.relative_to(ROOT).parts) for p in (ROOT / "helpers").rglob("*")
               if p.is_dir() and "__pycache__" not in p.parts}  # fmt: skip
    assert {"helpers", "helpers.data"} | folders == found, "a folder of helpers/ is not installed, or more is"

