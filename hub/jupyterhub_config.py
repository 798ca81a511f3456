# JupyterHub's configuration for a class on one machine. Start it with `make hub` (hub/launch.py checks the
# settings, says what is wrong and how to fix it, and sets the ATTN_HUB_* variables read here).
# See docs/hub.md for what each choice means for a teacher and for the students.
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from classroom import ClassAuthenticator, git_env, prepare_student, setting  # noqa: E402

c = get_config()  # noqa: F821 - JupyterHub defines it when it loads this file

state = Path(setting("STATE"))
venv = Path(setting("VENV"))
folder = setting("FOLDER")

# -- where it listens: the public side (the proxy) on IP:PORT, the rest on loopback only
c.JupyterHub.ip = setting("IP")
c.JupyterHub.port = int(setting("PORT"))
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(setting("HUB_PORT"))
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{setting('PROXY_API_PORT')}"
c.ConfigurableHTTPProxy.command = [setting("PROXY")]
c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")
if os.environ.get("ATTN_HUB_SSL_CERT"):
    c.JupyterHub.ssl_cert = os.environ["ATTN_HUB_SSL_CERT"]
    c.JupyterHub.ssl_key = setting("SSL_KEY")

# -- what it keeps: users, servers and the login cookie's key, so a restart logs nobody out
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.JupyterHub.cleanup_servers = True  # the hub stops every student's server (and its kernels) when it stops

# -- who may log in: a name and the class password; the teacher (an admin) with a password of their own
# (read from files in the hub's state, root's alone: a password is never in a command line or an environment)
c.JupyterHub.authenticator_class = ClassAuthenticator
c.ClassAuthenticator.user_password = Path(setting("CLASS_PASSWORD_FILE")).read_text().strip()
c.ClassAuthenticator.admin_password = Path(setting("TEACHER_PASSWORD_FILE")).read_text().strip()
c.ClassAuthenticator.admin_users = {setting("TEACHER")}


def _landing(handler) -> str:
    """The teacher lands on the admin page (the class's servers); a student on their own JupyterLab ("")."""
    user = handler.current_user
    return f"{handler.hub.base_url}admin" if user is not None and user.admin else ""


c.JupyterHub.default_url = _landing
students = os.environ.get("ATTN_HUB_STUDENTS", "")
if students:  # a class list: only these names (and the teacher) may log in
    c.ClassAuthenticator.allowed_users = set(students.split(","))
else:  # any name that is a valid account name, with the class password
    c.ClassAuthenticator.allow_all = True

# -- each student's server: JupyterLab from the hub's environment, on loopback, in the student's home
c.Spawner.args = setting("SERVER_ARGS").split()
if setting("ISOLATION") == "users":
    c.JupyterHub.spawner_class = "localprocess"  # as the student's own system user
    # Kernels talk to their server over Unix sockets in the student's own runtime folder (classroom.py:
    # runtime_dir), not TCP ports on loopback: a class opening a lesson at once raced for free ports
    # (make bench-hub, 30 students: a kernel died with "Address already in use"), and a socket in a
    # private folder is reachable by its student only.
    c.Spawner.args = ["--KernelManager.transport=ipc", *c.Spawner.args]
else:
    c.JupyterHub.spawner_class = "jupyterhub.spawner.SimpleLocalProcessSpawner"  # all as the hub's account
    c.SimpleLocalProcessSpawner.home_dir_template = str(Path(setting("HOME_BASE")) / "{username}")
c.Spawner.pre_spawn_hook = prepare_student
c.Spawner.cmd = [str(venv / "bin" / "jupyterhub-singleuser")]
# -- what a class of 60 on one machine needs (docs/hub.md, "How many students"): a kernel unused for
# KERNEL_IDLE_MINUTES is stopped (an open tab's too: its memory is the next student's), and a server with no
# kernel and nothing to do stops after as long (the student's next visit starts it again, files untouched);
# each program of a student may take MEMORY_PER_PROCESS at most (a huge array fails with MemoryError in that
# student's kernel instead of the machine's out-of-memory killer ending someone's); one BLAS thread per kernel
# (sixty kernels share the cores already).
idle = int(setting("KERNEL_IDLE_MINUTES")) * 60
if idle:
    c.Spawner.args += [
        f"--MappingKernelManager.cull_idle_timeout={idle}", "--MappingKernelManager.cull_interval=60",
        "--MappingKernelManager.cull_connected=True", f"--ServerApp.shutdown_no_activity_timeout={idle}",
    ]  # fmt: skip
if setting("MEMORY_PER_PROCESS") != "0":
    size = setting("MEMORY_PER_PROCESS")  # 1500M, 2G: prlimit takes bytes
    limit = int(size[:-1]) * 2 ** (20 if size.endswith("M") else 30)
    c.Spawner.cmd = [setting("PRLIMIT"), f"--data={limit}", "--", *c.Spawner.cmd]
c.Spawner.ip = "127.0.0.1"
c.Spawner.notebook_dir = "~"
c.Spawner.default_url = f"/lab/tree/{folder}/notebooks/00-start-here.ipynb"
c.Spawner.start_timeout = 600  # a class of 60 logging in at once on two cores (docs/hub.md: 5 minutes and more)
c.Spawner.http_timeout = 600
c.Spawner.environment = {
    # make lab's Jupyter settings (keys inside an output stay with the output; no news feed, no update check)
    "JUPYTER_CONFIG_PATH": setting("JUPYTER_CONFIG"),
    "JUPYTER_PATH": setting("JUPYTER_CONFIG"),
    "NBGITPULLER_DEPTH": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    **git_env(setting("GITCONFIG")),
}
