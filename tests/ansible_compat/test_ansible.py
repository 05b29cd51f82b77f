"""Pure's Ansible collection, one playbook per module family, against the simulator.

Each playbook runs every task twice and asserts that the first run changed the array
and the second did not; these tests then check the end state over REST with Pure's SDK.
"""

from conftest import items


def test_volume(playbook, client, unique):
    playbook("volume", prefix=unique)
    vols = {v.name: v for v in items(client.get_volumes(names=[f"{unique}-vol-r"]))}
    assert vols[f"{unique}-vol-r"].provisioned == 2 * 1024**3
    assert client.get_volumes(names=[f"{unique}-vol"]).status_code == 400
    gone = client.get_volumes(names=[f"{unique}-vol-gone"], destroyed=True)
    assert gone.status_code == 400, "eradicated volume is still listed"
