//! The per-resource commands against the HTTPS simulator, in every output format.

use crate::harness::{Sim, streams};

const GIB: u64 = 1 << 30;

#[test]
fn volume_lifecycle() {
    let sim = Sim::start();

    let created = sim.json(&["volume", "create", "v1", "v2", "v3", "--size", "10GiB"]);
    let created = created.as_array().expect("a list of volumes");
    assert_eq!(created.len(), 3);
    assert!(created.iter().all(|v| v["provisioned"] == 10 * GIB));

    // Table: human sizes; YAML: the same data as JSON.
    let out = sim.cmd().args(["volume", "list"]).output().unwrap();
    let (stdout, stderr) = streams(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("10 GiB"), "{stdout}");
    assert!(stdout.contains("NAME") && stdout.contains("v2"), "{stdout}");
    sim.assert_no_token(&stdout, &stderr);
    let out = sim
        .cmd()
        .args(["volume", "list", "-o", "yaml"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let yaml: serde_json::Value = serde_saphyr::from_str(&streams(&out).0).unwrap();
    assert_eq!(yaml, sim.json(&["volume", "list"]));

    let got = sim.json(&["volume", "get", "v2"]);
    assert_eq!(got["name"], "v2");

    // Growing is fine; shrinking needs --truncate (exit 2 without, nothing changed).
    let grown = sim.json(&["volume", "resize", "v1", "--size", "20GiB"]);
    assert_eq!(grown[0]["provisioned"], 20 * GIB);
    sim.cmd()
        .args(["volume", "resize", "v1", "--size", "5GiB"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--truncate"));
    assert_eq!(sim.json(&["volume", "get", "v1"])["provisioned"], 20 * GIB);
    let shrunk = sim.json(&[
        "volume",
        "resize",
        "v1",
        "--size",
        "5GiB",
        "--truncate",
        "--yes",
    ]);
    assert_eq!(shrunk[0]["provisioned"], 5 * GIB);

    let renamed = sim.json(&["volume", "rename", "v3", "v3-renamed"]);
    assert_eq!(renamed[0]["name"], "v3-renamed");

    // Destructive commands need --yes without a terminal, and refuse wildcards.
    sim.cmd()
        .args(["volume", "destroy", "v2"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--yes"));
    sim.cmd()
        .args(["volume", "destroy", "v*", "--yes"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("wildcard"));
    let destroyed = sim.json(&["volume", "destroy", "v2", "--yes"]);
    assert_eq!(destroyed[0]["destroyed"], true);
    let pending = sim.json(&["volume", "list", "--destroyed"]);
    assert_eq!(pending.as_array().unwrap().len(), 1);
    assert_eq!(pending[0]["name"], "v2");
    let out = sim
        .cmd()
        .args(["volume", "list", "--destroyed"])
        .output()
        .unwrap();
    assert!(
        streams(&out).0.contains("eradicated in"),
        "{}",
        streams(&out).0
    );

    let recovered = sim.json(&["volume", "recover", "v2"]);
    assert_eq!(recovered[0]["destroyed"], false);

    sim.json(&["volume", "destroy", "v2", "--yes"]);
    sim.cmd()
        .args(["volume", "eradicate", "v2"])
        .assert()
        .code(2);
    sim.json(&["volume", "eradicate", "v2", "--yes"]);
    let names: Vec<String> = sim.volume_names();
    assert_eq!(names, ["v1", "v3-renamed"]);
}

#[test]
fn volume_create_sends_one_call_for_all_names() {
    let sim = Sim::start();
    let out = sim
        .cmd()
        .args([
            "-vv", "volume", "create", "b1", "b2", "b3", "b4", "--size", "1GiB",
        ])
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert!(out.status.success(), "{stderr}");
    let posts = stderr
        .lines()
        .filter(|l| l.contains("operation=POST") && l.contains("/volumes"))
        .count();
    assert_eq!(posts, 1, "{stderr}");
    // -vv shows request ids, never the token.
    assert!(stderr.contains("request_id="), "{stderr}");
    sim.assert_no_token(&stdout, &stderr);
}

#[test]
fn volume_name_conflict_exits_1() {
    let sim = Sim::start();
    sim.json(&["volume", "create", "data1", "--size", "1GiB"]);
    let out = sim
        .cmd()
        .args(["volume", "create", "data2", "DATA1", "--size", "1GiB"])
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("already exists"), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    sim.assert_no_token(&stdout, &stderr);
}

#[test]
fn volume_tags() {
    let sim = Sim::start();
    sim.json(&["volume", "create", "t1", "t2", "--size", "1GiB"]);
    let tags = sim.json(&[
        "volume",
        "tag",
        "t1",
        "t2",
        "--set",
        "team=storage",
        "--set",
        "env=test",
    ]);
    assert_eq!(tags.as_array().unwrap().len(), 4, "{tags}");
    let tags = sim.json(&["volume", "tag", "t1", "--remove", "env"]);
    let keys: Vec<&str> = tags
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["team"]);
    sim.cmd()
        .args(["volume", "tag", "t1", "--set", "novalue"])
        .assert()
        .code(2);
}

#[test]
fn hosts_groups_and_connections() {
    let sim = Sim::start();
    sim.json(&["hostgroup", "create", "hg1"]);
    let h = sim.json(&[
        "host",
        "create",
        "h1",
        "--wwn",
        "21:00:f4:c7:aa:00:27:06",
        "--hostgroup",
        "hg1",
    ]);
    assert_eq!(h[0]["wwns"][0], "2100F4C7AA002706");
    assert_eq!(h[0]["host_group"]["name"], "hg1");
    sim.json(&["host", "create", "h2", "--iqn", "iqn.1994-05.com.redhat:h2"]);
    sim.cmd()
        .args(["host", "create", "h3", "--wwn", "nonsense"])
        .assert()
        .code(2);

    let h = sim.json(&["host", "add-initiator", "h1", "--wwn", "2100F4C7AA002707"]);
    assert_eq!(h[0]["wwns"].as_array().unwrap().len(), 2);
    let h = sim.json(&[
        "host",
        "remove-initiator",
        "h1",
        "--wwn",
        "2100F4C7AA002707",
    ]);
    assert_eq!(h[0]["wwns"].as_array().unwrap().len(), 1);

    let groups = sim.json(&["hostgroup", "list"]);
    assert_eq!(groups[0]["name"], "hg1");
    assert_eq!(groups[0]["hosts"], serde_json::json!(["h1"]));
    sim.json(&["hostgroup", "add-host", "hg1", "h2"]);
    assert_eq!(
        sim.json(&["host", "get", "h2"])["host_group"]["name"],
        "hg1"
    );

    sim.json(&["volume", "create", "c1", "c2", "c3", "--size", "1GiB"]);
    let shared = sim.json(&["connection", "create", "--hostgroup", "hg1", "c1", "c2"]);
    assert!(!shared.as_array().unwrap().is_empty());
    sim.cmd()
        .args([
            "connection",
            "create",
            "--host",
            "h1",
            "c3",
            "c2",
            "--lun",
            "10",
        ])
        .assert()
        .code(2);
    let private = sim.json(&["connection", "create", "--host", "h1", "c3", "--lun", "10"]);
    assert_eq!(private[0]["lun"], 10);
    let seen = sim.json(&["connection", "list", "--host", "h1"]);
    assert_eq!(seen.as_array().unwrap().len(), 3, "{seen}");
    let out = sim.cmd().args(["connection", "list"]).output().unwrap();
    assert!(streams(&out).0.contains("LUN"));

    // A host with connections cannot be deleted (the array refuses: exit 1).
    sim.cmd()
        .args(["host", "delete", "h1", "--yes"])
        .assert()
        .code(1);
    sim.cmd()
        .args(["connection", "delete", "--host", "h1", "c3"])
        .assert()
        .code(2);
    sim.json(&["connection", "delete", "--host", "h1", "c3", "--yes"]);
    sim.json(&[
        "connection",
        "delete",
        "--hostgroup",
        "hg1",
        "c1",
        "c2",
        "--yes",
    ]);
    assert!(
        sim.json(&["connection", "list"])
            .as_array()
            .unwrap()
            .is_empty()
    );

    let h = sim.json(&["host", "set-group", "h1", "--none"]);
    assert!(h[0]["host_group"]["name"].is_null());
    sim.json(&["hostgroup", "remove-host", "hg1", "h2", "--yes"]);
    sim.json(&["hostgroup", "delete", "hg1", "--yes"]);
    sim.json(&["host", "delete", "h1", "h2", "--yes"]);
    assert!(sim.json(&["host", "list"]).as_array().unwrap().is_empty());
}

#[test]
fn pods() {
    let sim = Sim::start();
    let p = sim.json(&["pod", "create", "p1", "--quota", "1TiB"]);
    assert_eq!(p[0]["quota_limit"], 1u64 << 40);
    sim.json(&["volume", "create", "p1::v1", "--size", "1GiB"]);
    // Not empty: the array refuses unless the contents go too.
    sim.cmd()
        .args(["pod", "destroy", "p1", "--yes"])
        .assert()
        .code(1);
    let d = sim.json(&["pod", "destroy", "p1", "--destroy-contents", "--yes"]);
    assert_eq!(d[0]["destroyed"], true);
    assert_eq!(
        sim.json(&["pod", "list", "--destroyed"])
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let r = sim.json(&["pod", "recover", "p1"]);
    assert_eq!(r[0]["destroyed"], false);
    let out = sim.cmd().args(["pod", "list"]).output().unwrap();
    assert!(streams(&out).0.contains("1 TiB"), "{}", streams(&out).0);
}

#[test]
fn tokens_are_shown_once_and_never_listed() {
    let sim = Sim::start();
    let out = sim
        .cmd()
        .args(["token", "create", "pxfa-tenant-demo"])
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert!(out.status.success(), "{stderr}");
    let new_token = stdout.trim().to_string();
    assert!(
        !new_token.is_empty() && !new_token.contains(' '),
        "{stdout}"
    );
    assert!(stderr.contains("only this once"), "{stderr}");

    let out = sim.cmd().args(["token", "list"]).output().unwrap();
    let (stdout, _) = streams(&out);
    assert!(stdout.contains("pxfa-tenant-demo"), "{stdout}");
    assert!(!stdout.contains(&new_token));
    let listed = sim.json(&["token", "list"]);
    assert!(!listed.to_string().contains(&new_token));

    // The new token logs in.
    let f = sim.dir.path().join("tenant-token");
    std::fs::write(&f, &new_token).unwrap();
    crate::harness::pxfa()
        .args(["--array", &sim.url, "--ca-file"])
        .arg(&sim.cert)
        .arg("--api-token-file")
        .arg(&f)
        .args(["array", "info"])
        .assert()
        .success();

    // --out writes it owner-only, and stdout stays free of it.
    let out_file = sim.dir.path().join("out-token");
    let out = sim
        .cmd()
        .args(["token", "create", "pureuser", "--lifetime", "1d", "--out"])
        .arg(&out_file)
        .output()
        .unwrap();
    let (stdout, _) = streams(&out);
    assert!(out.status.success());
    let written = std::fs::read_to_string(&out_file).unwrap();
    assert!(!written.trim().is_empty());
    assert!(!stdout.contains(written.trim()));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&out_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    sim.cmd()
        .args(["token", "delete", "pxfa-tenant-demo"])
        .assert()
        .code(2);
    sim.json(&["token", "delete", "pxfa-tenant-demo", "--yes"]);
}

#[test]
fn array_info_and_space() {
    let sim = Sim::start();
    let info = sim.json(&["array", "info"]);
    assert_eq!(info["name"], "pxfa-sim");
    let space = sim.json(&["array", "space"]);
    assert!(space["capacity"].as_u64().unwrap() > 0);
    let out = sim.cmd().args(["array", "space"]).output().unwrap();
    let (stdout, _) = streams(&out);
    assert!(stdout.contains("100 TiB"), "{stdout}");
    let out = sim
        .cmd()
        .args(["array", "info", "-o", "yaml"])
        .output()
        .unwrap();
    assert!(streams(&out).0.contains("name: pxfa-sim"));
}
