//! Measures the contention-aware CMA cost model on this machine (the CMA paper's Table II
//! parameters, `papers/contention-aware-cma-collectives.md` §3): a child process holds a
//! buffer of pre-touched pages; `c` threads of this process read all of it at once with
//! `process_vm_readv`, for `c = 1 ..= readers`.
//!
//! - `alpha` is the median time of a 1-byte read;
//! - `page * beta` is the time `memcpy` takes per page here (the copy the kernel does);
//! - the rest of a read's per-page time with `c` readers, `e(c) = t(c) - page * beta`, is the
//!   page locking and pinning `l * gamma(c)`; `gamma(c) = a c^2 + b c` is fitted to it by
//!   least squares with `gamma(1) = 1` setting the scale (`l = e(1)`).
//!
//! The paper measures `l` alone with a read into an empty local buffer; current kernels stop
//! such a read before pinning anything, hence the normalisation.

use super::cma_model::{Cma, BUILT_IN};
use std::io;
use std::time::Instant;

/// What the calibration measured.
#[derive(Clone, Debug)]
pub struct Calibration {
    /// The fitted model ([`BUILT_IN`]'s CMA threshold, everything else measured here).
    pub model: Cma,
    /// Measured seconds per page of a read with `c` concurrent readers, `c = 1, 2, ...`.
    pub per_page: Vec<f64>,
}

/// A child process holding `bytes` of touched memory until dropped.
struct Target {
    pid: libc::pid_t,
    addr: u64,
    release: libc::c_int,
}

impl Target {
    fn start(bytes: usize) -> io::Result<Target> {
        let mut to_parent = [0 as libc::c_int; 2];
        let mut to_child = [0 as libc::c_int; 2];
        for fds in [&mut to_parent, &mut to_child] {
            // SAFETY: pipe() writes two descriptors into an array of two.
            if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        let buf = vec![0x5au8; bytes];
        // SAFETY: the child only writes to a pipe, reads from one and exits, all
        // async-signal-safe calls, so other threads of this process do not matter.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            let addr = buf.as_ptr() as u64;
            let mut byte = 0u8;
            // SAFETY: plain descriptor I/O on the pipes made above, then _exit. The child
            // closes its copy of the release end first, so the parent closing its own is EOF.
            unsafe {
                libc::close(to_child[1]);
                libc::close(to_parent[0]);
                libc::write(to_parent[1], (&addr as *const u64).cast(), 8);
                libc::read(to_child[0], (&mut byte as *mut u8).cast(), 1);
                libc::_exit(0);
            }
        }
        drop(buf);
        let mut addr = 0u64;
        // SAFETY: reads the 8 bytes of the child's address into `addr`; closes our copies of
        // the child's ends.
        let n = unsafe {
            libc::close(to_parent[1]);
            libc::close(to_child[0]);
            let n = libc::read(to_parent[0], (&mut addr as *mut u64).cast(), 8);
            libc::close(to_parent[0]);
            n
        };
        let target = Target {
            pid,
            addr,
            release: to_child[1],
        };
        if n != 8 {
            return Err(io::Error::other("the calibration's child did not start"));
        }
        Ok(target)
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        // SAFETY: closing the pipe lets the child exit; waitpid reaps it.
        unsafe {
            libc::close(self.release);
            libc::waitpid(self.pid, std::ptr::null_mut(), 0);
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Measures the model with `pages` pages per read, up to `readers` concurrent readers,
/// `reps` reads per thread and point.
pub fn calibrate(pages: usize, readers: usize, reps: usize) -> io::Result<Calibration> {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as usize;
    let bytes = pages.max(1) * page;
    let target = Target::start(bytes)?;
    let read = |dst: &mut [u8], len: usize| -> io::Result<f64> {
        let t = Instant::now();
        // SAFETY: `dst` has room for `len` bytes; the kernel checks the child's range.
        unsafe { super::cma::read_from(target.pid, target.addr, dst.as_mut_ptr(), len)? };
        Ok(t.elapsed().as_secs_f64())
    };
    let mut one = vec![0u8; bytes];
    let mut small = Vec::with_capacity(reps);
    for _ in 0..reps.max(3) {
        small.push(read(&mut one, 1)?);
    }
    let startup = median(small);
    // memcpy of the same pages, pre-touched.
    let src = vec![0xa5u8; bytes];
    let mut copies = Vec::new();
    for _ in 0..reps.max(3) {
        let t = Instant::now();
        one.copy_from_slice(std::hint::black_box(&src));
        std::hint::black_box(&one);
        copies.push(t.elapsed().as_secs_f64());
    }
    let per_byte = median(copies) / bytes as f64;
    let mut per_page = Vec::new();
    for c in 1..=readers.max(1) {
        let start = std::sync::Barrier::new(c);
        let times: Vec<io::Result<Vec<f64>>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..c)
                .map(|_| {
                    s.spawn(|| {
                        let mut dst = vec![1u8; bytes];
                        read(&mut dst, bytes)?;
                        start.wait();
                        (0..reps.max(3)).map(|_| read(&mut dst, bytes)).collect()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a calibration thread panicked"))
                .collect()
        });
        let mut all = Vec::new();
        for t in times {
            all.extend(t?);
        }
        per_page.push((median(all) - startup).max(0.0) / pages.max(1) as f64);
    }
    drop(target);
    let copy_page = per_byte * page as f64;
    let excess: Vec<f64> = per_page.iter().map(|t| (t - copy_page).max(0.0)).collect();
    let (la, lb) = fit_quadratic(&excess);
    let lock_per_page = (la + lb).max(f64::MIN_POSITIVE);
    Ok(Calibration {
        model: Cma {
            startup,
            per_byte,
            lock_per_page,
            page,
            quadratic: la / lock_per_page,
            linear: lb / lock_per_page,
            ..BUILT_IN
        },
        per_page,
    })
}

/// Least-squares `(a, b)` with `y[c - 1] ~ a c^2 + b c` (`c = 1, 2, ...`); with one point,
/// all of it linear. `a` is kept non-negative (contention does not shrink with readers).
fn fit_quadratic(y: &[f64]) -> (f64, f64) {
    if y.len() < 2 {
        return (0.0, y.first().copied().unwrap_or(0.0));
    }
    let (mut s44, mut s33, mut s22, mut s2y, mut s1y) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (i, &v) in y.iter().enumerate() {
        let c = (i + 1) as f64;
        s44 += c.powi(4);
        s33 += c.powi(3);
        s22 += c * c;
        s2y += c * c * v;
        s1y += c * v;
    }
    let det = s44 * s22 - s33 * s33;
    let a = (s2y * s22 - s33 * s1y) / det;
    let b = (s44 * s1y - s33 * s2y) / det;
    if a >= 0.0 {
        (a, b)
    } else {
        (0.0, s1y / s22)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fit_recovers_a_quadratic_and_a_line() {
        let y: Vec<f64> = (1..=6)
            .map(|c| 0.18 * (c * c) as f64 + 0.83 * c as f64)
            .collect();
        let (a, b) = fit_quadratic(&y);
        assert!(
            (a - 0.18).abs() < 1e-9 && (b - 0.83).abs() < 1e-9,
            "{a} {b}"
        );
        let (a, b) = fit_quadratic(&[2.0, 4.0]);
        assert!(a.abs() < 1e-9 && (b - 2.0).abs() < 1e-9, "{a} {b}");
        // Falling contention is not quadratic: a line through the points instead.
        let (a, b) = fit_quadratic(&[3.0, 2.0, 1.0]);
        assert_eq!(a, 0.0);
        assert!(b > 0.0);
    }

    #[test]
    fn calibration_measures_this_machine() {
        let Ok(Calibration { model: c, per_page }) = calibrate(64, 2, 5) else {
            // CMA forbidden here (ptrace rules): nothing to measure.
            return;
        };
        assert!(
            c.startup > 0.0 && c.per_byte > 0.0 && c.lock_per_page > 0.0,
            "{c:?}"
        );
        assert_eq!(per_page.len(), 2);
        assert!((c.quadratic + c.linear - 1.0).abs() < 1e-6, "{c:?}");
    }
}
