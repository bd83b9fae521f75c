//! The name service (MPI-5.0 §11.10.3): `MPI_Publish_name`, `MPI_Lookup_name`,
//! `MPI_Unpublish_name`.
//!
//! Jobs started apart share nothing but the file system, so the service is a directory
//! (`HYMPI_NAME_DIR`, by default `hympi-names-UID` in the temporary directory, mode 0700):
//! a published service is a file named by the service name's hex, holding the port name
//! and its publisher (host, boot id, pid). Publishing links a complete file into place, so
//! a name is published once and readers never see half a record. A record whose publisher
//! is gone (same machine, no such process) is stale: lookups ignore it and a new publisher
//! replaces it; a process's names are unpublished at `MPI_Finalize`.

use crate::core::error::{fail, MpiError, MpiResult};
use crate::mpi_abi::consts::*;
use crate::platform::config::{self, Knob};
use crate::transport::ofi::hex;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The service's directory, created if need be.
fn dir() -> MpiResult<PathBuf> {
    let d = match config::text(Knob::NameDir) {
        s if s.is_empty() => {
            let uid = std::fs::metadata("/proc/self").map_or(0, |m| m.uid());
            std::env::temp_dir().join(format!("hympi-names-{uid}"))
        }
        s => PathBuf::from(s),
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&d)
        .map_err(|e| {
            MpiError::new(
                MPI_ERR_OTHER,
                format!("name service directory {}: {e}", d.display()),
            )
        })?;
    Ok(d)
}

/// This process as a publisher: host, boot id, pid.
fn me() -> String {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    format!(
        "{} {} {}",
        read("/proc/sys/kernel/hostname"),
        read("/proc/sys/kernel/random/boot_id"),
        std::process::id()
    )
}

/// Whether publisher `who` (as [`me`] writes it) is a process gone from this machine.
fn gone(who: &str) -> bool {
    let mine = me();
    let mut a = who.split(' ');
    let mut b = mine.split(' ');
    let same_machine = a.next() == b.next() && a.next() == b.next();
    match (same_machine, a.next().and_then(|p| p.parse::<u32>().ok())) {
        (true, Some(pid)) => !Path::new(&format!("/proc/{pid}")).exists(),
        _ => false,
    }
}

/// The record of `service`: (port name, publisher).
fn read(path: &Path) -> Option<(String, String)> {
    let text = std::fs::read_to_string(path).ok()?;
    let (port, who) = text.split_once('\n')?;
    Some((port.to_string(), who.trim_end().to_string()))
}

/// The file of `service`.
fn file_of(d: &Path, service: &str) -> PathBuf {
    d.join(hex(service.as_bytes()))
}

/// Services this process published and has not withdrawn: (service, port).
static PUBLISHED: parking_lot::Mutex<Vec<(String, String)>> = parking_lot::Mutex::new(Vec::new());

/// `MPI_Publish_name`: publishes `port` under `service`.
pub fn publish(service: &str, port: &str) -> MpiResult<()> {
    crate::core::objects::dynamic::check_own_port(port)?;
    if service.is_empty() {
        return fail(MPI_ERR_SERVICE, "the service name is empty");
    }
    let d = dir()?;
    let path = file_of(&d, service);
    let io = |e: std::io::Error| MpiError::new(MPI_ERR_OTHER, format!("name service: {e}"));
    let tmp = d.join(format!(
        ".{}.{}",
        std::process::id(),
        hex(service.as_bytes())
    ));
    std::fs::write(&tmp, format!("{port}\n{}\n", me())).map_err(io)?;
    let mut linked = std::fs::hard_link(&tmp, &path);
    if linked.is_err() && read(&path).is_some_and(|(_, who)| gone(&who)) {
        // A dead publisher's record: replace it.
        let _ = std::fs::remove_file(&path);
        linked = std::fs::hard_link(&tmp, &path);
    }
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => {
            PUBLISHED
                .lock()
                .push((service.to_string(), port.to_string()));
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => fail(
            MPI_ERR_SERVICE,
            format!("the service {service:?} is already published"),
        ),
        Err(e) => Err(io(e)),
    }
}

/// `MPI_Lookup_name`: the port published under `service`.
pub fn lookup(service: &str) -> MpiResult<String> {
    let d = dir()?;
    match read(&file_of(&d, service)) {
        Some((port, who)) if !gone(&who) => Ok(port),
        _ => fail(
            MPI_ERR_NAME,
            format!("no service {service:?} is published (MPI_Publish_name)"),
        ),
    }
}

/// `MPI_Unpublish_name`: withdraws `service`, which this process published for `port`.
pub fn unpublish(service: &str, port: &str) -> MpiResult<()> {
    let d = dir()?;
    let path = file_of(&d, service);
    match read(&path) {
        Some((p, who)) if p == port && who == me() => {
            PUBLISHED
                .lock()
                .retain(|(s, p)| (s.as_str(), p.as_str()) != (service, port));
            std::fs::remove_file(&path)
                .map_err(|e| MpiError::new(MPI_ERR_OTHER, format!("name service: {e}")))
        }
        _ => fail(
            MPI_ERR_SERVICE,
            format!("this process has not published the service {service:?} for that port"),
        ),
    }
}

/// Withdraws every service this process still has published (at `MPI_Finalize`).
pub fn withdraw_all() {
    let all = std::mem::take(&mut *PUBLISHED.lock());
    for (service, port) in all {
        let _ = unpublish(&service, &port);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn publishers_of_this_machine_that_are_gone_are_stale() {
        assert!(!gone(&me()), "this process is alive");
        let m = me();
        let (machine, _) = m.rsplit_once(' ').unwrap();
        assert!(gone(&format!("{machine} 4294967")), "no such pid");
        assert!(
            !gone("elsewhere 0-0 4294967"),
            "another machine's process is not judged"
        );
        assert!(!gone("garbage"));
    }
}
