"""The simulator answers as an array of the REST version it was started at
(run.sh runs this suite at the newest version, 2.36 and 2.26): it advertises
REST 1.x and 2.0 to that version, serves each endpoint, model field, query
parameter and request-body field only from the version that introduced it, and its
tables of those versions (crates/flasharray-sim/src/versions.rs) are the ones
Pure's SDK gives."""

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
TABLE = os.path.join(HERE, "..", "..", "crates", "flasharray-sim", "src", "versions.rs")


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


def _table(text, name):
    """The rows of one 4-column table of versions.rs, {(resource, METHOD, name): n}."""
    start = text.index(f"pub(crate) const {name}:")
    block = text[start:text.index("];", start)]
    # rustfmt splits a long row over several lines.
    rows = re.findall(
        r'\(\s*"([a-z0-9/_-]+)",\s*"([A-Z]+)",\s*"([a-z0-9_.]+)",\s*(\d+),?\s*\),', block)
    return {(r, m, f): int(n) for r, m, f, n in rows}


@pytest.mark.skipif(REST_VERSION != TOP_REST_VERSION,
                    reason="the table does not depend on the run's version: checked once")
def test_the_simulators_parameter_and_body_tables_are_the_sdks():
    """versions.rs lists, for every operation on a path the simulator serves, each
    query parameter and body field (nested ones as a.b) newer than the operation,
    with the first SDK client that has it."""
    with open(TABLE, encoding="utf-8") as f:
        text = f.read()
    params, body = rest_versions.operations(minor(TOP_REST_VERSION))
    assert _table(text, "PARAMETERS") == params
    assert _table(text, "BODY_FIELDS") == body


def _post(target, path, headers, body):
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    request = urllib.request.Request(
        f"https://{target}{path}", method="POST", data=json.dumps(body).encode(),
        headers={**headers, "content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, context=context, timeout=30) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def test_later_parameters_and_body_fields_are_refused(sim_target, sim_token, unique):
    """A parameter or body field newer than the run's version gets the array's 400
    naming it; at its version it is taken."""
    session = {"x-auth-token": _session(sim_target, sim_token)}
    at = minor(REST_VERSION)
    status, body = _get(sim_target, f"/api/{REST_VERSION}/hosts?destroyed=false", session)
    if at < 36:
        assert status == 400 and body["errors"][0]["context"] == "destroyed", body
    else:
        assert status == 200, body
    name = f"{unique}vv"
    tagged = {"provisioned": 1 << 20, "tags": [{"key": "k", "value": "v"}]}
    status, body = _post(sim_target, f"/api/{REST_VERSION}/volumes?names={name}", session, tagged)
    if at < 39:
        assert status == 400 and body["errors"][0]["context"] == "tags", body
        _, listed = _get(sim_target, f"/api/{REST_VERSION}/volumes?names={name}", session)
        assert "items" not in listed or not listed["items"], "nothing was created"
    else:
        assert status == 200, body
