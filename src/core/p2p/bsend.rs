//! Buffers of buffered-mode sends (`MPI_Bsend`, `MPI_Ibsend`, `MPI_Bsend_init`): the process
//! buffer (`MPI_Buffer_attach`), communicator buffers (`MPI_Comm_attach_buffer`), which take
//! precedence for sends on their communicator, and `MPI_BUFFER_AUTOMATIC`, where each
//! buffered message gets its own heap copy.
//!
//! A buffered message is sent by an internal request that is freed when the send completes;
//! its space in the buffer is recorded here under that request until then. Flushing and
//! detaching wait for those requests (`crate::abi::imp::p2p`).

use crate::core::error::{fail, MpiResult};

/// `MPI_BUFFER_AUTOMATIC` (the standard ABI's value).
pub const AUTOMATIC: usize = 2;

/// The room each buffered message takes beyond its data: the `MPI_BSEND_OVERHEAD` of the ABI
/// the library is built for (programs size their buffers with it; MPICH's `mpi.h` says 96).
pub const OVERHEAD: usize = if cfg!(feature = "mpich-abi") {
    96
} else {
    crate::mpi_abi::consts::MPI_BSEND_OVERHEAD as usize
};

/// The memory a buffer scope copies buffered messages into.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Space {
    /// Nothing attached: buffered sends fail with `MPI_ERR_BUFFER`.
    #[default]
    None,
    /// A user buffer of `size` bytes at `base`.
    User {
        /// Start address.
        base: usize,
        /// Size in bytes.
        size: usize,
    },
    /// `MPI_BUFFER_AUTOMATIC`: each message is copied to memory of its own.
    Automatic,
}

/// One attached buffer and the buffered messages still in flight from it.
#[derive(Debug, Default)]
pub struct BsendBuffer {
    /// What is attached.
    pub space: Space,
    /// Messages in flight: (offset, length, internal request index), sorted by offset
    /// (offset 0 under [`Space::Automatic`], where the copy belongs to the request).
    pub used: Vec<(usize, usize, u32)>,
}

impl BsendBuffer {
    /// Finds room for `len` bytes in a user buffer (first fit); returns the offset.
    pub fn alloc(&self, len: usize) -> Option<usize> {
        let Space::User { size, .. } = self.space else {
            return None;
        };
        let mut at = 0usize;
        for &(off, l, _) in &self.used {
            if off - at >= len {
                return Some(at);
            }
            at = off + l;
        }
        (size.checked_sub(at)? >= len).then_some(at)
    }

    /// Bytes taken by messages in flight.
    pub fn in_use(&self) -> usize {
        self.used.iter().map(|u| u.1).sum()
    }

    /// Records a message in flight.
    fn insert(&mut self, off: usize, len: usize, req: u32) {
        let i = self.used.partition_point(|&(o, _, _)| o <= off);
        self.used.insert(i, (off, len, req));
    }

    /// Forgets the message of request `req`; whether it was one of this buffer's.
    fn release(&mut self, req: u32) -> bool {
        match self.used.iter().position(|&(_, _, r)| r == req) {
            Some(i) => {
                self.used.remove(i);
                true
            }
            None => false,
        }
    }
}

/// Which buffer: the process's, a session's (by session id) or a communicator's (by
/// communicator index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// `MPI_Buffer_attach`.
    Process,
    /// `MPI_Session_attach_buffer` on the session with this id.
    Session(u32),
    /// `MPI_Comm_attach_buffer` on the communicator with this index.
    Comm(u32),
}

/// Every attached buffer of the process.
#[derive(Debug, Default)]
pub struct BsendBuffers {
    /// The process buffer.
    process: BsendBuffer,
    /// Communicator buffers, by communicator index (few: a linear search).
    comms: Vec<(u32, BsendBuffer)>,
    /// Session buffers, by session id (few: a linear search).
    sessions: Vec<(u32, BsendBuffer)>,
    /// Buffers of freed communicators whose messages are still in flight.
    draining: Vec<BsendBuffer>,
    /// Messages in flight over all buffers (completions of other internal requests skip the
    /// search when it is 0).
    in_flight: usize,
}

impl BsendBuffers {
    /// The buffer of `scope`, if one is attached or was and still has messages in flight.
    pub fn get(&self, scope: Scope) -> Option<&BsendBuffer> {
        match scope {
            Scope::Process => Some(&self.process),
            Scope::Session(s) => self.sessions.iter().find(|e| e.0 == s).map(|e| &e.1),
            Scope::Comm(c) => self.comms.iter().find(|e| e.0 == c).map(|e| &e.1),
        }
    }

    /// The scope whose buffer a buffered send on communicator `comm` (of `session`, if one)
    /// uses: the communicator's if it has one attached, else its session's, else the
    /// process's.
    pub fn scope_for(&self, comm: u32, session: Option<u32>) -> Scope {
        let attached = |scope| {
            self.get(scope)
                .is_some_and(|b: &BsendBuffer| b.space != Space::None)
        };
        if attached(Scope::Comm(comm)) {
            Scope::Comm(comm)
        } else if let Some(s) = session.filter(|&s| attached(Scope::Session(s))) {
            Scope::Session(s)
        } else {
            Scope::Process
        }
    }

    fn get_mut(&mut self, scope: Scope) -> Option<&mut BsendBuffer> {
        match scope {
            Scope::Process => Some(&mut self.process),
            Scope::Session(s) => self
                .sessions
                .iter_mut()
                .find(|e| e.0 == s)
                .map(|e| &mut e.1),
            Scope::Comm(c) => self.comms.iter_mut().find(|e| e.0 == c).map(|e| &mut e.1),
        }
    }

    /// The keyed list a non-process scope lives in, and its key.
    fn list_of(&mut self, scope: Scope) -> Option<(&mut Vec<(u32, BsendBuffer)>, u32)> {
        match scope {
            Scope::Process => None,
            Scope::Session(s) => Some((&mut self.sessions, s)),
            Scope::Comm(c) => Some((&mut self.comms, c)),
        }
    }

    /// Attaches `space` to `scope`; fails with `MPI_ERR_BUFFER` when one is attached there.
    pub fn attach(&mut self, scope: Scope, space: Space) -> MpiResult<()> {
        if self.get(scope).is_some_and(|b| b.space != Space::None) {
            let what = match scope {
                Scope::Process => "the process",
                Scope::Session(_) => "this session",
                Scope::Comm(_) => "this communicator",
            };
            return fail(
                crate::mpi_abi::consts::MPI_ERR_BUFFER,
                format!("a buffer is already attached to {what} (detach it first)"),
            );
        }
        match self.get_mut(scope) {
            Some(b) => b.space = space,
            None => {
                let (list, key) = self
                    .list_of(scope)
                    .expect("the process buffer always exists");
                list.push((
                    key,
                    BsendBuffer {
                        space,
                        used: Vec::new(),
                    },
                ));
            }
        }
        Ok(())
    }

    /// Detaches the buffer of `scope` (which has no message in flight): what was attached.
    pub fn detach(&mut self, scope: Scope) -> Space {
        let Some((list, key)) = self.list_of(scope) else {
            return std::mem::take(&mut self.process.space);
        };
        match list.iter().position(|e| e.0 == key) {
            Some(i) => {
                let (_, b) = list.swap_remove(i);
                let space = b.space;
                if !b.used.is_empty() {
                    // Not expected (the caller waited), but the messages must stay tracked.
                    self.draining.push(b);
                }
                space
            }
            None => Space::None,
        }
    }

    /// Requests of the messages in flight from the buffer of `scope`.
    pub fn pending(&self, scope: Scope) -> Vec<u32> {
        self.get(scope)
            .map(|b| b.used.iter().map(|u| u.2).collect())
            .unwrap_or_default()
    }

    /// Records a message of `len` bytes at `off` in the buffer of `scope`, sent by internal
    /// request `req`.
    pub fn record(&mut self, scope: Scope, off: usize, len: usize, req: u32) {
        if let Some(b) = self.get_mut(scope) {
            b.insert(off, len, req);
            self.in_flight += 1;
        }
    }

    /// The buffer of `scope`, to place a message in.
    pub fn buffer(&self, scope: Scope) -> &BsendBuffer {
        self.get(scope).unwrap_or(&self.process)
    }

    /// Internal request `req` completed: frees its message's space if it was a buffered one.
    #[inline(always)]
    pub fn release(&mut self, req: u32) {
        if self.in_flight > 0 {
            self.release_slow(req);
        }
    }

    #[cold]
    fn release_slow(&mut self, req: u32) {
        let found = self.process.release(req)
            || self.comms.iter_mut().any(|(_, b)| b.release(req))
            || self.sessions.iter_mut().any(|(_, b)| b.release(req))
            || self.draining.iter_mut().any(|b| b.release(req));
        if found {
            self.in_flight -= 1;
            self.draining.retain(|b| !b.used.is_empty());
        }
    }

    /// Communicator `comm` is freed: its buffer is detached; messages still in flight from it
    /// keep being tracked until they complete.
    pub fn forget_comm(&mut self, comm: u32) {
        self.detach(Scope::Comm(comm));
    }

    /// Session `session` ends: its buffer is detached; messages still in flight from it keep
    /// being tracked until they complete.
    pub fn forget_session(&mut self, session: u32) {
        self.detach(Scope::Session(session));
    }
}
