"""Which REST 2.x version introduced each endpoint, model field, query parameter
and request-body field, read from Pure's SDK (py-pure-client ships one client per
REST version, FA_2_0 ... FA_2_N: each version's api/__init__.py names the API
modules of that version, whose request paths are the version's endpoints and whose
`*_with_http_info` functions name each operation's query parameters and body
model, and models/__init__.py names each model's module, whose fields are the
model's fields at that version).

    python tests/sdk_compat/rest_versions.py [TOP_MINOR]

prints, for the endpoints, models and operations the simulator serves, the first
minor version that has each; test_versions.py checks the simulator's tables
(crates/flasharray-sim/src/versions.rs) against it.
"""

import importlib
import importlib.util
import inspect
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
_CALL = re.compile(r"f'/api/\{self\.version\}/([a-z0-9/_-]+)', '([A-Z]+)'")
_QUERY = re.compile(r"_query_params\.append\(\('([a-z0-9_]+)'")
_BODY = re.compile(r"_body_params = _params\['([a-z0-9_]+)'\]")
# The paths the simulator serves operations on (sim/routes): their query parameters
# and body fields are versioned too.
SERVED = sorted(set(MODELS) | {
    "volumes/batch", "host-groups/hosts", "hosts/host-groups", "pods/arrays",
    "array-connections/connection-key", "container-default-protections",
    "admins/api-tokens", "policies/management-access",
} | {f"{kind}/tags{batch}" for kind in ("volumes", "hosts", "host-groups", "pods")
     for batch in ("", "/batch")})
# Fields of the SDK's oneOf wrappers (quota_limit), not of the wire format.
_WRAPPER_FIELDS = {"oneof_schema_1_validator", "oneof_schema_2_validator",
                   "actual_instance", "one_of_schemas"}


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


def _model_in(annotation):
    """The pydantic model inside an annotation (Annotated, Optional, conlist)."""
    pending = [annotation]
    while pending:
        a = pending.pop()
        if isinstance(a, type) and hasattr(a, "__fields__"):
            return a
        pending.extend(getattr(a, "__args__", ()) or ())
        pending.extend(getattr(a, "__metadata__", ()) or ())
        for attr in ("item_type", "__origin__"):
            inner = getattr(a, attr, None)
            if inner is not None and inner is not a:
                pending.append(inner)
    return None


def _field_paths(model, prefix="", depth=0):
    """Every field of `model`, nested ones as `a.b` (a list's items as the list)."""
    for name, field in model.__fields__.items():
        if name in _WRAPPER_FIELDS:
            continue
        path = prefix + name
        yield path
        inner = _model_in(field.outer_type_) if depth < 3 else None
        if inner is not None and inner is not model and "actual_instance" not in inner.__fields__:
            yield from _field_paths(inner, path + ".", depth + 1)


_RAW = {}
_PATHS = {}


def _raw_operations(modname, attr):
    """(path, METHOD, query parameters, body model or None) of one API class on the
    served paths; cached, since versions share API modules."""
    key = (modname, attr)
    if key in _RAW:
        return _RAW[key]
    module = importlib.import_module(modname)
    out = []
    for name, fn in inspect.getmembers(getattr(module, attr), inspect.isfunction):
        if not name.endswith("_with_http_info"):
            continue
        src = inspect.getsource(fn)
        call = _CALL.search(src)
        if call is None or call.group(1) not in SERVED:
            continue
        model = None
        param = _BODY.search(src)
        if param:
            annotation = inspect.signature(fn).parameters[param.group(1)].annotation
            if isinstance(annotation, str):
                annotation = eval(annotation, vars(module))
            model = _model_in(annotation)
        out.append((call.group(1), call.group(2), _QUERY.findall(src), model))
    _RAW[key] = out
    return out


def _serves_any(modname):
    """Whether an API module's source names a served path (read, not imported)."""
    if modname not in _PATHS:
        spec = importlib.util.find_spec(modname)
        with open(spec.origin, encoding="utf-8") as f:
            _PATHS[modname] = {p for p, _ in _CALL.findall(f.read())}
    return bool(_PATHS[modname] & set(SERVED))


def _operations(pkg):
    """(path, METHOD, query parameters, body field paths) of one version's client.
    A body model is the version's own (its models/__init__.py), as the SDK's
    users build it: an API module shared by several versions may import an older
    one."""
    models_init = importlib.import_module(f"{pkg.__name__}.models").__file__
    own = {attr: mod.replace("...", f"{_fa.__name__}.")
           for mod, attr in _lazy_targets(models_init)}
    api_init = importlib.import_module(f"{pkg.__name__}.api").__file__
    for modname, attr in _lazy_targets(api_init):
        if not _serves_any(modname):
            continue
        for path, method, params, model in _raw_operations(modname, attr):
            if model is not None and model.__name__ in own:
                model = getattr(importlib.import_module(own[model.__name__]), model.__name__)
            yield path, method, params, list(_field_paths(model)) if model else []


def operations(top):
    """({(path, METHOD, parameter): first minor}, {(path, METHOD, field): first
    minor}) for the parameters and body fields newer than their operation on the
    paths the simulator serves."""
    first_op, first_param, first_field = {}, {}, {}
    for n, pkg in _minors(top):
        for path, method, params, fields_ in _operations(pkg):
            first_op.setdefault((path, method), n)
            for p in params:
                first_param.setdefault((path, method, p), n)
            for f in fields_:
                first_field.setdefault((path, method, f), n)
    later = lambda table: {k: n for k, n in table.items() if n > first_op[k[:2]]}
    return later(first_param), later(first_field)


if __name__ == "__main__":
    top = int(sys.argv[1]) if len(sys.argv) > 1 else 39
    for path, n in sorted(endpoints(top).items()):
        print(f"endpoint {path} {n}")
    for model, fs in sorted(fields(top).items()):
        for field, n in sorted(fs.items(), key=lambda kv: (kv[1], kv[0])):
            print(f"field {model} {field} {n}")
    params, body = operations(top)
    for (path, method, p), n in sorted(params.items()):
        print(f"parameter {method} {path} {p} {n}")
    for (path, method, f), n in sorted(body.items()):
        print(f"body {method} {path} {f} {n}")
