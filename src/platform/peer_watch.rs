//! Watching the node's other ranks: when one ends before `MPI_Finalize`, this rank is told at
//! once, instead of waiting forever for messages that will never come.
//!
//! `hympiexec` ends a job itself when a rank dies, and so does Hydra; Slurm does not unless
//! the job was started with `srun --kill-on-bad-exit` (or the site sets `KillOnBadExit`). A
//! [`PeerWatch`] is a thread blocked in `poll` on a pidfd per local peer (Linux 5.3+) and an
//! eventfd that stops it; when a peer's process ends and its flag says it had not started
//! finalising, the watch hands a report to its `on_death` callback (the runtime's prints it and
//! exits the process, so that the launcher sees every rank of the node end).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::thread::JoinHandle;

/// A rank of this node to watch.
pub struct Peer {
    /// Its rank in `MPI_COMM_WORLD` (for the report).
    pub world_rank: i32,
    /// Its process id.
    pub pid: i32,
    /// Whether it had started `MPI_Finalize` (an exit after that is a normal one).
    pub finalizing: Box<dyn Fn() -> bool + Send>,
}

/// The watching thread; dropping it stops the thread and waits for it.
pub struct PeerWatch {
    stop: OwnedFd,
    thread: Option<JoinHandle<()>>,
}

/// `pidfd_open(pid, 0)`.
fn pidfd_open(pid: i32) -> io::Result<OwnedFd> {
    // SAFETY: the syscall takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

impl PeerWatch {
    /// Starts watching `peers`; `on_death` gets the world rank of the first peer found ended
    /// before finalising and a report naming it (the thread ends after calling it). Fails when the kernel has no
    /// pidfds; a peer already gone counts as ended.
    pub fn start(
        peers: Vec<Peer>,
        on_death: Box<dyn FnOnce(i32, String) + Send>,
    ) -> io::Result<PeerWatch> {
        // SAFETY: eventfd takes an initial value and flags and returns a new descriptor or -1.
        let efd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
        if efd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the descriptor was just created and is owned by no one else.
        let stop = unsafe { OwnedFd::from_raw_fd(efd) };
        let mut watched = Vec::with_capacity(peers.len());
        for p in peers {
            match pidfd_open(p.pid) {
                Ok(fd) => watched.push((p, Some(fd))),
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => watched.push((p, None)),
                Err(e) => return Err(e),
            }
        }
        let stop_fd = stop.as_raw_fd();
        let thread = std::thread::Builder::new()
            .name("hympi-peer-watch".into())
            .spawn(move || watch(stop_fd, watched, on_death))?;
        Ok(PeerWatch {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for PeerWatch {
    fn drop(&mut self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our eventfd.
        unsafe { libc::write(self.stop.as_raw_fd(), (&one as *const u64).cast(), 8) };
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The thread: poll until stopped or a peer ends before finalising.
fn watch(
    stop_fd: RawFd,
    mut peers: Vec<(Peer, Option<OwnedFd>)>,
    on_death: Box<dyn FnOnce(i32, String) + Send>,
) {
    loop {
        // Peers already gone (no pidfd) are judged at once.
        if let Some(i) = peers.iter().position(|(_, fd)| fd.is_none()) {
            let (p, _) = peers.swap_remove(i);
            if !(p.finalizing)() {
                return on_death(p.world_rank, report(&p));
            }
            continue;
        }
        let mut fds: Vec<libc::pollfd> = std::iter::once(stop_fd)
            .chain(
                peers
                    .iter()
                    .filter_map(|(_, fd)| fd.as_ref().map(|f| f.as_raw_fd())),
            )
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // SAFETY: `fds` is a live array of `fds.len()` pollfd structures.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if n < 0 {
            if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return;
        }
        if fds[0].revents != 0 {
            return;
        }
        // A readable pidfd: that process has ended; drop its descriptor and judge it above.
        for (k, pfd) in fds.iter().enumerate().skip(1) {
            if pfd.revents != 0 {
                peers[k - 1].1 = None;
            }
        }
    }
}

fn report(p: &Peer) -> String {
    format!(
        "rank {} (pid {}) of this node ended before MPI_Finalize",
        p.world_rank, p.pid
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{mpsc, Arc};
    use std::time::Duration;

    fn child(secs: &str) -> std::process::Child {
        Command::new("sleep").arg(secs).spawn().unwrap()
    }

    #[test]
    fn reports_a_peer_that_ends_before_finalizing() {
        let mut c = child("0.1");
        let (tx, rx) = mpsc::channel();
        let w = PeerWatch::start(
            vec![Peer {
                world_rank: 3,
                pid: c.id() as i32,
                finalizing: Box::new(|| false),
            }],
            Box::new(move |_, r| tx.send(r).unwrap()),
        )
        .unwrap();
        let r = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(r.starts_with("rank 3 (pid "), "{r}");
        c.wait().unwrap();
        drop(w);
    }

    #[test]
    fn a_finalizing_peer_may_end_and_drop_stops_the_thread() {
        let mut quick = child("0.05");
        let mut slow = child("30");
        let flag = Arc::new(AtomicBool::new(true));
        let f = flag.clone();
        let (tx, rx) = mpsc::channel::<String>();
        let w = PeerWatch::start(
            vec![
                Peer {
                    world_rank: 1,
                    pid: quick.id() as i32,
                    finalizing: Box::new(move || f.load(Ordering::Relaxed)),
                },
                Peer {
                    world_rank: 2,
                    pid: slow.id() as i32,
                    finalizing: Box::new(|| false),
                },
            ],
            Box::new(move |_, r| tx.send(r).unwrap()),
        )
        .unwrap();
        quick.wait().unwrap();
        assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
        drop(w);
        slow.kill().unwrap();
        slow.wait().unwrap();
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
    }
}
