//! Starting processes (MPI-5.0 §11.8): `MPI_Comm_spawn` starts the children as a job of their
//! own, launched by `hympiexec` from the spawning root, and connects to them with the
//! machinery of `core::objects::dynamic`. The root opens a port and passes its name in the
//! children's environment ([`PARENT_PORT_VAR`]); the children's `MPI_Init` connects their
//! `MPI_COMM_WORLD` to it ([`connect_parent`]) while the parents accept on the spawning
//! communicator. The intercommunicator is the children's parent (`MPI_Comm_get_parent`).
//! The root watches the launcher while it waits: a job that ends before it connects (a
//! program that cannot start, a child that dies in `MPI_Init`) makes the spawn fail with
//! `MPI_ERR_SPAWN` instead of waiting forever.

use crate::core::error::{fail, MpiError, MpiResult};
use crate::core::objects::dynamic::{close_port, establish_with, open_port};
use crate::core::runtime;
use crate::mpi_abi::consts::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The environment variable that hands the children their parent's port.
pub const PARENT_PORT_VAR: &str = "HYMPI_PARENT_PORT";

/// The environment variable naming the launcher to start children with (`hympiexec` sets it
/// for its ranks to its own path); else see [`launcher`].
pub const LAUNCHER_VAR: &str = "HYMPIEXEC";

/// The launcher's file name.
const LAUNCHER: &str = "hympiexec";

/// The launcher to start children with: [`LAUNCHER_VAR`]; else `hympiexec` in `PATH`; else
/// the one installed beside the library this code runs from (`<prefix>/lib/libhympi.so` ->
/// `<prefix>/bin/hympiexec`: a singleton of a program linked with the shared library, such
/// as mpi4py's); else the one built with this library (its cargo target directory).
fn launcher() -> Option<PathBuf> {
    if let Some(l) = std::env::var_os(LAUNCHER_VAR) {
        return Some(l.into());
    }
    if let Some(p) = resolve(LAUNCHER, None, None) {
        return Some(p);
    }
    let beside_library =
        library_path().and_then(|l| Some(l.parent()?.parent()?.join("bin").join(LAUNCHER)));
    let built = option_env!("HYMPI_BUILD_BIN_DIR").map(|d| Path::new(d).join(LAUNCHER));
    [beside_library, built]
        .into_iter()
        .flatten()
        .find(|p| resolve(&p.to_string_lossy(), None, None).is_some())
}

/// The file this code was loaded from (the shared library, or the executable it is linked
/// into), from `/proc/self/maps`.
fn library_path() -> Option<PathBuf> {
    let here = library_path as *const () as usize;
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|line| {
        let mut f = line.split_whitespace();
        let (lo, hi) = f.next()?.split_once('-')?;
        let (lo, hi) = (
            usize::from_str_radix(lo, 16).ok()?,
            usize::from_str_radix(hi, 16).ok()?,
        );
        let path = f.nth(4)?;
        (lo <= here && here < hi && path.starts_with('/')).then(|| PathBuf::from(path))
    })
}

/// Variables of the parent's environment that describe its own place in its job, not the
/// children's: not passed on.
const NOT_PASSED: [&str; 13] = [
    "PMI_FD",
    "PMI_RANK",
    "PMI_SIZE",
    "PMI_PORT",
    "PMI_ID",
    "PMI_JOBID",
    "PMI_SPAWNED",
    "HYMPI_LOCAL_RANK",
    "HYMPI_LOCAL_SIZE",
    "HYMPI_HOST_RANKS",
    "HYMPI_NODE",
    "HYMPI_DOMAIN_CPUS",
    PARENT_PORT_VAR,
];

/// What the root of `MPI_Comm_spawn` asks for.
#[derive(Clone, Debug, Default)]
pub struct SpawnRequest {
    /// The program.
    pub command: String,
    /// Its arguments.
    pub argv: Vec<String>,
    /// How many processes.
    pub maxprocs: i32,
    /// Info `host`: where to start them (`hympiexec --hosts`).
    pub host: Option<String>,
    /// Info `wdir`: their working directory.
    pub wdir: Option<String>,
    /// Info `path`: directories (`:`-separated) to find the program in, before `PATH`.
    pub path: Option<String>,
}

/// The program to run: `command` itself when it names a path, else the first executable
/// `command` in the `path` directories, then in `PATH`.
fn resolve(command: &str, path: Option<&str>, wdir: Option<&str>) -> Option<PathBuf> {
    let executable = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if command.contains('/') {
        let p = Path::new(command);
        let at = match wdir {
            Some(d) if p.is_relative() => Path::new(d).join(p),
            _ => p.to_path_buf(),
        };
        return executable(&at).then(|| at.to_path_buf());
    }
    let sys = std::env::var("PATH").unwrap_or_default();
    path.into_iter()
        .chain(std::iter::once(sys.as_str()))
        .flat_map(|dirs| dirs.split(':'))
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(command))
        .find(|p| executable(p))
}

/// Starts the children of `reqs` (one program each, in order: several make one job of
/// several programs, `hympiexec`'s `:`) with the launcher, handing them `port`.
fn start(reqs: &[SpawnRequest], port: &str) -> MpiResult<Child> {
    let spawn_err = |m: String| MpiError::new(MPI_ERR_SPAWN, m);
    let Some(launcher) = launcher() else {
        return fail(
            MPI_ERR_SPAWN,
            format!("no launcher to start the children with: set {LAUNCHER_VAR} to hympiexec's path, or put it in PATH"),
        );
    };
    let mut cmd = Command::new(&launcher);
    // The parents keep their cores: the children run unbound beside them.
    cmd.arg("--bind-to").arg("none");
    let hosts: Vec<&String> = reqs.iter().filter_map(|r| r.host.as_ref()).collect();
    if let Some(h) = hosts.first() {
        if reqs.len() > 1 {
            return fail(
                MPI_ERR_SPAWN,
                "info key host is not supported with several commands (MPI_Comm_spawn_multiple)",
            );
        }
        cmd.arg("--hosts").arg(h);
    }
    let here = std::env::current_dir().map_err(|e| spawn_err(format!("current directory: {e}")))?;
    for (i, req) in reqs.iter().enumerate() {
        if req.maxprocs <= 0 {
            return fail(
                MPI_ERR_SPAWN,
                format!("maxprocs is {} (it must be positive)", req.maxprocs),
            );
        }
        let program =
            resolve(&req.command, req.path.as_deref(), req.wdir.as_deref()).ok_or_else(|| {
                spawn_err(format!(
                    "cannot find the program {:?} to spawn",
                    req.command
                ))
            })?;
        if req.argv.iter().any(|a| a == ":") {
            return fail(
                MPI_ERR_SPAWN,
                "an argument ':' cannot be passed to spawned processes",
            );
        }
        if i > 0 {
            cmd.arg(":");
        }
        let wdir = req.wdir.as_ref().map_or(here.clone(), PathBuf::from);
        cmd.arg("-n")
            .arg(req.maxprocs.to_string())
            .arg("-wdir")
            .arg(&wdir)
            .arg(&program)
            .args(&req.argv);
    }
    for v in NOT_PASSED {
        cmd.env_remove(v);
    }
    cmd.env(PARENT_PORT_VAR, port).stdin(Stdio::null());
    cmd.spawn().map_err(|e| {
        spawn_err(format!(
            "cannot start the launcher {} to spawn {:?}: {e} (set {LAUNCHER_VAR} to hympiexec's path)",
            Path::new(&launcher).display(),
            reqs[0].command
        ))
    })
}

/// `MPI_Comm_spawn` (one request) and `MPI_Comm_spawn_multiple`: collective over
/// intracommunicator `comm_h`; `reqs` is read at `root` only. The intercommunicator with
/// the children, who share one `MPI_COMM_WORLD` (the programs' ranks in order).
pub fn comm_spawn(reqs: &[SpawnRequest], root: i32, comm_h: usize) -> MpiResult<usize> {
    let is_root = runtime::with(|rt| {
        let (_, c) = rt.comm_plain(comm_h)?;
        Ok(c.rank == root)
    })?;
    let mut early = None;
    let mut child = None;
    let mut port = String::new();
    if is_root {
        match open_port().and_then(|p| {
            port = p;
            start(reqs, &port)
        }) {
            Ok(c) => child = Some(c),
            Err(e) => early = Some(e),
        }
    }
    let what = reqs
        .iter()
        .map(|r| format!("{} of {:?}", r.maxprocs, r.command))
        .collect::<Vec<_>>()
        .join(", ");
    let mut abandon = || -> MpiResult<()> {
        if let Some(e) = early.take() {
            return Err(e);
        }
        match child.as_mut().map(|c| c.try_wait()) {
            Some(Ok(Some(status))) => fail(
                MPI_ERR_SPAWN,
                format!("the spawned job ({what}) ended ({status}) before its processes connected"),
            ),
            _ => Ok(()),
        }
    };
    let made = establish_with(&port, root, comm_h, true, MPI_ERR_SPAWN, &mut abandon);
    if !port.is_empty() {
        close_port(&port)?;
    }
    if let Some(mut c) = child {
        if made.is_err() {
            let _ = c.kill();
        }
        // Reaped when it ends; the children's job lives on its own once connected.
        std::thread::spawn(move || c.wait());
    }
    made
}

/// At `MPI_Init` of a spawned process: connects `MPI_COMM_WORLD` to the parents' port, the
/// intercommunicator becoming `MPI_Comm_get_parent`'s. Nothing when not spawned.
pub fn connect_parent() -> MpiResult<()> {
    let Ok(port) = std::env::var(PARENT_PORT_VAR) else {
        return Ok(());
    };
    let h = establish_with(&port, 0, MPI_COMM_WORLD, false, MPI_ERR_SPAWN, &mut || {
        Ok(())
    })?;
    runtime::with(|rt| {
        rt.parent = h;
        Ok(())
    })
}

/// `MPI_Comm_get_parent`: the intercommunicator with the parents, while it is not freed or
/// disconnected; else `MPI_COMM_NULL`.
pub fn parent() -> MpiResult<usize> {
    runtime::with(|rt| {
        let alive = rt.parent != MPI_COMM_NULL && rt.comms.decode(rt.parent).is_some();
        Ok(if alive { rt.parent } else { MPI_COMM_NULL })
    })
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn this_code_comes_from_the_test_executable() {
        let exe = std::env::current_exe().unwrap();
        assert_eq!(
            library_path().map(|p| p.file_name().map(|f| f.to_owned())),
            Some(exe.file_name().map(|f| f.to_owned()))
        );
    }

    #[test]
    fn programs_are_found_by_path_and_in_path_lists() {
        assert!(resolve("sh", None, None).is_some(), "sh in PATH");
        assert_eq!(
            resolve("/bin/sh", None, None),
            Some(PathBuf::from("/bin/sh"))
        );
        assert_eq!(
            resolve("sh", Some("/bin"), None),
            Some(PathBuf::from("/bin/sh"))
        );
        assert_eq!(
            resolve("./sh", None, Some("/bin")),
            Some(PathBuf::from("/bin/./sh"))
        );
        assert_eq!(resolve("no-such-program-here", None, None), None);
        assert_eq!(resolve("/etc/passwd", None, None), None, "not executable");
        assert_eq!(resolve("/etc", None, None), None, "a directory");
    }
}
