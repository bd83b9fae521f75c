//! A doorbell a waiting rank sleeps on until a node peer sends it something: a futex word
//! in shared memory (one per rank, in the node segment), rung by every sender.
//!
//! Why: on a loaded node a waiter that yields its CPU to a busy process loses a whole
//! scheduler slice (milliseconds) even when its message arrives microseconds later; a
//! waiter asleep on a futex is woken by the sender's `FUTEX_WAKE` at once, and the
//! scheduler lets a task that slept preempt the busy one. Ringing costs a sender one load
//! (the sleeper count) while nobody sleeps.
//!
//! A wake can be missed only in a window of a few nanoseconds (the sender's publishing
//! store still in its store buffer while it reads the sleeper count, which costs no fence
//! on the hot path); every sleep has a timeout, which bounds what a missed wake costs.

use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::time::Duration;

/// The futex word pair of one rank; all zero is the initial state (zero-filled shared
/// memory is a valid doorbell).
#[repr(C)]
#[derive(Default)]
pub struct Doorbell {
    /// Threads of the rank asleep on (or about to sleep on) `seq`.
    sleepers: AtomicU32,
    /// Bumped by every ring that found a sleeper; the futex word.
    seq: AtomicU32,
}

impl Doorbell {
    /// Wakes the rank's sleeping threads, if there are any (one load otherwise).
    #[inline(always)]
    pub fn ring(&self) {
        if self.sleepers.load(Ordering::Relaxed) != 0 {
            self.ring_sleepers();
        }
    }

    #[cold]
    #[inline(never)]
    fn ring_sleepers(&self) {
        self.seq.fetch_add(1, Ordering::SeqCst);
        futex_wake_all(&self.seq);
    }

    /// Announces a sleeper: returns the word to sleep on, to pass to [`Doorbell::sleep`] after
    /// one more look for work (a ring after this call wakes that sleep or keeps it from
    /// starting). Every `arm` is followed by one [`Doorbell::disarm`].
    #[inline]
    pub fn arm(&self) -> u32 {
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        self.seq.load(Ordering::SeqCst)
    }

    /// Sleeps until a ring since the [`Doorbell::arm`] that returned `armed`, or `timeout`.
    pub fn sleep(&self, armed: u32, timeout: Duration) {
        futex_wait(&self.seq, armed, timeout);
    }

    /// Withdraws the sleeper [`Doorbell::arm`] announced.
    #[inline]
    pub fn disarm(&self) {
        self.sleepers.fetch_sub(1, Ordering::Release);
    }
}

/// This rank's doorbell, while waits may sleep on it (see [`install`]).
static OWN: AtomicPtr<Doorbell> = AtomicPtr::new(std::ptr::null_mut());

/// Lets waits sleep on `bell` (this rank's doorbell in the node segment). The runtime installs it only where every event a wait can wait for comes with
/// a ring: one thread in MPI at a time, and no network peers.
///
/// # Safety
/// `bell` stays mapped until [`clear`] is called, which happens before the segment is
/// unmapped, with no wait running.
pub unsafe fn install(bell: &Doorbell) {
    OWN.store(bell as *const Doorbell as *mut Doorbell, Ordering::Release);
}

/// Waits no longer sleep (a network engine opened, or the segment is about to go).
pub fn clear() {
    OWN.store(std::ptr::null_mut(), Ordering::Release);
}

/// This rank's doorbell, if waits may sleep.
#[inline]
pub fn own() -> Option<&'static Doorbell> {
    let p = OWN.load(Ordering::Acquire);
    // SAFETY: a non-null pointer was installed by `install`, whose caller keeps the doorbell
    // mapped until `clear`, which runs with no wait running.
    unsafe { p.as_ref() }
}

fn futex_wake_all(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE on a valid, aligned u32 (shared mapping: no PRIVATE flag, so
    // other processes' waiters on the same page are found); no other memory is touched.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            i32::MAX,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

fn futex_wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: FUTEX_WAIT on a valid, aligned u32 with a relative timeout that outlives the
    // call; it returns at once when the word no longer holds `expected`, on a wake, a
    // signal or the timeout, all of which the caller handles by looking for work again.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            &ts as *const libc::timespec,
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn a_ring_wakes_a_sleeper_long_before_its_timeout() {
        let bell = Arc::new(Doorbell::default());
        let b = bell.clone();
        let sleeper = std::thread::spawn(move || {
            let armed = b.arm();
            let t = Instant::now();
            b.sleep(armed, Duration::from_secs(20));
            b.disarm();
            t.elapsed()
        });
        // Ring until the sleeper is gone (a ring before it armed finds nobody).
        while !sleeper.is_finished() {
            bell.ring();
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(sleeper.join().unwrap() < Duration::from_secs(10));
        assert_eq!(bell.sleepers.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_ring_between_arm_and_sleep_keeps_the_sleep_from_starting() {
        let bell = Doorbell::default();
        let armed = bell.arm();
        bell.ring();
        let t = Instant::now();
        bell.sleep(armed, Duration::from_secs(20));
        bell.disarm();
        assert!(t.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn without_a_ring_the_sleep_ends_at_its_timeout() {
        let bell = Doorbell::default();
        let armed = bell.arm();
        let t = Instant::now();
        bell.sleep(armed, Duration::from_millis(20));
        bell.disarm();
        assert!(t.elapsed() >= Duration::from_millis(19));
    }
}
