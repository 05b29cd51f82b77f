"""Pure's SDK logs in to the simulator with an API client (OAuth2), unchanged.

An admin (the session client, API token) registers an API client with a fresh RSA
public key and enables it; then `flasharray.Client(target, client_id=..., key_id=...,
issuer=..., username=..., private_key_file=...)` exchanges an ID token for an access
token at /oauth2/1.0/token and sends `Authorization: Bearer` on every call. Keys are
made here and live in pytest's tmp_path; nothing secret is printed.
"""

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from pypureclient import flasharray
from pypureclient.exceptions import PureError
from pypureclient.responses import ErrorResponse, ValidResponse

MIB = 1024 * 1024
PASSWORD = "correct horse battery"


def ok(resp):
    assert isinstance(resp, ValidResponse), getattr(resp, "errors", resp)
    return list(resp.items)


def done(resp):
    """A DELETE's answer: valid, no items."""
    assert isinstance(resp, ValidResponse), getattr(resp, "errors", resp)


def key_pair(tmp_path, name, password=None):
    """A 2048-bit RSA key: the private key's file (encrypted PKCS#8 when a password
    is given) and the public key's PEM text."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    encryption = (serialization.BestAvailableEncryption(password.encode())
                  if password else serialization.NoEncryption())
    path = tmp_path / f"{name}.pem"
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.PKCS8, encryption))
    path.chmod(0o600)
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
    return str(path), public.decode()


def register(client, name, public_pem, max_role, enabled=True):
    post = flasharray.ApiClientPost(issuer=name, public_key=public_pem, max_role=max_role)
    (created,) = ok(client.post_api_clients(names=[name], api_clients=post))
    assert created.enabled is False, "a new API client starts disabled"
    if enabled:
        (patched,) = ok(client.patch_api_clients(
            names=[name], api_clients=flasharray.ApiClientPatch(enabled=True)))
        assert patched.enabled is True
    return created


def login(sim_target, created, issuer, key_file, password=None):
    return flasharray.Client(sim_target, client_id=created.id, key_id=created.key_id,
                             issuer=issuer, username="pureuser",
                             private_key_file=key_file, private_key_password=password)


@pytest.fixture(autouse=True)
def own_directory(tmp_path, monkeypatch):
    # The SDK writes the access token to `oauth21.0token.access_token` in the
    # current directory: keep it in the test's own folder.
    monkeypatch.chdir(tmp_path)


def test_the_sdk_logs_in_with_an_api_client_and_works(client, sim_target, unique, tmp_path):
    name = f"{unique}c"
    key_file, public = key_pair(tmp_path, name, PASSWORD)
    created = register(client, name, public, "array_admin")
    (listed,) = ok(client.get_api_clients(names=[name]))
    assert (listed.id, listed.key_id, listed.issuer) == (created.id, created.key_id, name)

    fa = login(sim_target, created, name, key_file, PASSWORD)
    assert fa.get_access_token().count(".") == 2, "a JWT"
    (array,) = ok(fa.get_arrays())
    assert array.name
    vol = f"{unique}v"
    ok(fa.post_volumes(names=[vol], volume=flasharray.VolumePost(provisioned=MIB)))
    assert [v.name for v in ok(fa.get_volumes(names=[vol]))] == [vol]
    ok(fa.patch_volumes(names=[vol], volume=flasharray.VolumePatch(destroyed=True)))
    done(fa.delete_volumes(names=[vol]))
    # The admin sees the same array.
    assert isinstance(client.get_volumes(names=[vol]), ErrorResponse)


def test_rights_are_the_lesser_of_the_client_and_the_user(client, sim_target, unique, tmp_path):
    name = f"{unique}ro"
    key_file, public = key_pair(tmp_path, name)
    fa = login(sim_target, register(client, name, public, "readonly"), name, key_file)
    ok(fa.get_volumes())
    refused = fa.post_volumes(names=[f"{unique}v"], volume=flasharray.VolumePost(provisioned=MIB))
    assert isinstance(refused, ErrorResponse) and refused.status_code == 403
    assert isinstance(client.get_volumes(names=[f"{unique}v"]), ErrorResponse), "nothing made"


def test_refusals(client, sim_target, unique, tmp_path):
    name = f"{unique}off"
    key_file, public = key_pair(tmp_path, name)
    disabled = register(client, name, public, "array_admin", enabled=False)
    with pytest.raises(PureError):
        login(sim_target, disabled, name, key_file)
    other_key, _ = key_pair(tmp_path, f"{name}-other")
    ok(client.patch_api_clients(names=[name], api_clients=flasharray.ApiClientPatch(enabled=True)))
    with pytest.raises(PureError):
        login(sim_target, disabled, name, other_key)
    login(sim_target, disabled, name, key_file)  # enabled, the right key
    done(client.delete_api_clients(names=[name]))
    with pytest.raises(PureError):
        login(sim_target, disabled, name, key_file)


# Rights as an array's (issue #38): every credential is checked against its user's
# role as it is now, and a token's value is shown to its own admin only.


def admin_with_token(client, name, role):
    """A local admin with `role` and an API token; the token's value."""
    ok(client.post_admins(names=[name], admin=flasharray.AdminPost(
        role=flasharray.AdminRole(name=role), password="not-a-secret-pw")))
    (made,) = ok(client.post_admins_api_tokens(names=[name]))
    return made.api_token.token


def test_expose_api_token_shows_the_callers_own_token_only(client, sim_target, unique):
    ro, other = f"{unique}-ro", f"{unique}-other"
    ro_token = admin_with_token(client, ro, "readonly")
    other_token = admin_with_token(client, other, "storage_admin")
    try:
        as_ro = flasharray.Client(sim_target, api_token=ro_token)
        shown = {t.name: t.api_token.token
                 for t in ok(as_ro.get_admins_api_tokens(expose_api_token=True))}
        assert shown[ro] == ro_token, "its own token"
        assert shown[other] == "****" and shown["pureuser"] == "****"
        assert other_token not in shown.values()
        # The array admin is not the token's admin either.
        (seen,) = ok(client.get_admins_api_tokens(names=[other], expose_api_token=True))
        assert seen.api_token.token == "****"
    finally:
        done(client.delete_admins(names=[ro]))
        done(client.delete_admins(names=[other]))


def test_a_readonly_api_token_session_is_role_checked(client, sim_target, unique):
    ro = f"{unique}-ro"
    as_ro = flasharray.Client(sim_target, api_token=admin_with_token(client, ro, "readonly"))
    try:
        ok(as_ro.get_volumes())
        refused = as_ro.post_volumes(names=[f"{unique}v"],
                                     volume=flasharray.VolumePost(provisioned=MIB))
        assert isinstance(refused, ErrorResponse) and refused.status_code == 403
        assert isinstance(client.get_volumes(names=[f"{unique}v"]), ErrorResponse), "nothing made"
        # Its own token it may renew, another admin's not.
        done(as_ro.delete_admins_api_tokens(names=[ro]))
        assert as_ro.delete_admins_api_tokens(names=["pureuser"]).status_code in (401, 403)
    finally:
        done(client.delete_admins(names=[ro]))


def test_an_access_token_follows_its_users_role_now(client, sim_target, unique, tmp_path):
    user, name = f"{unique}-u", f"{unique}m2"
    ok(client.post_admins(names=[user], admin=flasharray.AdminPost(
        role=flasharray.AdminRole(name="storage_admin"), password="not-a-secret-pw")))
    key_file, public = key_pair(tmp_path, name)
    created = register(client, name, public, "array_admin")
    fa = flasharray.Client(sim_target, client_id=created.id, key_id=created.key_id,
                           issuer=name, username=user, private_key_file=key_file)
    token = fa.get_access_token()
    ok(fa.post_volumes(names=[f"{unique}a"], volume=flasharray.VolumePost(provisioned=MIB)))
    # Demoted: the same access token writes no more.
    ok(client.patch_admins(names=[user], admin=flasharray.AdminPatch(
        role=flasharray.AdminRole(name="readonly"))))
    refused = fa.post_volumes(names=[f"{unique}b"], volume=flasharray.VolumePost(provisioned=MIB))
    assert isinstance(refused, ErrorResponse) and refused.status_code == 403
    assert fa.get_access_token() == token, "refused by role, not by a new token"
    # Deleted: its access tokens end with it (401), and a user made again under the
    # same name, readonly, gets none of the old rights.
    done(client.delete_admins(names=[user]))
    ok(client.post_admins(names=[user], admin=flasharray.AdminPost(
        role=flasharray.AdminRole(name="readonly"), password="not-a-secret-pw")))
    again = fa.post_volumes(names=[f"{unique}c"], volume=flasharray.VolumePost(provisioned=MIB))
    assert isinstance(again, ErrorResponse) and again.status_code == 403
    assert isinstance(client.get_volumes(names=[f"{unique}c"]), ErrorResponse)
    done(client.delete_admins(names=[user]))
    ok(client.patch_volumes(names=[f"{unique}a"], volume=flasharray.VolumePatch(destroyed=True)))
    done(client.delete_volumes(names=[f"{unique}a"]))


def exchange(sim_target, id_token):
    """POSTs an ID token to the token endpoint; the status and the JSON answer."""
    import json
    import ssl
    import urllib.error
    import urllib.parse
    import urllib.request
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    body = urllib.parse.urlencode({
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
        "subject_token": id_token}).encode()
    request = urllib.request.Request(f"https://{sim_target}/oauth2/1.0/token", data=body,
                                     method="POST")
    try:
        with urllib.request.urlopen(request, context=context, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_id_token_lifetime_and_replay(client, sim_target, unique, tmp_path):
    import time
    import uuid

    import jwt
    name = f"{unique}id"
    key_file, public = key_pair(tmp_path, name)
    created = register(client, name, public, "readonly")
    with open(key_file, "rb") as f:
        key = serialization.load_pem_private_key(f.read(), password=None)

    def id_token(lifetime, **extra):
        now = int(time.time())
        claims = {"iss": name, "aud": created.id, "sub": "pureuser", "iat": now,
                  "exp": now + lifetime, **extra}
        return jwt.encode(claims, key, algorithm="RS256", headers={"kid": created.key_id})

    # 30 years: refused; the SDK's own 10 years, without a jti, may be sent again
    # (the SDK re-sends its one ID token at every refresh).
    status, answer = exchange(sim_target, id_token(30 * 365 * 86400))
    assert status == 401 and "too long" in answer["error_description"], answer
    sdk_like = id_token(315360000)
    assert exchange(sim_target, sdk_like)[0] == 200
    assert exchange(sim_target, sdk_like)[0] == 200
    # With a jti: once.
    once = id_token(300, jti=str(uuid.uuid4()))
    assert exchange(sim_target, once)[0] == 200
    status, answer = exchange(sim_target, once)
    assert status == 401 and "already exchanged" in answer["error_description"], answer
    done(client.delete_api_clients(names=[name]))


def test_api_clients_refuse_bad_lifetimes_and_small_keys(client, unique, tmp_path):
    _, public = key_pair(tmp_path, f"{unique}k")
    for ttl in (0, 999, 86_400_001, 2**63 - 1):
        refused = client.post_api_clients(names=[f"{unique}t"], api_clients=flasharray.ApiClientPost(
            issuer="x", public_key=public, max_role="readonly", access_token_ttl_in_ms=ttl))
        assert isinstance(refused, ErrorResponse) and refused.status_code == 400, ttl
        assert refused.errors[0].context == "access_token_ttl_in_ms", refused.errors
    small = rsa.generate_private_key(public_exponent=65537, key_size=1024).public_key()
    small_pem = small.public_bytes(serialization.Encoding.PEM,
                                   serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    refused = client.post_api_clients(names=[f"{unique}s"], api_clients=flasharray.ApiClientPost(
        issuer="x", public_key=small_pem, max_role="readonly"))
    assert isinstance(refused, ErrorResponse) and refused.status_code == 400
    assert "1024-bit" in refused.errors[0].message and "2048" in refused.errors[0].message
    assert isinstance(client.get_api_clients(names=[f"{unique}s"]), ErrorResponse), "not made"
