"""Fixtures for running Pure's Ansible collection against the pxfa simulator.

run.sh starts one simulator and exports PXFA_SIM_TARGET (host:port),
PXFA_SIM_TOKEN_FILE and PXFA_ANSIBLE_VENV. Playbooks reach the array through
PUREFA_URL / PUREFA_API in their environment (the collection reads both), so the
token is never on a command line and never printed.
"""

import itertools
import os
import subprocess
import time
import warnings

import pytest
import urllib3
from pypureclient import flasharray

urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
warnings.filterwarnings("ignore", category=DeprecationWarning)

HERE = os.path.dirname(os.path.abspath(__file__))
_counter = itertools.count()


def _require_env(name):
    value = os.environ.get(name)
    if not value:
        pytest.exit(f"{name} is not set; run tests/ansible_compat/run.sh", returncode=2)
    return value


@pytest.fixture(scope="session")
def sim_target():
    return _require_env("PXFA_SIM_TARGET")


@pytest.fixture(scope="session")
def sim_token():
    with open(_require_env("PXFA_SIM_TOKEN_FILE"), encoding="utf-8") as f:
        return f.read().strip()


@pytest.fixture(scope="session")
def client(sim_target, sim_token):
    return flasharray.Client(sim_target, api_token=sim_token)


@pytest.fixture
def unique():
    """A short name prefix unique to one test, so playbooks share one array safely."""
    return f"a{next(_counter)}x{os.getpid() % 1000}"


@pytest.fixture(scope="session")
def playbook(sim_target, sim_token, tmp_path_factory):
    """Runs playbooks/NAME.yml against the simulator; fails the test with the
    playbook's output (which never holds the token) if any task fails."""
    venv = _require_env("PXFA_ANSIBLE_VENV")
    home = tmp_path_factory.mktemp("ansible-home")

    def run(name, secret_env=None, **extra_vars):
        env = dict(os.environ)
        # Secrets a playbook reads with lookup('env', ...), never on its command line.
        env.update(secret_env or {})
        env.update(
            PUREFA_URL=sim_target,
            PUREFA_API=sim_token,
            ANSIBLE_HOME=str(home),
            ANSIBLE_LOCAL_TEMP=str(home / "tmp"),
            ANSIBLE_NOCOLOR="1",
            ANSIBLE_RETRY_FILES_ENABLED="0",
            ANSIBLE_PYTHON_INTERPRETER=os.path.join(venv, "bin", "python"),
            ANSIBLE_LOCALHOST_WARNING="0",
            ANSIBLE_INVENTORY_UNPARSED_WARNING="0",
            PATH=os.path.join(venv, "bin") + os.pathsep + env.get("PATH", ""),
        )
        cmd = [os.path.join(venv, "bin", "ansible-playbook"),
               os.path.join(HERE, "playbooks", f"{name}.yml")]
        for key, value in extra_vars.items():
            cmd += ["-e", f"{key}={value}"]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        output = proc.stdout + proc.stderr
        assert sim_token not in output, "the token leaked into playbook output"
        for value in (secret_env or {}).values():
            assert value not in output, "a secret leaked into playbook output"
        assert proc.returncode == 0, f"playbook {name} failed:\n{output}"
        return output

    return run


@pytest.fixture(scope="session")
def second_sim(tmp_path_factory):
    """A second simulator (array `sim-b`), for array connections: its target
    (host:port) and token. Started from the same sim_serve binary; the token stays
    in a 0600 file and in memory."""
    work = tmp_path_factory.mktemp("second-sim")
    token_file, url_file = work / "token", work / "url"
    proc = subprocess.Popen(
        [_require_env("PXFA_SIM_BIN"), "--port", "0", "--token-file", str(token_file),
         "--url-file", str(url_file), "--array-name", "sim-b", *_version_args()],
        stdout=subprocess.DEVNULL)
    try:
        for _ in range(300):
            if url_file.exists() and url_file.read_text():
                break
            assert proc.poll() is None, "the second simulator exited early"
            time.sleep(0.1)
        target = url_file.read_text().removeprefix("https://")
        yield target, token_file.read_text().strip()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# The REST version the simulator under test answers as (run.sh sets it for the run
# at an older version); the simulators tests start answer as the same version.
REST_VERSION = os.environ.get("PXFA_SIM_REST_VERSION")


def _version_args():
    return ["--rest-version", REST_VERSION] if REST_VERSION else []


def _start_sim(work, *extra):
    """A simulator from the same sim_serve binary: (process, target host:port,
    token), the token read from its 0600 file."""
    token_file, url_file = work / "token", work / "url"
    extra = (*extra, *_version_args())
    proc = subprocess.Popen(
        [_require_env("PXFA_SIM_BIN"), "--port", "0", "--token-file", str(token_file),
         "--url-file", str(url_file), *extra],
        stdout=subprocess.DEVNULL)
    for _ in range(300):
        if url_file.exists() and url_file.read_text():
            break
        if proc.poll() is not None:
            raise AssertionError("a simulator exited early")
        time.sleep(0.1)
    return proc, url_file.read_text().removeprefix("https://"), token_file.read_text().strip()


@pytest.fixture(scope="session")
def pureuser_sim(tmp_path_factory):
    """A simulator whose pureuser has a password (as every array's has), given in
    a 0600 file: its target, token and that password."""
    work = tmp_path_factory.mktemp("pureuser-sim")
    password = f"pw-{os.getpid()}-not-secret"
    pw_file = work / "pw"
    pw_file.touch(mode=0o600)
    pw_file.write_text(password + "\n")
    proc, target, token = _start_sim(work, "--admin-password-file", str(pw_file))
    try:
        yield target, token, password
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def items(response):
    """The items of an SDK response, failing with the array's errors otherwise."""
    assert response.status_code == 200, getattr(response, "errors", response)
    return list(response.items)
