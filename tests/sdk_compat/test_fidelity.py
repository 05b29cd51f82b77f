"""Endpoints and fields added so that Pure's Ansible collection runs unchanged
(tests/ansible_compat); here they are checked through Pure's SDK directly."""

from pypureclient import flasharray

from conftest import since


def items(response):
    assert response.status_code == 200, getattr(response, "errors", response)
    return list(response.items)


@since("2.38")  # `context`
def test_volumes_carry_context_and_subtype(client, unique):
    name = f"{unique}-ctx"
    created = items(client.post_volumes(
        names=[name], volume=flasharray.VolumePost(provisioned=1 << 20, subtype="regular")))
    (array,) = items(client.get_arrays())
    assert created[0].context.name == array.name
    (vol,) = items(client.get_volumes(names=[name]))
    assert vol.subtype == "regular" and vol.context.id == array.id
    refused = client.post_volumes(
        names=[f"{unique}-pe"], volume=flasharray.VolumePost(subtype="protocol_endpoint"))
    assert refused.status_code == 400 and "subtype" in refused.errors[0].message


def test_controllers_and_hardware_filter(client):
    ctl = items(client.get_controllers())
    assert [c.name for c in ctl] == ["CT0", "CT1"]
    assert {c.mode for c in ctl} == {"primary", "secondary"}
    hw = items(client.get_hardware(filter="type='controller'"))
    assert sorted(h.name for h in hw) == ["CT0", "CT1"]
    assert client.get_hardware(filter="type=").status_code == 400


def test_empty_collections_answer_empty_lists(client):
    assert items(client.get_array_connections()) == []
    assert items(client.get_protection_groups()) == []
    assert items(client.get_pod_replica_links()) == []
    assert items(client.get_hosts_performance_balance()) == []
    missing = client.get_protection_groups(names=["nope"])
    assert missing.status_code == 400


def test_singletons(client):
    (support,) = items(client.get_support())
    assert support.remote_assist_status == "disconnected"
    assert len(items(client.get_subscriptions())) == 1
    (key,) = items(client.get_array_connections_connection_key())
    assert key.connection_key == items(client.get_array_connections_connection_key())[0].connection_key


def test_admins_and_the_login_token(client):
    names = [a.name for a in items(client.get_admins())]
    assert "pureuser" in names
    tokens = items(client.get_admins_api_tokens())
    login = [t for t in tokens if t.name == "pureuser"]
    assert len(login) == 1 and login[0].api_token.token == "****"
    exposed = items(client.get_admins_api_tokens(names=["pureuser"], expose_api_token=True))
    assert [t.api_token.token for t in exposed] == ["****"]


def test_patch_arrays_name_and_eradication_delay(client, unique):
    (before,) = items(client.get_arrays())
    try:
        renamed = items(client.patch_arrays(array=flasharray.Arrays(name=f"{unique}-fa")))
        assert renamed[0].name == f"{unique}-fa"
        day = 86_400_000
        config = flasharray.EradicationConfig(eradication_delay=2 * day)
        after = items(client.patch_arrays(array=flasharray.Arrays(eradication_config=config)))
        assert after[0].eradication_config.eradication_delay == 2 * day
        assert after[0].eradication_config.disabled_delay == 2 * day
        too_short = flasharray.EradicationConfig(eradication_delay=1000)
        refused = client.patch_arrays(array=flasharray.Arrays(eradication_config=too_short))
        assert refused.status_code == 400
        bad_name = client.patch_arrays(array=flasharray.Arrays(name="-bad"))
        assert bad_name.status_code == 400
    finally:
        restore = flasharray.EradicationConfig(
            eradication_delay=before.eradication_config.eradication_delay)
        items(client.patch_arrays(array=flasharray.Arrays(name=before.name, eradication_config=restore)))


@since("2.38")  # `context`
def test_array_connections_between_two_simulators(spawn_sim):
    """The purefa_connect workflow through the SDK: B's key, A connects, both list
    it, a type change, then A disconnects and both lists are empty."""
    (a_target, a_token), (b_target, b_token) = spawn_sim(array_name="sdk-a"), spawn_sim(array_name="sdk-b")
    a = flasharray.Client(a_target, api_token=a_token)
    b = flasharray.Client(b_target, api_token=b_token)
    (key,) = items(b.get_array_connections_connection_key(encrypted=False))
    wrong = a.post_array_connections(array_connection=flasharray.ArrayConnectionPost(
        management_address=b_target, connection_key="not-the-key"))
    assert wrong.status_code == 400 and wrong.errors[0].message == "Invalid connection key."
    (made,) = items(a.post_array_connections(array_connection=flasharray.ArrayConnectionPost(
        type="async-replication", management_address=b_target, replication_transport="ip",
        connection_key=key.connection_key)))
    assert (made.name, made.status, made.management_address) == ("sdk-b", "connected", b_target)
    assert made.context.name == "sdk-a" and made.encryption == "unencrypted"
    (back,) = items(b.get_array_connections(names=["sdk-a"]))
    assert back.status == "connected" and getattr(back, "management_address", None) is None
    again = a.post_array_connections(array_connection=flasharray.ArrayConnectionPost(
        management_address=b_target, connection_key=key.connection_key))
    assert again.status_code == 400
    (patched,) = items(a.patch_array_connections(
        names=["sdk-b"], array_connection=flasharray.ArrayConnectionPatch(type="sync-replication")))
    assert patched.type == "sync-replication"
    assert items(a.patch_array_connections(
        names=["sdk-b"], refresh=True, array_connection=flasharray.ArrayConnectionPatch()))
    assert b.delete_array_connections(names=["sdk-a"]).status_code == 400, "only the forming side"
    assert a.delete_array_connections(names=["sdk-b"]).status_code == 200
    assert items(a.get_array_connections()) == [] and items(b.get_array_connections()) == []
    assert a.get_array_connections(names=["sdk-b"]).status_code == 400


def test_patch_admins_password_role_public_key_and_unlock(client, unique):
    name = f"{unique}-adm"
    items(client.post_admins(names=[name], admin=flasharray.AdminPost(
        role=flasharray.AdminRole(name="readonly"), password="first-pw")))
    try:
        wrong = client.patch_admins(names=[name], admin=flasharray.AdminPatch(
            password="second-pw", old_password="nope"))
        assert wrong.status_code == 400 and wrong.errors[0].context == "old_password"
        items(client.patch_admins(names=[name], admin=flasharray.AdminPatch(
            password="second-pw", old_password="first-pw")))
        (admin,) = items(client.patch_admins(names=[name], admin=flasharray.AdminPatch(
            role=flasharray.AdminRole(name="storage_admin"), public_key="ssh-ed25519 AAAA sdk")))
        assert admin.role.name == "storage_admin" and admin.public_key == "ssh-ed25519 AAAA sdk"
        assert items(client.patch_admins(names=[name], admin=flasharray.AdminPatch(locked=False)))
        assert client.patch_admins(names=[name], admin=flasharray.AdminPatch(locked=True)).status_code == 400
        cleared = items(client.patch_admins(names=[name], admin=flasharray.AdminPatch(public_key="")))
        assert getattr(cleared[0], "public_key", None) is None
        builtin = client.patch_admins(names=["pureuser"], admin=flasharray.AdminPatch(
            role=flasharray.AdminRole(name="readonly")))
        assert builtin.status_code == 400
    finally:
        assert client.delete_admins(names=[name]).status_code == 200


def test_encoded_commas_list_like_raw_ones(client, unique):
    """The SDK joins list elements with a raw comma; a name list sent pre-joined (as
    form encoders do, `%2C`) selects the same objects."""
    names = [f"{unique}-c1", f"{unique}-c2"]
    for n in names:
        items(client.post_volumes(names=[n], volume=flasharray.VolumePost(provisioned=1 << 20)))
    raw = sorted(v.name for v in items(client.get_volumes(names=names)))
    joined = sorted(v.name for v in items(client.get_volumes(names=[",".join(names)])))
    assert raw == joined == names
