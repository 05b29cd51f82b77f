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
