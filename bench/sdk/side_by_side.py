"""pxfa apply and Pure's Python SDK (py-pure-client) provisioning the same tenant,
side by side, each against a fresh HTTPS simulator with the same latency.

Run by scripts/bench-sdk.sh, which builds the binaries and provides the SDK venv:

    side_by_side.py --pxfa BIN --sim BIN --spec SPEC [--workers 3,16,64]
                    [--latency-ms 20] [--admin USER] [--smoke]

For each tenant size:

1. `pxfa apply` (a fresh process) on an empty simulator, then again (nothing to do);
   the array's end state is read and becomes the object list the SDK contenders
   create, so every contender makes exactly the same objects.
2. `naive`: a fresh Python process, one SDK call per object, sequentially (a
   `names=` GET to check, then the create; one membership and one connection POST
   per object).
3. `best`: a fresh Python process, the SDK used as well as it can be: membership
   filters for the reads, `post_volumes_batch` with per-volume tags, multi-name
   memberships and connections, tags in every create body, the calls of each round
   in a thread pool of 8 on one client (the SDK's re-login is not guarded for
   threads, so the simulator ends no sessions here).

The simulator logs every request; "rounds" is the depth of that log (a request is
one deeper than the deepest one that had ended before it started), "floor" is
rounds x latency. Every contender's end state must equal pxfa's, or the run fails.
"""

import argparse
import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import warnings

MIB = 1024 * 1024


# --------------------------------------------------------------------- simulator


class Sim:
    """One sim_serve process with latency on every request and on each connection."""

    def __init__(self, binary, latency_ms, admins, workdir):
        self.dir = tempfile.mkdtemp(prefix="sim-", dir=workdir)
        self.token_file = os.path.join(self.dir, "token")
        self.cert = os.path.join(self.dir, "cert.pem")
        self.stats_file = os.path.join(self.dir, "stats.json")
        url_file = os.path.join(self.dir, "url")
        cmd = [binary, "--port", "0", "--token-file", self.token_file, "--url-file", url_file,
               "--cert-out", self.cert, "--stats-file", self.stats_file,
               "--http-latency-ms", str(latency_ms), "--connect-latency-ms", str(latency_ms)]
        for a in admins:
            cmd += ["--admin", a]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(300):
            if os.path.exists(url_file) and os.path.getsize(url_file) > 0:
                break
            if self.proc.poll() is not None:
                raise SystemExit(f"simulator exited: {self.proc.stderr.read().decode()}")
            time.sleep(0.05)
        with open(url_file, encoding="utf-8") as f:
            self.url = f.read().strip()
        self.target = self.url[len("https://"):]

    def token(self):
        with open(self.token_file, encoding="utf-8") as f:
            return f.read().strip()

    def stop(self):
        """Stops the simulator; returns its request log (list of dicts)."""
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=30)
        with open(self.stats_file, encoding="utf-8") as f:
            return json.load(f)


def depth(requests):
    """Dependent rounds in a request log (as flasharray_sim::critical_path_depth)."""
    ordered = sorted(requests, key=lambda r: r["start_ms"])
    depths = []
    for i, r in enumerate(ordered):
        before = [depths[j] for j in range(i) if ordered[j]["end_ms"] <= r["start_ms"]]
        depths.append(1 + max(before, default=0))
    return max(depths, default=0)


def window(log, start, end):
    """The requests that arrived between two wall-clock times (seconds)."""
    return [r for r in log["requests"] if start * 1000 <= r["start_ms"] <= end * 1000]


def rounds(requests):
    """The depth without the logout, which is off pxfa's critical path (the SDK ends
    its session when the client is dropped, after its work)."""
    return depth([r for r in requests if not r["path"].endswith("/logout")])


# ------------------------------------------------------------------- end state


def client(target, token):
    from pypureclient import flasharray
    return flasharray.Client(target, api_token=token)


def items(resp):
    from pypureclient.responses import ValidResponse
    if not isinstance(resp, ValidResponse):
        raise RuntimeError(f"{resp.status_code}: " + "; ".join(
            f"{e.context}: {e.message}" for e in resp.errors))
    return list(resp.items)


def end_state(c):
    """The array's objects without ids, serials, times or LUNs: what must be equal."""
    tags = {}
    for kind, getter in [("pods", c.get_pods_tags), ("host_groups", c.get_host_groups_tags),
                         ("hosts", c.get_hosts_tags), ("volumes", c.get_volumes_tags)]:
        tags[kind] = sorted([t.resource.name, t.key, t.value]
                            for t in items(getter(namespaces=["pxfa.io"])))
    conns = set()
    for x in items(c.get_connections()):
        hg = x.host_group.name if x.host_group else None
        conns.add(("host_group", hg, x.volume.name) if hg else ("host", x.host.name, x.volume.name))
    return {
        "pods": sorted([p.name, p.quota_limit] for p in items(c.get_pods(destroyed=False))),
        "host_groups": sorted(g.name for g in items(c.get_host_groups())),
        "hosts": sorted([h.name, sorted(h.iqns or []), sorted(h.nqns or []), sorted(h.wwns or []),
                         h.host_group.name if h.host_group else None]
                        for h in items(c.get_hosts())),
        "volumes": sorted([v.name, v.provisioned] for v in items(c.get_volumes(destroyed=False))),
        "tags": tags,
        "connections": sorted(list(x) for x in conns),
        "token_admins": sorted(t.name for t in items(c.get_admins_api_tokens())),
    }


# ------------------------------------------------------------------ contenders


def tag_models(pairs):
    from pypureclient import flasharray
    return [flasharray.Tag(namespace="pxfa.io", key=k, value=v) for _, k, v in pairs]


def tags_of(state, kind, name):
    return [t for t in state["tags"][kind] if t[0].lower() == name.lower()]


def naive(c, want):
    """One call per object, sequentially, like a first script."""
    from pypureclient import flasharray
    for name, quota in want["pods"]:
        c.get_pods(names=[name])
        items(c.post_pods(names=[name], pod=flasharray.PodPost(
            quota_limit=quota, tags=tag_models(tags_of(want, "pods", name)))))
    for name in want["host_groups"]:
        c.get_host_groups(names=[name])
        items(c.post_host_groups(names=[name], host_group=flasharray.HostGroupPost(
            tags=tag_models(tags_of(want, "host_groups", name)))))
    for name, iqns, nqns, wwns, _ in want["hosts"]:
        c.get_hosts(names=[name])
        items(c.post_hosts(names=[name], host=flasharray.HostPost(
            iqns=iqns or None, nqns=nqns or None, wwns=wwns or None,
            tags=tag_models(tags_of(want, "hosts", name)))))
    for name, _, _, _, group in want["hosts"]:
        if group:
            items(c.post_host_groups_hosts(group_names=[group], member_names=[name]))
    for name, size in want["volumes"]:
        c.get_volumes(names=[name])
        items(c.post_volumes(names=[name], volume=flasharray.VolumePost(
            provisioned=size, tags=tag_models(tags_of(want, "volumes", name)))))
    for kind, target, volume in want["connections"]:
        if kind == "host_group":
            items(c.post_connections(host_group_names=[target], volume_names=[volume]))
        else:
            items(c.post_connections(host_names=[target], volume_names=[volume]))
    for admin in want["token_admins"]:
        items(c.post_admins_api_tokens(names=[admin]))


def chunks(seq, n=100):
    return [seq[i:i + n] for i in range(0, len(seq), n)]


def in_filter(names):
    return "name=(" + ",".join(f"'{n}'" for n in names) + ")"


def best(c, want):
    """The SDK at its best: filters, volumes/batch, multi-name calls, rounds in threads."""
    from pypureclient import flasharray
    pool = concurrent.futures.ThreadPoolExecutor(8)

    def round_of(calls):
        for f in [pool.submit(fn) for fn in calls]:
            f.result()

    # Read round: what exists (filters tolerate missing names), and the tags.
    reads = []
    for getter, names in [(c.get_pods, [p for p, _ in want["pods"]]),
                          (c.get_host_groups, want["host_groups"]),
                          (c.get_hosts, [h[0] for h in want["hosts"]]),
                          (c.get_volumes, [v for v, _ in want["volumes"]])]:
        reads += [lambda g=getter, ch=ch: g(filter=in_filter(ch)) for ch in chunks(names)]
    reads += [c.get_pods_tags, c.get_host_groups_tags, c.get_hosts_tags, c.get_volumes_tags]
    round_of(reads)
    # Pods, groups, hosts and tokens, each with its tags.
    calls = [lambda p=p, q=q: items(c.post_pods(names=[p], pod=flasharray.PodPost(
        quota_limit=q, tags=tag_models(tags_of(want, "pods", p))))) for p, q in want["pods"]]
    calls += [lambda g=g: items(c.post_host_groups(names=[g], host_group=flasharray.HostGroupPost(
        tags=tag_models(tags_of(want, "host_groups", g))))) for g in want["host_groups"]]
    calls += [lambda h=h: items(c.post_hosts(names=[h[0]], host=flasharray.HostPost(
        iqns=h[1] or None, nqns=h[2] or None, wwns=h[3] or None,
        tags=tag_models(tags_of(want, "hosts", h[0]))))) for h in want["hosts"]]
    calls += [lambda a=a: items(c.post_admins_api_tokens(names=[a])) for a in want["token_admins"]]
    round_of(calls)
    # Volumes born with their tags, memberships per group.
    batch = [flasharray.VolumeBatchPost(name=v, provisioned=s,
                                        tags=tag_models(tags_of(want, "volumes", v)))
             for v, s in want["volumes"]]
    calls = [lambda ch=ch: items(c.post_volumes_batch(volume=ch)) for ch in chunks(batch)]
    groups = {}
    for h in want["hosts"]:
        if h[4]:
            groups.setdefault(h[4], []).append(h[0])
    calls += [lambda g=g, hs=hs: items(c.post_host_groups_hosts(group_names=[g], member_names=hs))
              for g, hs in groups.items()]
    round_of(calls)
    # Connections, all volumes of a target per call.
    targets = {}
    for kind, target, volume in want["connections"]:
        targets.setdefault((kind, target), []).append(volume)
    calls = []
    for (kind, target), vols in targets.items():
        for ch in chunks(vols):
            if kind == "host_group":
                calls.append(lambda t=target, ch=ch: items(
                    c.post_connections(host_group_names=[t], volume_names=ch)))
            else:
                calls.append(lambda t=target, ch=ch: items(
                    c.post_connections(host_names=[t], volume_names=ch)))
    round_of(calls)
    pool.shutdown()


def contender_main(args):
    """A contender process: creates `--objects` through the SDK, prints its timings."""
    t0 = time.perf_counter()
    import urllib3
    urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    from pypureclient import flasharray  # noqa: F401  (the import is part of the cost)
    t1 = time.perf_counter()
    with open(args.objects, encoding="utf-8") as f:
        want = json.load(f)
    with open(args.token_file, encoding="utf-8") as f:
        token = f.read().strip()
    c = client(args.target, token)
    {"naive": naive, "best": best}[args.contender](c, want)
    t2 = time.perf_counter()
    print(json.dumps({"import_ms": (t1 - t0) * 1000, "work_ms": (t2 - t1) * 1000}))


# ---------------------------------------------------------------------- driver


def run(cmd, **kw):
    start = time.time()
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    took = (time.perf_counter() - t) * 1000
    if p.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({p.returncode}):\n{p.stderr[-4000:]}")
    return start, time.time(), took, p.stdout


def spec_with(spec, workers, workdir):
    """The direct-access example with `workers` workers and volumes pxfa creates
    (pre-created volumes connected through the management host group, Portworx 3.7
    with the FA/FB driver), so that the tenant has volumes, hosts and connections."""
    with open(spec, encoding="utf-8") as f:
        text = f.read()
    edits = [("    replicas: 3\n", f"    replicas: {workers}\n"),
             ("version: 3.6.2", "version: 3.7.0"),
             ("attach: fada", "attach: host-group\n    provisioning: import"),
             ("hostGroup: hcp-mgmt", "hostGroup: hcp-mgmt\n    faFbDriver: true"),
             # Room for 64+ worker VMs in the /20.
             ("vmRange: 10.40.0.200-10.40.0.250", "vmRange: 10.40.1.0-10.40.3.250")]
    for old, new in edits:
        if old not in text:
            raise SystemExit(f"{spec}: no {old.strip()!r} to change")
        text = text.replace(old, new, 1)
    path = os.path.join(workdir, f"tenant-{workers}.yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def measure(args, workers, workdir):
    spec = spec_with(args.spec, workers, workdir)
    rows = {}
    # pxfa, cold then again, on one simulator.
    sim = Sim(args.sim, args.latency_ms, args.admin, workdir)
    pxfa = [args.pxfa, "--array", sim.url, "--ca-file", sim.cert, "--api-token-file",
            sim.token_file, "--yes", "-q", "apply", "-f", spec, "--allow-endpoint-mismatch"]
    cold = run(pxfa)
    again = run(pxfa)
    want = end_state(client(sim.target, sim.token()))
    log = sim.stop()
    for name, (start, end, took, _) in [("pxfa apply", cold), ("pxfa again", again)]:
        reqs = window(log, start, end)
        rows[name] = {"ms": took, "requests": len(reqs), "rounds": rounds(reqs)}
    objects = os.path.join(workdir, f"objects-{workers}.json")
    with open(objects, "w", encoding="utf-8") as f:
        json.dump(want, f)
    for contender in args.contenders:
        sim = Sim(args.sim, args.latency_ms, args.admin, workdir)
        start, end, took, out = run([sys.executable, __file__, "--contender", contender,
                                     "--target", sim.target, "--token-file", sim.token_file,
                                     "--objects", objects])
        got = end_state(client(sim.target, sim.token()))
        log = sim.stop()
        if got != want:
            diff = {k: {"pxfa": want[k], contender: got[k]} for k in want if want[k] != got[k]}
            raise SystemExit(f"{workers} workers: the {contender} end state differs from pxfa's:\n"
                             + json.dumps(diff, indent=1)[:4000])
        reqs = window(log, start, end)
        inner = json.loads(out.strip().splitlines()[-1])
        rows[f"sdk {contender}"] = {"ms": took, "requests": len(reqs), "rounds": rounds(reqs),
                                    "import_ms": inner["import_ms"], "work_ms": inner["work_ms"]}
    objects_n = (len(want["volumes"]) + len(want["hosts"]) + len(want["host_groups"])
                 + len(want["pods"]) + len(want["connections"]))
    return objects_n, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--contender", choices=["naive", "best"])
    ap.add_argument("--target")
    ap.add_argument("--token-file")
    ap.add_argument("--objects")
    ap.add_argument("--pxfa")
    ap.add_argument("--sim")
    ap.add_argument("--spec")
    ap.add_argument("--workers", default="3,16,64")
    ap.add_argument("--latency-ms", type=int, default=20)
    ap.add_argument("--admin", action="append", default=[])
    ap.add_argument("--smoke", action="store_true",
                    help="end-state equality only (no timing table, no targets)")
    args = ap.parse_args()
    if args.contender:
        return contender_main(args)
    args.admin = args.admin or ["pxfa-tenant-demo"]
    args.contenders = ["best"] if args.smoke else ["naive", "best"]
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    import urllib3
    urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
    workdir = tempfile.mkdtemp(prefix="pxfa-bench-sdk-")
    lat = args.latency_ms
    print(f"side by side at {lat} ms per request (and per new connection); "
          f"load average {os.getloadavg()[0]:.1f}; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("rounds: depth of the simulator's request log, logout excluded; floor = rounds x "
          "latency; ratio = wall / floor; vs pxfa = wall / pxfa apply's wall (whole processes)")
    print(f"{'workers':>7} {'objects':>7} {'contender':<11} {'wall ms':>8} {'reqs':>5} "
          f"{'rounds':>6} {'floor ms':>8} {'ratio':>5} {'vs pxfa':>7}  notes")
    missed = []
    for workers in [int(w) for w in args.workers.split(",")]:
        objects_n, rows = measure(args, workers, workdir)
        px = rows["pxfa apply"]["ms"]
        for name, r in rows.items():
            floor = r["rounds"] * lat
            note = ""
            if "import_ms" in r:
                note = f"python+SDK import {r['import_ms']:.0f} ms, SDK work {r['work_ms']:.0f} ms"
            print(f"{workers:>7} {objects_n:>7} {name:<11} {r['ms']:>8.0f} {r['requests']:>5} "
                  f"{r['rounds']:>6} {floor:>8} {r['ms'] / max(floor, 1):>5.2f} "
                  f"{r['ms'] / px:>6.1f}x  {note}")
        # At 1 ms (the smoke run) scheduling noise splits rounds; only check at real RTTs.
        if not args.smoke and rows["pxfa apply"]["rounds"] > 6:
            missed.append(f"{workers} workers: a cold apply took {rows['pxfa apply']['rounds']} rounds")
        if not args.smoke and workers == 64:
            for name, target in [("sdk best", 8), ("sdk naive", 30)]:
                ratio = rows[name]["ms"] / px
                if ratio < target:
                    missed.append(f"64 workers: pxfa is {ratio:.1f}x {name}, target {target}x")
    print("end states: every contender equals pxfa's")
    for m in missed:
        print(f"MISS: {m}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
