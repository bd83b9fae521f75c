//! Starting one rank: its PMI socket, its output pipes, its environment and its CPU binding.
//!
//! The PMI channel is one end of a `socketpair(AF_UNIX)` inherited by the rank and named by
//! `PMI_FD`. It has no name in the filesystem and is reachable only by the launcher and that
//! one rank, so no other user or job can connect to it and nothing is left to clean up: this is
//! how the "socket only for its owner, with a per-job token" requirement is met.

use crate::binding::Domain;
use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

/// Variables of another launcher that must not reach the ranks.
const FOREIGN_PMI_VARS: [&str; 3] = ["PMI_PORT", "PMI_ID", "PMI_SPAWNED"];

/// What is common to all ranks of a job.
pub struct JobSpec<'a> {
    /// Program to run.
    pub program: &'a OsString,
    /// Its arguments.
    pub args: &'a [OsString],
    /// Number of ranks.
    pub np: usize,
    /// Extra variables (from `-x`), applied after the inherited environment.
    pub env: &'a [(String, OsString)],
    /// Ranks per virtual node (`--nodes`, `-ppn`); `None`: all on this node.
    pub per_node: Option<usize>,
    /// Several programs (MPMD), in rank order; empty: `program` for every rank.
    pub apps: &'a [crate::args::App],
}

/// Where one rank runs: its place among the ranks of its node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// Its index among the ranks of its node.
    pub local_rank: usize,
    /// Ranks on its node.
    pub local_size: usize,
    /// The node's name (`HYMPI_NODE`), when the launcher names it.
    pub node: Option<String>,
    /// Ranks of the job on this machine (`HYMPI_HOST_RANKS`).
    pub host_ranks: usize,
    /// Keep the network transport on 127.0.0.1 (virtual nodes of one machine).
    pub loopback: bool,
}

impl JobSpec<'_> {
    /// The program, arguments, working directory and application number of `rank`.
    pub fn app_of(&self, rank: usize) -> (&OsString, &[OsString], Option<&OsString>, usize) {
        let mut first = 0;
        for (i, a) in self.apps.iter().enumerate() {
            if rank < first + a.np {
                return (&a.program, &a.args, a.wdir.as_ref(), i);
            }
            first += a.np;
        }
        (self.program, self.args, None, 0)
    }

    /// The place of `rank` in a job run on this machine (one node, or virtual nodes).
    pub fn place(&self, rank: usize) -> Place {
        match self.per_node {
            Some(p) => Place {
                local_rank: rank % p,
                local_size: p.min(self.np - rank / p * p),
                node: Some(format!("{}-vnode{}", host_name(), rank / p)),
                host_ranks: self.np,
                loopback: true,
            },
            None => Place {
                local_rank: rank,
                local_size: self.np,
                node: None,
                host_ranks: self.np,
                loopback: false,
            },
        }
    }
}

/// A started rank and the launcher's ends of its channels.
pub struct Started {
    /// The child process.
    pub child: Child,
    /// The launcher's end of the PMI socket (close-on-exec, non-blocking).
    pub pmi: File,
    /// The read end of the rank's stdout.
    pub stdout: File,
    /// The read end of the rank's stderr.
    pub stderr: File,
}

/// Creates a connected `AF_UNIX` stream socket pair, both ends close-on-exec.
fn socketpair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: fds has room for the two descriptors socketpair writes.
    let rc = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: socketpair succeeded: both descriptors are open and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Moves `fd` to a number ≥ 3 (close-on-exec), so the child's stdio set-up cannot clobber it.
fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: fd is open; F_DUPFD_CLOEXEC returns a new descriptor ≥ 3 or -1.
    let new = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fcntl returned a fresh descriptor that nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: fd is open; F_GETFL/F_SETFL only read and change its status flags.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Builds the affinity mask for `cpus` (CPUs beyond `CPU_SETSIZE` are left out).
fn cpu_set(cpus: &[usize]) -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is a plain bit array; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
        // SAFETY: cpu < CPU_SETSIZE, so the bit lies inside `set`.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    set
}

/// This machine's host name.
fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0 {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).into_owned()
    } else {
        "localhost".into()
    }
}

/// Whether the rank's environment sets `var` (the launcher's own, or `-x`).
fn env_sets(job: &JobSpec<'_>, var: &str) -> bool {
    std::env::var_os(var).is_some() || job.env.iter().any(|(k, _)| k == var)
}

/// Starts rank `rank` of `job` at `place`, bound to `domain` when given (which also sets
/// `OMP_NUM_THREADS`, `OMP_PLACES` and `OMP_PROC_BIND` to match, unless the environment sets
/// them). Rank 0 inherits stdin when `stdin_to_rank0`; the others read from /dev/null.
pub fn start(
    job: &JobSpec<'_>,
    rank: usize,
    place: &Place,
    domain: Option<&Domain>,
    stdin_to_rank0: bool,
) -> io::Result<Started> {
    let cpus = domain.map(|d| d.cpus.as_slice());
    let (ours, theirs) = socketpair()?;
    let ours = above_stdio(ours)?;
    let theirs = above_stdio(theirs)?;
    set_nonblocking(&ours)?;
    let child_fd = theirs.as_raw_fd();
    let affinity = cpus.map(cpu_set);
    // SAFETY: getpid has no preconditions.
    let launcher = unsafe { libc::getpid() };

    let (program, args, wdir, _) = job.app_of(rank);
    let mut cmd = Command::new(program);
    cmd.args(args);
    if let Some(d) = wdir {
        cmd.current_dir(d);
    }
    for var in FOREIGN_PMI_VARS {
        cmd.env_remove(var);
    }
    cmd.env("PMI_FD", child_fd.to_string())
        .env("PMI_RANK", rank.to_string())
        .env("PMI_SIZE", job.np.to_string())
        .env("HYMPI_LOCAL_RANK", place.local_rank.to_string())
        .env("HYMPI_LOCAL_SIZE", place.local_size.to_string());
    cmd.env("HYMPI_HOST_RANKS", place.host_ranks.to_string());
    // How a rank's MPI_Comm_spawn starts its children (unless the user chose a launcher).
    if std::env::var_os("HYMPIEXEC").is_none() {
        if let Ok(me) = std::env::current_exe() {
            cmd.env("HYMPIEXEC", me);
        }
    }
    if let Some(node) = &place.node {
        cmd.env("HYMPI_NODE", node);
    }
    if place.loopback && std::env::var_os("HYMPI_OFI_ADDR").is_none() {
        // Virtual nodes of this host: the network transport stays on loopback.
        cmd.env("HYMPI_OFI_ADDR", "127.0.0.1");
    }
    if let Some(d) = domain {
        cmd.env("HYMPI_DOMAIN_CPUS", d.cpus.len().to_string());
        let omp = [
            ("OMP_NUM_THREADS", d.cores.len().max(1).to_string()),
            ("OMP_PLACES", d.omp_places()),
            ("OMP_PROC_BIND", "close".to_string()),
        ];
        for (k, v) in omp {
            if !env_sets(job, k) {
                cmd.env(k, v);
            }
        }
    }
    for (k, v) in job.env {
        cmd.env(k, v);
    }
    cmd.stdin(if rank == 0 && stdin_to_rank0 {
        Stdio::inherit()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    // SAFETY: the closure runs in the child between fork and exec and only makes
    // async-signal-safe system calls (prctl, getppid, sched_setaffinity, fcntl) on data
    // prepared beforehand; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            // If the launcher dies (even by SIGKILL), its ranks die too.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != launcher {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            if let Some(set) = &affinity {
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            // The rank's end of the PMI socket survives exec.
            if libc::fcntl(child_fd, libc::F_SETFD, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    drop(theirs);
    let stdout = child.stdout.take().map(OwnedFd::from);
    let stderr = child.stderr.take().map(OwnedFd::from);
    match (stdout, stderr) {
        (Some(o), Some(e)) => Ok(Started {
            child,
            pmi: File::from(ours),
            stdout: File::from(o),
            stderr: File::from(e),
        }),
        _ => Err(io::Error::other("child output pipes missing")),
    }
}
