//! `usage`: what each tenant holds on the array.

use clap::Args;

/// `usage`.
#[derive(Debug, Args)]
pub(crate) struct UsageArgs {
    /// Only this tenant: `NAMESPACE/NAME`, or a bare NAME for that name in any
    /// namespace (and an earlier pxfa's objects tagged with that name alone).
    #[arg(long, value_name = "NS/NAME")]
    pub(crate) tenant: Option<String>,
    /// One row per tenant worker drive (its `node-index` and `disk-index` tags)
    /// instead of one per tenant; JSON and YAML always hold both.
    #[arg(long)]
    pub(crate) workers: bool,
}
