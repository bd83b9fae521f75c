//! Signals as bytes on a pipe (the self-pipe trick), so the event loop's `poll` wakes on them.
//!
//! SIGCHLD wakes the loop to reap ranks; SIGINT, SIGTERM, SIGHUP and SIGQUIT are reported so the
//! loop can forward them to the ranks.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicI32, Ordering};

/// Write end of the pipe, read by the handler (-1 before [`install`]).
static WRITE_FD: AtomicI32 = AtomicI32::new(-1);

/// The signals the launcher forwards to its ranks.
pub const FORWARDED: [i32; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

extern "C" fn on_signal(sig: libc::c_int) {
    // SAFETY: __errno_location returns this thread's errno slot; saving and restoring it keeps
    // the interrupted code's errno intact. write(2) is async-signal-safe; the pipe is
    // non-blocking, so a full pipe drops the byte instead of blocking (the loop still wakes).
    unsafe {
        let errno = *libc::__errno_location();
        let fd = WRITE_FD.load(Ordering::Relaxed);
        if fd >= 0 {
            let byte = sig as u8;
            libc::write(fd, (&byte as *const u8).cast(), 1);
        }
        *libc::__errno_location() = errno;
    }
}

/// The read end of the signal pipe.
pub struct SignalPipe {
    read: File,
}

impl SignalPipe {
    /// Drains the pipe and returns the signals received since the last call, in order.
    pub fn take(&mut self) -> Vec<i32> {
        let mut buf = [0u8; 64];
        let mut out = Vec::new();
        loop {
            match self.read.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => out.extend(buf[..n].iter().map(|&b| i32::from(b))),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break, // WouldBlock: drained.
            }
        }
        out
    }

    /// The descriptor to poll for readability.
    pub fn as_file(&self) -> &File {
        &self.read
    }
}

/// Creates the pipe and installs the handlers for SIGCHLD and the forwarded signals.
pub fn install() -> io::Result<SignalPipe> {
    let mut fds = [0i32; 2];
    // SAFETY: fds has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // The write end lives as long as the process: the handler may run at any time.
    WRITE_FD.store(
        std::os::fd::IntoRawFd::into_raw_fd(write),
        Ordering::Relaxed,
    );
    for sig in FORWARDED.iter().copied().chain([libc::SIGCHLD]) {
        // SAFETY: an all-zero sigaction is a valid starting value; we then set the handler, an
        // empty mask and flags, and install it for a catchable signal.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = libc::SA_RESTART
                | if sig == libc::SIGCHLD {
                    libc::SA_NOCLDSTOP
                } else {
                    0
                };
            if libc::sigaction(sig, &sa, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(SignalPipe {
        read: File::from(read),
    })
}
