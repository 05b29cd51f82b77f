"""The simulator answers as an array of the REST version it was started at
(run.sh runs this suite at the newest version, 2.36 and 2.26): it advertises
REST 1.x and 2.0 to that version, serves each endpoint and model field only from
the version that introduced it, and its table of those versions
(crates/flasharray-mock/src/sim/versions.rs) is the one Pure's SDK gives."""

import json
import os
import re
import ssl
import urllib.error
import urllib.request

import pytest

import rest_versions
from conftest import REST_VERSION, TOP_REST_VERSION, minor

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "..", "..", "crates", "flasharray-mock", "src", "sim", "versions.rs")


def _get(target, path, headers=None):
    """(status, JSON body) of a GET, certificate unchecked (self-signed)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    request = urllib.request.Request(f"https://{target}{path}", headers=headers or {})
    try:
        with urllib.request.urlopen(request, context=context, timeout=30) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def _session(target, token):
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    request = urllib.request.Request(
        f"https://{target}/api/2.0/login", method="POST", headers={"api-token": token})
    with urllib.request.urlopen(request, context=context, timeout=30) as r:
        return r.headers["x-auth-token"]


def test_advertises_1x_and_2_0_to_its_version(sim_target, client):
    status, body = _get(sim_target, "/api/api_version")
    assert status == 200
    top = minor(REST_VERSION)
    assert body["version"] == ["1.17", "1.18", "1.19"] + [f"2.{n}" for n in range(top + 1)]
    # The SDK picked its own client for that version.
    assert client.get_rest_version() == REST_VERSION
    assert type(client).__module__.endswith(f"FA_2_{top}.client")


def test_a_later_version_or_path_is_not_found(sim_target, sim_token):
    session = {"x-auth-token": _session(sim_target, sim_token)}
    later = f"2.{minor(REST_VERSION) + 1}"
    status, body = _get(sim_target, f"/api/{later}/volumes", session)
    assert status == 404 and body["errors"][0]["message"] == "Not found."
    # A path of a later version, asked at this version.
    for path, since in [("realms", "2.36"), ("volumes/batch", "2.32"), ("pods/tags", "2.39")]:
        status, _ = _get(sim_target, f"/api/{REST_VERSION}/{path}", session)
        assert (status == 404) == (minor(REST_VERSION) < minor(since)), (path, status)


def test_fields_arrive_with_their_version(sim_target, sim_token, client, unique):
    session = {"x-auth-token": _session(sim_target, sim_token)}
    status, body = _get(sim_target, f"/api/{REST_VERSION}/hosts", session)
    assert status == 200
    status, arrays = _get(sim_target, f"/api/{REST_VERSION}/arrays", session)
    (array,) = arrays["items"]
    assert ("context" in array) == (minor(REST_VERSION) >= 38)
    assert ("time_zone" in array) == (minor(REST_VERSION) >= 26)
    assert "eradication_config" in array  # 2.6


def test_the_simulators_table_is_the_sdks():
    """versions.rs lists, for every endpoint after 2.0 and every field newer than
    its endpoint (for the simulator's models), the first SDK client that has it."""
    with open(TABLE, encoding="utf-8") as f:
        text = f.read()
    endpoints = {p: int(n) for p, n in re.findall(r'^\s+\("([a-z0-9/_-]+)", (\d+)\),$', text, re.M)}
    fields = {(r, f): int(n) for r, f, n in
              re.findall(r'^\s+\("([a-z0-9/_-]+)", "([a-z_]+)", (\d+)\),$', text, re.M)}
    top = minor(TOP_REST_VERSION)
    sdk = rest_versions.endpoints(top)
    assert endpoints == {p: n for p, n in sdk.items() if n > 0}
    sdk_fields = rest_versions.fields(top)
    want = {}
    for resource, model in rest_versions.MODELS.items():
        for field, n in sdk_fields[model].items():
            if n > sdk[resource]:
                want[(resource, field)] = n
    assert fields == want
