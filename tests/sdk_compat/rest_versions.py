"""Which REST 2.x version introduced each endpoint and model field, read from Pure's
SDK (py-pure-client ships one client per REST version, FA_2_0 ... FA_2_N: each
version's api/__init__.py names the API modules of that version, whose request
paths are the version's endpoints, and models/__init__.py names each model's
module, whose `__properties` are the model's fields).

    python tests/sdk_compat/rest_versions.py [TOP_MINOR]

prints, for the endpoints and models the simulator serves, the first minor version
that has each; test_versions.py checks the simulator's table
(crates/flasharray-mock/src/sim/versions.rs) against it.
"""

import importlib
import re
import sys

from pypureclient import flasharray as _fa

# The simulator's resources and the SDK model of their items.
MODELS = {
    "volumes": "Volume", "hosts": "Host", "host-groups": "HostGroup", "pods": "Pod",
    "connections": "Connection", "arrays": "Arrays", "admins": "Admin",
    "controllers": "Controller", "array-connections": "ArrayConnection",
    "arrays/space": "ArraySpace", "realms": "Realm", "hardware": "Hardware",
    "api-clients": "ApiClient",
}
_PATH = re.compile(r"f'/api/\{self\.version\}/([a-z0-9/_-]+)', '[A-Z]+'")


def _minors(top):
    base = _fa.__name__
    for n in range(0, top + 1):
        try:
            yield n, importlib.import_module(f"{base}.FA_2_{n}")
        except ModuleNotFoundError:
            continue


def _lazy_targets(module_file):
    """(module, attr) pairs of one version's lazy loader table."""
    with open(module_file, encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"__Lazy\w+Loader\('([^']+)', '(\w+)'", text)


def endpoints(top):
    """{path: first minor}."""
    first = {}
    for n, pkg in _minors(top):
        api_init = importlib.import_module(f"{pkg.__name__}.api").__file__
        for modname, _ in _lazy_targets(api_init):
            src = importlib.import_module(modname).__file__
            with open(src, encoding="utf-8") as f:
                for path in _PATH.findall(f.read()):
                    first.setdefault(path, n)
    return first


def fields(top):
    """{model: {field: first minor}} for MODELS' models."""
    wanted = set(MODELS.values())
    first = {m: {} for m in wanted}
    for n, pkg in _minors(top):
        models_init = importlib.import_module(f"{pkg.__name__}.models").__file__
        for modname, attr in _lazy_targets(models_init):
            if attr not in wanted:
                continue
            modname = modname.replace("...", f"{_fa.__name__}.")
            cls = getattr(importlib.import_module(modname), attr)
            for field in cls.__fields__:
                first[attr].setdefault(field, n)
    return first


if __name__ == "__main__":
    top = int(sys.argv[1]) if len(sys.argv) > 1 else 39
    for path, n in sorted(endpoints(top).items()):
        print(f"endpoint {path} {n}")
    for model, fs in sorted(fields(top).items()):
        for field, n in sorted(fs.items(), key=lambda kv: (kv[1], kv[0])):
            print(f"field {model} {field} {n}")
