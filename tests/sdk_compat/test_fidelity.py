"""Endpoints and fields added so that Pure's Ansible collection runs unchanged
(tests/ansible_compat); here they are checked through Pure's SDK directly."""

from pypureclient import flasharray


def items(response):
    assert response.status_code == 200, getattr(response, "errors", response)
    return list(response.items)


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
