//! `pxfa`: Portworx on FlashArray for OpenShift hosted control plane tenants.

fn main() -> std::process::ExitCode {
    pxfa::main()
}
