//! Transports: how bytes move between ranks. [`wire`] holds what every transport and the
//! point-to-point protocols above share; [`shm`] is the node transport (shared memory, CMA),
//! [`ofi`] the network transport (libfabric). [`Transport`] is the boundary the protocols
//! drive both through, statically dispatched.
pub mod lanes;
pub mod ofi;
pub mod shm;
pub mod wire;

use wire::{Gather, Incoming, Outgoing};

/// What the point-to-point protocols ask of a transport. Peers are the transport's own
/// indices (local ranks on the node transport, world ranks with `ofi::NET_PEER` on the
/// network). The protocol code is generic over it, so each transport gets its own copy of
/// the handlers: no dispatch on the hot path.
pub trait Transport {
    /// Whether this is the network transport (for statistics).
    const NETWORK: bool;
    /// Takes the next message addressed to this rank, in each sender's order.
    fn poll(&mut self) -> Option<Incoming>;
    /// The payload of a polled message (valid until it is released).
    fn payload(&self, m: &Incoming) -> &[u8];
    /// Gives a polled message's buffer back to the transport.
    fn release(&mut self, cell: u32);
    /// Gives back message `m`, just polled and not handled: the next poll returns it again.
    fn unpoll(&mut self, m: Incoming);
    /// Whether sends wait queued behind others (a message sent now would overtake them).
    fn has_outgoing(&self) -> bool;
    /// Sends `o` now if it can, else queues it behind earlier items: whether it went out now.
    fn send_or_queue(&mut self, o: Outgoing) -> bool;
    /// Streams a rendezvous message's data to `dest` (the answer to its `Cts`).
    fn start_stream(
        &mut self,
        dest: u32,
        sreq: u64,
        rreq: u64,
        buf: *const u8,
        total: usize,
        layout: Option<Box<dyn Gather>>,
    );
    /// Offers to receive rendezvous `rreq`'s `len` bytes from `peer` straight into `buf`
    /// (answered by the `Cts` about to be sent); whether the transport took it. The data then
    /// arrives as one `Data` message whose payload is `buf` itself.
    ///
    /// # Safety
    /// `buf` must stay writable for `len` bytes until that message is released.
    unsafe fn recv_into(&mut self, peer: u32, rreq: u64, buf: *mut u8, len: usize) -> bool;
    /// Moves queued items; eager sends and streams that went out are reported in `done`.
    fn flush(&mut self, done: &mut Vec<u64>) -> bool;
    /// Whether nothing waits to be sent or handed out.
    fn idle(&self) -> bool;
    /// Whether the receiver can copy a sender's buffer itself (CMA): the node transport's
    /// single-copy reads, split copies and stealable chunks need it.
    fn cma_enabled(&self) -> bool;
    /// Whether peer `peer` is blocked waiting (it may then copy a part of its message).
    fn peer_waiting(&self, peer: u32) -> bool;
    /// Process id of peer `peer` (for CMA).
    fn pid_of(&self, peer: u32) -> i32;
    /// Reads `len` bytes at `addr` in peer `src` into `dst` (CMA).
    ///
    /// # Safety
    /// `dst` must be valid for `len` bytes of writes.
    unsafe fn cma_read(&self, src: u32, addr: u64, dst: *mut u8, len: usize)
        -> std::io::Result<()>;
    /// Writes `len` bytes from `src` to `addr` in peer `dst` (CMA).
    ///
    /// # Safety
    /// `src` must be valid for `len` bytes of reads.
    unsafe fn cma_write(
        &self,
        dst: u32,
        src: *const u8,
        addr: u64,
        len: usize,
    ) -> std::io::Result<()>;
    /// Copies peer `src`'s segments `remote` into the local segments `local` (CMA).
    ///
    /// # Safety
    /// Every local segment must be valid for writes.
    unsafe fn cma_readv(
        &self,
        src: u32,
        local: &[(usize, usize)],
        remote: &[(usize, usize)],
    ) -> std::io::Result<usize>;
}

/// The error of a CMA operation asked of a transport that has none.
fn no_cma() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "no single-copy reads between nodes",
    )
}

impl Transport for shm::ShmEngine {
    const NETWORK: bool = false;
    #[inline(always)]
    fn poll(&mut self) -> Option<Incoming> {
        shm::ShmEngine::poll(self)
    }
    #[inline(always)]
    fn payload(&self, m: &Incoming) -> &[u8] {
        shm::ShmEngine::payload(self, m)
    }
    #[inline(always)]
    fn release(&mut self, cell: u32) {
        shm::ShmEngine::release(self, cell)
    }
    #[inline(always)]
    fn unpoll(&mut self, m: Incoming) {
        shm::ShmEngine::unpoll(self, m)
    }
    #[inline(always)]
    fn has_outgoing(&self) -> bool {
        shm::ShmEngine::has_outgoing(self)
    }
    #[inline(always)]
    fn send_or_queue(&mut self, o: Outgoing) -> bool {
        shm::ShmEngine::send_or_queue(self, o)
    }
    #[inline(always)]
    fn start_stream(
        &mut self,
        dest: u32,
        sreq: u64,
        rreq: u64,
        buf: *const u8,
        total: usize,
        layout: Option<Box<dyn Gather>>,
    ) {
        shm::ShmEngine::start_stream(self, dest, sreq, rreq, buf, total, layout)
    }
    #[inline(always)]
    unsafe fn recv_into(&mut self, _peer: u32, _rreq: u64, _buf: *mut u8, _len: usize) -> bool {
        // The node transport copies with CMA or through cells.
        false
    }
    #[inline(always)]
    fn flush(&mut self, done: &mut Vec<u64>) -> bool {
        shm::ShmEngine::flush(self, done)
    }
    #[inline(always)]
    fn idle(&self) -> bool {
        shm::ShmEngine::idle(self)
    }
    #[inline(always)]
    fn cma_enabled(&self) -> bool {
        shm::ShmEngine::cma_enabled(self)
    }
    #[inline(always)]
    fn peer_waiting(&self, peer: u32) -> bool {
        shm::ShmEngine::peer_waiting(self, peer)
    }
    #[inline(always)]
    fn pid_of(&self, peer: u32) -> i32 {
        shm::ShmEngine::pid_of(self, peer)
    }
    #[inline(always)]
    unsafe fn cma_read(
        &self,
        src: u32,
        addr: u64,
        dst: *mut u8,
        len: usize,
    ) -> std::io::Result<()> {
        // SAFETY: forwarded caller guarantee.
        unsafe { shm::ShmEngine::cma_read(self, src, addr, dst, len) }
    }
    #[inline(always)]
    unsafe fn cma_write(
        &self,
        dst: u32,
        src: *const u8,
        addr: u64,
        len: usize,
    ) -> std::io::Result<()> {
        // SAFETY: forwarded caller guarantee.
        unsafe { shm::ShmEngine::cma_write(self, dst, src, addr, len) }
    }
    #[inline(always)]
    unsafe fn cma_readv(
        &self,
        src: u32,
        local: &[(usize, usize)],
        remote: &[(usize, usize)],
    ) -> std::io::Result<usize> {
        // SAFETY: forwarded caller guarantee.
        unsafe { shm::ShmEngine::cma_readv(self, src, local, remote) }
    }
}

impl Transport for ofi::NetEngine {
    const NETWORK: bool = true;
    #[inline]
    fn poll(&mut self) -> Option<Incoming> {
        ofi::NetEngine::poll(self)
    }
    #[inline]
    fn payload(&self, m: &Incoming) -> &[u8] {
        ofi::NetEngine::payload(self, m)
    }
    #[inline]
    fn release(&mut self, cell: u32) {
        ofi::NetEngine::release(self, cell)
    }
    #[inline]
    fn unpoll(&mut self, m: Incoming) {
        ofi::NetEngine::unpoll(self, m)
    }
    #[inline]
    fn has_outgoing(&self) -> bool {
        ofi::NetEngine::has_outgoing(self)
    }
    #[inline]
    fn send_or_queue(&mut self, o: Outgoing) -> bool {
        ofi::NetEngine::send_or_queue(self, o)
    }
    fn start_stream(
        &mut self,
        dest: u32,
        sreq: u64,
        rreq: u64,
        buf: *const u8,
        total: usize,
        layout: Option<Box<dyn Gather>>,
    ) {
        ofi::NetEngine::start_stream(self, dest, sreq, rreq, buf, total, layout)
    }
    unsafe fn recv_into(&mut self, peer: u32, rreq: u64, buf: *mut u8, len: usize) -> bool {
        // SAFETY: forwarded caller guarantee.
        unsafe { ofi::NetEngine::recv_into(self, peer, rreq, buf, len) }
    }
    fn flush(&mut self, done: &mut Vec<u64>) -> bool {
        ofi::NetEngine::flush(self, done)
    }
    fn idle(&self) -> bool {
        ofi::NetEngine::idle(self)
    }
    fn cma_enabled(&self) -> bool {
        false
    }
    fn peer_waiting(&self, _peer: u32) -> bool {
        false
    }
    fn pid_of(&self, _peer: u32) -> i32 {
        -1
    }
    unsafe fn cma_read(
        &self,
        _src: u32,
        _addr: u64,
        _dst: *mut u8,
        _len: usize,
    ) -> std::io::Result<()> {
        Err(no_cma())
    }
    unsafe fn cma_write(
        &self,
        _dst: u32,
        _src: *const u8,
        _addr: u64,
        _len: usize,
    ) -> std::io::Result<()> {
        Err(no_cma())
    }
    unsafe fn cma_readv(
        &self,
        _src: u32,
        _local: &[(usize, usize)],
        _remote: &[(usize, usize)],
    ) -> std::io::Result<usize> {
        Err(no_cma())
    }
}
