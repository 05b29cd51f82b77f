"""Pure's official SDK (py-pure-client, pinned in requirements.txt) against the
simulator, unchanged: login, volumes, hosts, host groups, connections, pods, tags,
paging, re-login after 401, retries on 429/500-busy/503 and error responses."""

import pytest
from pypureclient import flasharray
from pypureclient.responses import ErrorResponse, ValidResponse

from conftest import REST_VERSION, since

MIB = 1024 * 1024
DAY_MS = 86_400_000


def ok(resp):
    assert isinstance(resp, ValidResponse), _describe(resp)
    assert resp.status_code == 200
    return list(resp.items)


def err(resp, status=400):
    assert isinstance(resp, ErrorResponse), f"expected an error, got {resp}"
    assert resp.status_code == status, _describe(resp)
    return resp.errors[0]


def _describe(resp):
    if isinstance(resp, ErrorResponse):
        return f"{resp.status_code}: " + "; ".join(
            f"{e.context}: {e.message}" for e in resp.errors)
    return repr(resp)


def names(items):
    return [i.name for i in items]


def test_version_login_and_array(client):
    assert client.get_rest_version() == REST_VERSION
    arrays = ok(client.get_arrays())
    assert arrays[0].name == "pxfa-sim"
    assert arrays[0].os == "Purity//FA"
    space = ok(client.get_arrays_space())[0]
    assert space.capacity > 0
    # Ansible's connection check.
    hardware = ok(client.get_hardware())
    assert "CT0" in names(hardware)


def test_volume_lifecycle(client, unique):
    a, b, c = f"{unique}-a", f"{unique}-b", f"{unique}-c"
    created = ok(client.post_volumes(names=[a, b, c], volume=flasharray.VolumePost(provisioned=MIB)))
    assert names(created) == [a, b, c]
    assert created[0].provisioned == MIB
    assert len(created[0].serial) == 24

    resized = ok(client.patch_volumes(names=[a], volume=flasharray.VolumePatch(provisioned=2 * MIB)))
    assert resized[0].provisioned == 2 * MIB
    e = err(client.patch_volumes(names=[a], volume=flasharray.VolumePatch(provisioned=MIB)))
    assert e.context == a
    ok(client.patch_volumes(names=[a], volume=flasharray.VolumePatch(provisioned=MIB), truncate=True))

    renamed = ok(client.patch_volumes(names=[b], volume=flasharray.VolumePatch(name=f"{b}-new")))
    assert renamed[0].name == f"{b}-new"

    destroyed = ok(client.patch_volumes(names=[c], volume=flasharray.VolumePatch(destroyed=True)))
    assert destroyed[0].destroyed is True
    assert destroyed[0].time_remaining == DAY_MS
    assert names(ok(client.get_volumes(names=[c], destroyed=True))) == [c]
    # A destroyed volume keeps its name until eradicated.
    e = err(client.post_volumes(names=[c], volume=flasharray.VolumePost(provisioned=MIB)))
    assert (e.context, e.message) == (c, "Volume already exists.")
    recovered = ok(client.patch_volumes(names=[c], volume=flasharray.VolumePatch(destroyed=False)))
    assert recovered[0].destroyed is False
    # Live volumes cannot be eradicated.
    e = err(client.delete_volumes(names=[c]))
    assert e.message == "Volume must be destroyed before it can be eradicated."
    ok(client.patch_volumes(names=[c], volume=flasharray.VolumePatch(destroyed=True)))
    assert client.delete_volumes(names=[c]).status_code == 200
    e = err(client.get_volumes(names=[c]))
    assert (e.context, e.message) == (c, "Volume does not exist.")

    # A null reference still has its key; its name raises as on a real array.
    vol = ok(client.get_volumes(names=[a]))[0]
    assert not hasattr(vol.pod, "name")
    assert vol.qos is not None


def test_error_responses(client):
    e = err(client.get_volumes(names=["nope"]))
    assert (e.context, e.message) == ("nope", "Volume does not exist.")
    e = err(client.get_hosts(names=["nohost"]))
    assert (e.context, e.message) == ("nohost", "Host does not exist.")
    e = err(client.post_volumes(names=["bad_name-"], volume=flasharray.VolumePost(provisioned=MIB)))
    assert e.context == "bad_name-"


def test_hosts_groups_connections(client, unique):
    h1, h2, hg = f"{unique}-h1", f"{unique}-h2", f"{unique}-hg"
    wwn = f"21:00:00:24:ff:{int(unique[1:].split('x')[0]) % 256:02x}:00:01"
    host = ok(client.post_hosts(names=[h1], host=flasharray.HostPost(wwns=[wwn])))[0]
    assert host.wwns == [wwn.replace(":", "").upper()]
    assert not hasattr(host.host_group, "name"), "no group: {'name': null}"
    ok(client.post_hosts(names=[h2], host=flasharray.HostPost(iqns=[f"iqn.2020-01.io.pxfa:{h2}"])))
    e = err(client.post_hosts(names=[h1], host=flasharray.HostPost()))
    assert (e.context, e.message) == (h1, "Host already exists.")

    ok(client.post_host_groups(names=[hg]))
    ok(client.post_host_groups_hosts(group_names=[hg], member_names=[h1]))
    ok(client.post_hosts_host_groups(group_names=[hg], member_names=[h2]))
    members = ok(client.get_host_groups_hosts(group_names=[hg]))
    assert sorted(m.member.name for m in members) == sorted([h1, h2])
    assert ok(client.get_hosts(names=[h1]))[0].host_group.name == hg
    assert ok(client.get_host_groups(names=[hg]))[0].host_count == 2

    v1, v2, s1 = f"{unique}-v1", f"{unique}-v2", f"{unique}-s1"
    ok(client.post_volumes(names=[v1, v2, s1], volume=flasharray.VolumePost(provisioned=MIB)))
    private = ok(client.post_connections(host_names=[h1], volume_names=[v1, v2]))
    assert sorted(c.lun for c in private) == [1, 2]
    ok(client.post_connections(host_group_names=[hg], volume_names=[s1]))
    rows = ok(client.get_connections(volume_names=[s1]))
    assert sorted(r.host.name for r in rows) == sorted([h1, h2])
    assert {r.lun for r in rows} == {254}
    assert {r.host_group.name for r in rows} == {hg}
    e = err(client.post_connections(host_names=[h1], volume_names=[v1]))
    assert e.message == "Connection already exists."

    e = err(client.delete_hosts(names=[h1]))
    assert "cannot be deleted due to existing connections" in e.message
    assert client.delete_connections(host_names=[h1], volume_names=[v1, v2]).status_code == 200
    e = err(client.delete_connections(host_names=[h1], volume_names=[v1]))
    assert "is not connected" in e.message
    assert client.delete_connections(host_group_names=[hg], volume_names=[s1]).status_code == 200
    assert client.delete_host_groups_hosts(group_names=[hg], member_names=[h1, h2]).status_code == 200
    assert client.delete_hosts(names=[h1]).status_code == 200
    assert client.delete_host_groups(names=[hg]).status_code == 200


def test_pods_quota_and_non_empty_destroy(client, unique):
    pod = f"{unique}-pod"
    created = ok(client.post_pods(names=[pod], pod=flasharray.PodPost(quota_limit=1024 * MIB)))
    assert created[0].quota_limit == 1024 * MIB
    vol = f"{pod}::data"
    assert names(ok(client.post_volumes(names=[vol], volume=flasharray.VolumePost(provisioned=MIB)))) == [vol]
    assert ok(client.get_volumes(names=[vol]))[0].pod.name == pod
    arrays = ok(client.get_pods_arrays(group_names=[pod]))
    assert [(m.group.name, m.member.name) for m in arrays] == [(pod, "pxfa-sim")]
    e = err(client.patch_pods(names=[pod], pod=flasharray.PodPatch(destroyed=True)))
    assert "Pod is not empty" in e.message
    ok(client.patch_pods(names=[pod], pod=flasharray.PodPatch(destroyed=True), destroy_contents=True))
    assert ok(client.get_pods(names=[pod]))[0].destroyed is True
    assert client.delete_pods(names=[pod], eradicate_contents=True).status_code == 200
    e = err(client.get_pods(names=[pod]))
    assert e.message == "Pod does not exist."


@since("2.39")  # pod tags (host and host-group tags 2.34, volume tags 2.2)
def test_tags(client, unique):
    v, h, p = f"{unique}-tv", f"{unique}-th", f"{unique}-tp"
    ok(client.post_volumes(names=[v], volume=flasharray.VolumePost(provisioned=MIB)))
    ok(client.post_hosts(names=[h], host=flasharray.HostPost()))
    ok(client.post_pods(names=[p], pod=flasharray.PodPost()))
    tag = flasharray.Tag(namespace="pxfa.io", key="tenant", value=unique)
    ok(client.put_volumes_tags_batch(resource_names=[v], tag=[tag]))
    ok(client.put_hosts_tags_batch(resource_names=[h], tag=[tag]))
    ok(client.put_pods_tags_batch(resource_names=[p], tag=[tag]))
    for getter, name in [(client.get_volumes_tags, v), (client.get_hosts_tags, h), (client.get_pods_tags, p)]:
        tags = ok(getter(resource_names=[name], namespaces=["pxfa.io"]))
        assert [(t.key, t.value, t.resource.name) for t in tags] == [("tenant", unique, name)]
    assert client.delete_volumes_tags(resource_names=[v], keys=["tenant"], namespaces=["pxfa.io"]).status_code == 200
    assert ok(client.get_volumes_tags(resource_names=[v])) == []


@since("2.39")  # tags in the create bodies of pods, hosts and host groups
def test_tags_in_create_bodies(client, unique):
    """REST 2.39 create bodies carry tags; the object has them from its first moment."""
    v, h, g, p = f"{unique}-cv", f"{unique}-ch", f"{unique}-cg", f"{unique}-cp"
    owner = [flasharray.Tag(namespace="pxfa.io", key="managed-by", value="pxfa"),
             flasharray.Tag(namespace="pxfa.io", key="tenant", value=unique)]
    ok(client.post_volumes(names=[v], volume=flasharray.VolumePost(provisioned=MIB, tags=owner)))
    ok(client.post_hosts(names=[h], host=flasharray.HostPost(tags=owner)))
    ok(client.post_host_groups(names=[g], host_group=flasharray.HostGroupPost(tags=owner)))
    ok(client.post_pods(names=[p], pod=flasharray.PodPost(tags=owner)))
    for getter, name in [(client.get_volumes_tags, v), (client.get_hosts_tags, h),
                         (client.get_host_groups_tags, g), (client.get_pods_tags, p)]:
        tags = ok(getter(resource_names=[name], namespaces=["pxfa.io"]))
        assert sorted((t.key, t.value, t.resource.name) for t in tags) == [
            ("managed-by", "pxfa", name), ("tenant", unique, name)]
    # A bad tag refuses the whole create: nothing is left behind.
    bad = [flasharray.Tag(namespace="pxfa.io", key="k", value="v" * 300)]
    err(client.post_volumes(names=[f"{unique}-bad"], volume=flasharray.VolumePost(provisioned=MIB, tags=bad)))
    err(client.get_volumes(names=[f"{unique}-bad"]))


@since("2.32")  # POST /volumes/batch
def test_post_volumes_batch(client, unique):
    """REST 2.32+: volumes of different sizes, each with its own tags, in one call."""
    a, b = f"{unique}-ba", f"{unique}-bb"
    def tags(i):
        return [flasharray.Tag(namespace="pxfa.io", key="tenant", value=unique),
                flasharray.Tag(namespace="pxfa.io", key="disk-index", value=i)]
    made = ok(client.post_volumes_batch(volume=[
        flasharray.VolumeBatchPost(name=a, provisioned=2 * MIB, tags=tags("0")),
        flasharray.VolumeBatchPost(name=b, provisioned=MIB, tags=tags("1")),
    ]))
    assert [(v.name, v.provisioned) for v in made] == [(a, 2 * MIB), (b, MIB)]
    got = ok(client.get_volumes_tags(resource_names=[a, b], namespaces=["pxfa.io"]))
    assert sorted((t.resource.name, t.key, t.value) for t in got) == [
        (a, "disk-index", "0"), (a, "tenant", unique), (b, "disk-index", "1"), (b, "tenant", unique)]
    # One taken name refuses the whole batch.
    e = err(client.post_volumes_batch(volume=[
        flasharray.VolumeBatchPost(name=f"{unique}-bc", provisioned=MIB),
        flasharray.VolumeBatchPost(name=a, provisioned=MIB),
    ]))
    assert e.context == a
    err(client.get_volumes(names=[f"{unique}-bc"]))


def test_paging_limit_continuation_sort_and_auto_pagination(sim_target, sim_token, client, unique):
    wanted = [f"{unique}-p{i}" for i in range(7)]
    ok(client.post_volumes(names=wanted, volume=flasharray.VolumePost(provisioned=MIB)))
    flt = f"name='{unique}-p*'"

    # limit: one page only, with a continuation token for the rest.
    resp = client.get_volumes(filter=flt, limit=3, total_item_count=True)
    assert names(ok(resp)) == wanted[:3]
    assert resp.continuation_token
    assert resp.more_items_remaining is True
    assert resp.total_item_count == 7
    nxt = client.get_volumes(filter=flt, limit=3, continuation_token=resp.continuation_token)
    assert names(ok(nxt)) == wanted[3:6]

    # sort (descending) plus offset, the SDK's paging path without tokens.
    resp = client.get_volumes(filter=flt, sort=["name-"], limit=3, offset=2)
    assert names(ok(resp)) == list(reversed(wanted))[2:5]
    assert resp.continuation_token is None

    # auto_pagination_limit: every GET pages by itself, with tokens or offsets.
    paged = flasharray.Client(sim_target, api_token=sim_token, auto_pagination_limit=2)
    assert names(ok(paged.get_volumes(filter=flt))) == wanted
    assert names(ok(paged.get_volumes(filter=flt, sort=["name-"]))) == list(reversed(wanted))


def test_relogin_after_session_expiry(spawn_sim):
    target, token = spawn_sim("expire:every=3")
    c = flasharray.Client(target, api_token=token)
    # Requests 3 and 6 find the session ended: the SDK logs in again and retries.
    for i in range(7):
        assert ok(c.get_arrays())[0].name == "pxfa-sim", f"call {i}"


def test_retries_on_429_busy_and_503(spawn_sim):
    target, token = spawn_sim("429:nth=1:retry-after=1,busy:nth=3,503:nth=5")
    c = flasharray.Client(target, api_token=token)
    for _ in range(4):
        assert ok(c.get_volumes()) == []


def test_rate_limit_error_response_without_retries(spawn_sim):
    target, token = spawn_sim("429:every=1:retry-after=1")
    c = flasharray.Client(target, api_token=token, retries=0)
    e = err(c.post_volumes(names=["rl"], volume=flasharray.VolumePost(provisioned=MIB)), status=429)
    assert e.message == "API rate limit exceeded"


@since("2.36")  # realms, management access policies
def test_realm_scoped_token_sees_only_its_realm(sim_target, client, unique):
    realm, user = f"{unique}-realm", f"{unique}-px"
    ok(client.post_realms(names=[realm]))
    ok(client.post_pods(names=[f"{realm}::px", f"{unique}-mgmt"], pod=flasharray.PodPost()))
    ok(client.post_volumes(names=[f"{realm}::px::d1", f"{unique}-mgmt::cd1"],
                           volume=flasharray.VolumePost(provisioned=MIB)))
    rule = {"role": {"name": "storage"}, "scope": {"name": realm, "resource_type": "realms"}}
    ok(client.post_policies_management_access(
        names=[user],
        policy=flasharray.PolicyManagementAccessPost(
            enabled=True, aggregation_strategy="least-common-permissions", rules=[rule])))
    ok(client.post_admins(names=[user], admin=flasharray.AdminPost(
        management_access_policies=[{"name": user}])))
    token = ok(client.post_admins_api_tokens(names=[user]))[0].api_token.token

    tenant = flasharray.Client(sim_target, api_token=token)
    assert names(ok(tenant.get_realms())) == [realm]
    assert names(ok(tenant.get_volumes())) == [f"{realm}::px::d1"]
    # The SDK does not parse the body of a 403 (context and message come back None).
    err(tenant.patch_volumes(names=[f"{unique}-mgmt::cd1"],
                             volume=flasharray.VolumePatch(destroyed=True)), status=403)
    err(tenant.post_realms(names=[f"{unique}-other"]), status=403)
    assert ok(client.get_volumes(names=[f"{unique}-mgmt::cd1"]))[0].destroyed is False
