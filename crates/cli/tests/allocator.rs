//! The `pxfa` binary allocates with jemalloc tuned by the options compiled into it
//! (`JEMALLOC_SYS_WITH_MALLOC_CONF` in .cargo/config.toml), so that a controller
//! started by hand runs as the Deployment does; `_RJEM_MALLOC_CONF` still overrides
//! them option by option. jemalloc's `stats_print` option prints the options in
//! effect (`opt.narenas: 2`, ...) when the process exits.

use std::process::Command;

/// The options .cargo/config.toml compiles in, as `(name, value)`.
fn compiled() -> Vec<(String, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.cargo/config.toml");
    let text = std::fs::read_to_string(path).expect(".cargo/config.toml reads");
    let conf = text
        .lines()
        .find_map(|l| l.strip_prefix("JEMALLOC_SYS_WITH_MALLOC_CONF = "))
        .expect(".cargo/config.toml sets JEMALLOC_SYS_WITH_MALLOC_CONF");
    conf.trim_matches('"')
        .split(',')
        .map(|o| {
            let (name, value) = o.split_once(':').expect("name:value");
            (name.to_string(), value.to_string())
        })
        .collect()
}

/// What jemalloc prints at the exit of `pxfa --version` with `conf` as its
/// run-time options.
fn effective(conf: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_pxfa"))
        .arg("--version")
        .env("_RJEM_MALLOC_CONF", conf)
        .output()
        .expect("pxfa runs");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn the_compiled_in_options_apply_and_the_environment_overrides_them() {
    let options = compiled();
    assert_eq!(
        options.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        [
            "narenas",
            "background_thread",
            "dirty_decay_ms",
            "muzzy_decay_ms"
        ]
    );
    let stats = effective("stats_print:true");
    for (name, value) in &options {
        assert!(
            stats.contains(&format!("opt.{name}: {value}")),
            "opt.{name} is not {value}:\n{stats}"
        );
    }
    let stats = effective("stats_print:true,narenas:3");
    assert!(stats.contains("opt.narenas: 3"), "{stats}");
    assert!(stats.contains("opt.dirty_decay_ms: 1000"), "{stats}");
}
