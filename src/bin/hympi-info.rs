//! `hympi-info`: what this hympi is and how it is configured.
//!
//! Prints the version, the MPI standard and ABI versions, the install paths (found relative to
//! the executable, as the compiler wrappers do), what the build contains, the thread support
//! level and every `HYMPI_*` knob of [`hympi::platform::config::KNOBS`] with its default and
//! its value in the current environment.

#[path = "wrapper/mod.rs"]
mod wrapper;

use hympi::abi::consts::{
    MPI_ABI_SUBVERSION, MPI_ABI_VERSION, MPI_SUBVERSION, MPI_THREAD_MULTIPLE, MPI_VERSION,
};
use hympi::platform::config::{COLL_ALGORITHM_KNOBS, KNOBS};
use std::fmt::Write as _;

/// The report, built from the layout and a view of the environment.
fn report(layout: &wrapper::Layout, env: &[(String, String)]) -> String {
    let mut s = String::new();
    let get = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let _ = writeln!(s, "hympi version:      {}", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(s, "MPI standard:       {MPI_VERSION}.{MPI_SUBVERSION}");
    let _ = writeln!(
        s,
        "MPI ABI version:    {MPI_ABI_VERSION}.{MPI_ABI_SUBVERSION} (libmpi_abi.so.1)"
    );
    let _ = writeln!(
        s,
        "thread support:     MPI_THREAD_MULTIPLE ({MPI_THREAD_MULTIPLE}); every level is provided as required"
    );
    match &layout.prefix {
        Some(p) => {
            let _ = writeln!(s, "install prefix:     {}", p.display());
        }
        None => {
            let _ = writeln!(s, "install prefix:     (none: running from a build tree)");
        }
    }
    let bin = layout.prefix.as_ref().map(|p| p.join("bin"));
    let _ = writeln!(
        s,
        "  bin:              {}",
        bin.as_deref().unwrap_or(&layout.lib).display()
    );
    let _ = writeln!(s, "  include:          {}", layout.include.display());
    let _ = writeln!(s, "  lib:              {}", layout.lib.display());
    for (label, rel) in [
        ("cmake package:", "cmake/hympi/hympiConfig.cmake"),
        ("pkg-config file:", "pkgconfig/hympi.pc"),
    ] {
        let f = layout.lib.join(rel);
        let shown = if f.is_file() {
            f.display().to_string()
        } else {
            "(not installed)".to_string()
        };
        let _ = writeln!(s, "  {label:<17} {shown}");
    }
    let mut libs = Vec::new();
    for name in ["libhympi.a", "libhympi.so", "libmpi_abi.so.1"] {
        if layout.lib.join(name).exists() {
            libs.push(name);
        }
    }
    let _ = writeln!(s, "  libraries:        {}", libs.join(" "));
    let _ = writeln!(
        s,
        "build:              {} {}, {}",
        std::env::consts::ARCH,
        std::env::consts::OS,
        if cfg!(debug_assertions) {
            "debug assertions on"
        } else {
            "release (no debug assertions)"
        }
    );
    let _ = writeln!(s, "features:");
    for (feature, what) in [
        (
            "shm",
            "on-node transport: memfd segment, lock-free cell queues, fastboxes",
        ),
        (
            "cma",
            "single-copy rendezvous with process_vm_readv/writev (HYMPI_CMA)",
        ),
        (
            "hwloc",
            "hympiexec --bind-to, MPI_Comm_split_type HW_GUIDED levels",
        ),
        (
            "pmi-1",
            "launch by hympiexec or MPICH Hydra; singleton without a launcher",
        ),
        (
            "libfabric",
            "not built: jobs spanning nodes fail at MPI_Init",
        ),
    ] {
        let _ = writeln!(s, "  {feature:<10} {what}");
    }
    let _ = writeln!(s, "configuration knobs (environment):");
    let width = KNOBS.iter().map(|k| k.name.len()).max().unwrap_or(0);
    for k in KNOBS {
        let current = match get(k.name) {
            Some(v) => format!("{v} (set)"),
            None => format!("{} (default)", k.default),
        };
        let _ = writeln!(
            s,
            "  {:<width$}  = {current}; default {}\n  {:<width$}    {}",
            k.name, k.default, "", k.doc
        );
    }
    let others: Vec<_> = env
        .iter()
        .filter(|(k, _)| {
            k.starts_with("HYMPI_")
                && !KNOBS.iter().any(|n| n.name == k)
                && !COLL_ALGORITHM_KNOBS.iter().any(|c| c.1 == k)
        })
        .collect();
    if !others.is_empty() {
        let _ = writeln!(s, "other HYMPI_* variables set:");
        for (k, v) in others {
            let _ = writeln!(s, "  {k}={v}");
        }
    }
    s
}

fn main() {
    if std::env::args()
        .nth(1)
        .is_some_and(|a| a == "--version" || a == "-V")
    {
        println!("hympi {}", env!("CARGO_PKG_VERSION"));
        return;
    }
    if std::env::args().nth(1).is_some_and(|a| a == "--knob-table") {
        // The README's knob table, from the knob registry.
        print!("{}", hympi::platform::config::markdown_table());
        return;
    }
    let layout = wrapper::own_layout("hympi-info");
    let mut env: Vec<(String, String)> = std::env::vars().collect();
    env.sort();
    print!("{}", report(&layout, &env));
}

#[cfg(test)]
mod info_tests {
    use super::*;

    #[test]
    fn knobs_show_default_and_current_values() {
        let l = wrapper::Layout {
            include: "/p/include".into(),
            lib: "/p/lib".into(),
            prefix: Some("/p".into()),
        };
        let env = vec![
            ("HYMPI_EAGER_MAX".to_string(), "4096".to_string()),
            ("HYMPI_BCAST_ALGORITHM".to_string(), "knomial".to_string()),
        ];
        let r = report(&l, &env);
        assert!(r.contains("= 4096 (set); default 16320"), "{r}");
        assert!(r.contains("HYMPI_CMA"), "{r}");
        assert!(r.contains("1 (default); default 1"), "{r}");
        assert!(r.contains("HYMPI_BCAST_ALGORITHM=knomial"), "{r}");
        assert!(r.contains("install prefix:     /p"), "{r}");
        assert!(r.contains(&format!(
            "MPI standard:       {MPI_VERSION}.{MPI_SUBVERSION}"
        )));
    }
}
