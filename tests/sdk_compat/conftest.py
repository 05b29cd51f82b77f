"""Fixtures for running Pure's Python SDK against the pxfa FlashArray simulator.

run.sh starts one simulator and exports PXFA_SIM_TARGET (host:port) and
PXFA_SIM_TOKEN_FILE. Tests that need HTTP faults start their own simulator from
PXFA_SIM_BIN with the `spawn_sim` fixture. Tokens are read from files and never
printed.
"""

import itertools
import os
import subprocess
import tempfile
import time
import warnings

import pytest
import urllib3
from pypureclient import flasharray

# The simulator's certificate is self-signed and the SDK does not verify by default.
urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
warnings.filterwarnings("ignore", category=DeprecationWarning)

_counter = itertools.count()

# The REST version the simulator under test answers as (run.sh sets it for the
# runs at older versions; the newest otherwise).
TOP_REST_VERSION = "2.39"
REST_VERSION = os.environ.get("PXFA_SIM_REST_VERSION", TOP_REST_VERSION)


def minor(version):
    return int(version.split(".")[1])


def since(version):
    """Skips a test of what REST `version` introduced in runs at older versions:
    the SDK's client for those versions has no such method or field."""
    return pytest.mark.skipif(
        minor(REST_VERSION) < minor(version),
        reason=f"REST {version}+; this run is at {REST_VERSION}")


def _require_env(name):
    value = os.environ.get(name)
    if not value:
        pytest.exit(f"{name} is not set; run tests/sdk_compat/run.sh", returncode=2)
    return value


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read().strip()


def target_of(url):
    """`https://127.0.0.1:PORT` -> `127.0.0.1:PORT` (the SDK adds https itself)."""
    assert url.startswith("https://"), url
    return url[len("https://"):]


@pytest.fixture(scope="session")
def sim_target():
    return _require_env("PXFA_SIM_TARGET")


@pytest.fixture(scope="session")
def sim_token():
    return _read(_require_env("PXFA_SIM_TOKEN_FILE"))


@pytest.fixture(scope="session")
def client(sim_target, sim_token):
    return flasharray.Client(sim_target, api_token=sim_token)


@pytest.fixture
def unique():
    """A short name prefix unique to one test, so tests share one array safely."""
    return f"t{next(_counter)}x{os.getpid() % 1000}"


@pytest.fixture
def spawn_sim():
    """Starts a private simulator (`--faults SPEC`, `--array-name NAME`); yields
    a function returning (target, token)."""
    binary = _require_env("PXFA_SIM_BIN")
    started = []

    def spawn(faults="", array_name=None):
        workdir = tempfile.mkdtemp(prefix="pxfa-sim-")
        token_file = os.path.join(workdir, "token")
        url_file = os.path.join(workdir, "url")
        cmd = [binary, "--port", "0", "--token-file", token_file, "--url-file", url_file]
        if faults:
            cmd += ["--faults", faults]
        if array_name:
            cmd += ["--array-name", array_name]
        if REST_VERSION != TOP_REST_VERSION:
            cmd += ["--rest-version", REST_VERSION]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        started.append(proc)
        deadline = time.monotonic() + 30
        while not os.path.exists(url_file) or not _read(url_file):
            if proc.poll() is not None:
                raise RuntimeError(f"simulator exited: {proc.stderr.read().decode()}")
            if time.monotonic() > deadline:
                raise RuntimeError("simulator did not start within 30 s")
            time.sleep(0.05)
        return target_of(_read(url_file)), _read(token_file)

    yield spawn
    for proc in started:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
