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
course = setting("COURSE")
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
c.JupyterHub.authenticator_class = ClassAuthenticator
c.ClassAuthenticator.user_password = setting("CLASS_PASSWORD")
c.ClassAuthenticator.admin_password = setting("TEACHER_PASSWORD")
c.ClassAuthenticator.admin_users = {setting("TEACHER")}
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
c.Spawner.ip = "127.0.0.1"
c.Spawner.notebook_dir = "~"
c.Spawner.default_url = f"/lab/tree/{folder}/notebooks/00-start-here.ipynb"
c.Spawner.start_timeout = 180  # a class logging in at once on two cores
c.Spawner.http_timeout = 180
c.Spawner.environment = {
    # make lab's Jupyter settings (keys inside an output stay with the output; no news feed, no update check)
    "JUPYTER_CONFIG_PATH": setting("JUPYTER_CONFIG"),
    "JUPYTER_PATH": setting("JUPYTER_CONFIG"),
    "NBGITPULLER_DEPTH": "1",
    **git_env(setting("GITCONFIG")),
}
