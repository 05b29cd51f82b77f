//! The command line, as clap derive types and nothing else.
//!
//! Values are kept as the user typed them (names, sizes as strings) so that the
//! commands validate them with the library's own types and report errors with the
//! library's wording, before anything is sent to an array. One module per command
//! family: the options every command shares (`global`), the per-resource commands
//! (`resource`), the tenant commands (`tenant`) and the long-running ones (`services`);
//! `help` shapes the help text.

use clap::{Args, Parser, Subcommand};

mod doctor;
mod global;
pub(crate) mod help;
mod man;
mod orphans;
mod profiles;
mod resource;
mod runbook;
mod services;
mod tenant;
mod usage;

pub(crate) use doctor::DoctorArgs;
pub(crate) use global::{ColorChoice, GlobalArgs, OutputFormat, ProfileInEffect, SimSeed};
pub(crate) use man::ManArgs;
pub(crate) use orphans::OrphansArgs;
pub(crate) use profiles::ConfigCmd;
pub(crate) use resource::{
    ArrayCmd, ConnectionCmd, DestroyedArgs, HostCmd, HostGroupCmd, InitiatorArgs, ListArgs, PodCmd,
    ResourceCmd, TagArgs, TargetArgs, TokenCmd, VolumeCmd,
};
pub(crate) use runbook::RunbookArgs;
pub(crate) use services::{ControllerCmd, ControllerRunArgs, LogFormat, SimCmd, SimServeArgs};
pub(crate) use tenant::{
    ApplyArgs, ClaimArgs, ClusterArgs, DemoArgs, DestroyArgs, LintArgs, PlanArgs, RenderArgs,
    SizeArgs, StatusArgs, TokenRotateArgs,
};
pub(crate) use usage::UsageArgs;

/// Portworx on Pure Storage FlashArray for OpenShift hosted control plane tenants.
#[derive(Debug, Parser)]
#[command(name = "pxfa", version, propagate_version = true, max_term_width = 100)]
#[command(
    after_help = "Exit codes (every command): 0 ok, 1 error, 2 usage or invalid input (nothing \
sent), 3 looked and found something (status problems, doctor warnings, plan --detailed-exitcode \
changes), 4 finished with some changes failed, 130 interrupted."
)]
pub(crate) struct Cli {
    /// Options every command understands.
    #[command(flatten)]
    pub(crate) global: GlobalArgs,
    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Per-resource commands over the array's REST API.
    #[command(flatten)]
    Resource(ResourceCmd),
    /// Explain the Portworx pool sizing of a tenant spec.
    #[command(
        after_help = "Examples:\n  pxfa size -f examples/tenant-direct-access.yaml\n  pxfa size -f examples/tenant-direct-access.yaml --array sim   # with the array's headroom\n  pxfa size -f SPEC -o json | jq .pools"
    )]
    Size(SizeArgs),
    /// Write a tenant's manifests to a folder (no array access).
    #[command(
        after_help = "Examples:\n  pxfa render -f examples/tenant-kubevirt-csi.yaml --out out-c/\n  pxfa render -f SPEC --out out/ -o json | jq -r '.files[]'"
    )]
    Render(RenderArgs),
    /// Check tenant specs or manifests against pxfa's rules.
    #[command(
        after_help = "Examples:\n  pxfa lint -f examples/tenant-direct-access.yaml\n  pxfa lint out/management/ out/tenant/\n  pxfa lint -f SPEC -o json | jq '.[] | select(.severity == \"error\")'"
    )]
    Lint(LintArgs),
    /// Show what `apply` (or, with --destroy, `destroy`) would change on the array.
    #[command(
        after_help = "Examples:\n  pxfa --array sim plan -f examples/tenant-direct-access.yaml\n  pxfa plan --destroy -f SPEC              # what destroy -f SPEC would remove; nothing is written\n  pxfa plan -f SPEC --detailed-exitcode; echo $?          # 3: changes pending\n  pxfa plan -f SPEC -o json | jq '.summary'\n  pxfa plan -f SPEC -o dot | dot -Tsvg > plan.svg"
    )]
    Plan(PlanArgs),
    /// Converge the array to a tenant spec.
    #[command(
        after_help = "Examples:\n  pxfa --array sim apply -f examples/tenant-direct-access.yaml --yes --out out/\n  pxfa apply -f SPEC --yes --kubeconfig mgmt.kubeconfig --tenant-kubeconfig tenant.kubeconfig"
    )]
    Apply(ApplyArgs),
    /// Remove what pxfa made on the array for a tenant.
    #[command(
        after_help = "Examples:\n  pxfa --array sim destroy -f examples/tenant-direct-access.yaml --yes\n  pxfa destroy -f SPEC --yes --eradicate   # irreversible; SafeMode may keep volumes pending"
    )]
    Destroy(DestroyArgs),
    /// Claim the objects an earlier pxfa tagged for the tenant's name without a
    /// namespace for the spec's namespace (adds the tenant-namespace tag).
    #[command(
        after_help = "Examples:\n  pxfa claim -f SPEC --dry-run      # what an earlier pxfa tagged for this name; nothing is written\n  pxfa claim -f SPEC --yes          # from now on they are metadata.namespace/metadata.name's\n\nClaim only for the namespace that owns the tenant: another namespace's same-named tenant would lose its objects to it."
    )]
    Claim(ClaimArgs),
    /// One view of a tenant across the array and the clusters (-o json for machines).
    #[command(
        after_help = "Examples:\n  pxfa --array sim status -f examples/tenant-direct-access.yaml\n  pxfa status -f SPEC --kubeconfig mgmt.kubeconfig -o json | jq .healthy\n  pxfa status -f SPEC -o mermaid > tenant.mmd\n\nExit codes: 0 healthy, 3 problems found (marked !!), 2 bad input (nothing sent), 1 a layer cannot be read."
    )]
    Status(StatusArgs),
    /// The ordered day-2 steps for a tenant (scale-out, scale-in, grow, add-pool,
    /// replace-vm, delete), with its names, where each runs, what to check, sources.
    #[command(
        after_help = "Examples:\n  pxfa runbook scale-in -f SPEC --worker 3        # 4 workers to 3: the highest index goes\n  pxfa runbook replace-vm -f SPEC --worker 1\n  pxfa runbook delete -f examples/tenant-cloud-drive.yaml\n  pxfa runbook grow -f SPEC -o json | jq -r '.steps[].command // empty'\n\nOperations that do not apply to the spec's mode exit 2 with the reason."
    )]
    Runbook(RunbookArgs),
    /// Check the site's prerequisites for a tenant: the array, the management and the
    /// tenant cluster (read only; -o yaml for `render --site`).
    #[command(
        after_help = "Examples:\n  pxfa doctor -f SPEC --kubeconfig mgmt.kubeconfig\n  pxfa doctor -f SPEC --tenant-kubeconfig tenant.kubeconfig   # $KUBECONFIG for the management cluster\n  pxfa doctor -f SPEC -o yaml > site.yaml && pxfa render -f SPEC --site site.yaml --out out/\n\nExit codes: 0 every check ok, 3 warnings or unknowns only, 1 any failure, 2 bad input."
    )]
    Doctor(DoctorArgs),
    /// What pxfa made or manages that no tenant accounts for, on the array and the
    /// management cluster, with the evidence; --cleanup removes it (soft).
    #[command(
        after_help = "Examples:\n  pxfa orphans -f tenants/                       # every tenant spec in the folder; array kinds only\n  pxfa orphans --kubeconfig mgmt.kubeconfig       # the TenantStorage objects are the tenants; every kind\n  pxfa orphans -f tenants/ --kubeconfig mgmt.kubeconfig -o json | jq '.orphans[].object'\n  pxfa orphans -f tenants/ --kubeconfig mgmt.kubeconfig --cleanup   # asks first; never eradicates"
    )]
    Orphans(OrphansArgs),
    /// Per tenant: provisioned, used, pod quota and share of the array's capacity;
    /// per worker its drive sizes (read only).
    #[command(
        after_help = "Examples:\n  pxfa --array sim --sim-seed brownfield usage\n  pxfa usage --tenant team-blue/tenant-blue --workers\n  pxfa usage -o csv > usage.csv\n  pxfa usage -o json | jq '.rows[] | select(.holder.kind == \"tenant\")'\n\nWhose an object is comes from its pxfa.io tags (tenant, tenant-namespace); untagged, shared, unclaimed and destroyed objects are rows of their own."
    )]
    Usage(UsageArgs),
    /// Print the TenantStorage CustomResourceDefinition (pxfa.io/v1alpha1).
    #[command(after_help = "Examples:\n  pxfa crd | oc apply -f -")]
    Crd,
    /// The whole flow for the example tenant on an embedded simulated array.
    #[command(after_help = "Examples:\n  pxfa demo\n  pxfa demo --out /tmp/demo-out")]
    Demo(DemoArgs),
    /// The HTTPS FlashArray simulator.
    #[command(subcommand)]
    Sim(SimCmd),
    /// The TenantStorage controller for the management cluster.
    #[command(subcommand)]
    Controller(ControllerCmd),
    /// Named array profiles (array address and credential file) in the pxfa config
    /// file: list them, show or choose the current one.
    #[command(
        subcommand,
        after_help = "The file: $PXFA_CONFIG, else $XDG_CONFIG_HOME/pxfa/config.yaml, else ~/.config/pxfa/config.yaml.\nUse a profile with --profile NAME or PXFA_PROFILE=NAME (docs/cli.md, \"Profiles\")."
    )]
    Config(ConfigCmd),
    /// Write manual pages (roff, section 1) for pxfa and every subcommand to a folder.
    #[command(
        after_help = "Examples:\n  pxfa man --out /usr/local/share/man/man1 && mandb -q\n  pxfa man --out man/ && man -l man/pxfa-usage.1"
    )]
    Man(ManArgs),
    /// Shell completion script on stdout.
    #[command(
        after_help = "Examples:\n  pxfa completions bash > ~/.local/share/bash-completion/completions/pxfa\n  pxfa completions zsh > \"${fpath[1]}/_pxfa\"\n  pxfa completions fish > ~/.config/fish/completions/pxfa.fish\n\nTo complete the array's volume, host, host group, pod and tenant names too, source the dynamic completion instead (docs/cli.md, \"Completions\"):\n  echo 'source <(COMPLETE=bash pxfa)' >> ~/.bashrc"
    )]
    Completions(CompletionsArgs),
}

/// `completions`.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// Shell.
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}
