//! The C shim of the network transport (`shim.c`, compiled by `build.rs`): its functions and
//! a safe owner of the endpoint it opens. Every libfabric structure stays on the C side; this
//! module sees one opaque handle, plain integers and the `fi_context` slots the caller keeps
//! for each operation in flight.

use std::ffi::{c_char, c_void, CStr, CString};

/// The shim's endpoint (fabric, domain, completion queue, address vector, RDM endpoint).
#[repr(C)]
pub struct RawOfi {
    _private: [u8; 0],
}

/// One completion, as `hympi_ofi_poll` writes it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Cqe {
    /// The operation's context (the address of its [`FiContext`]).
    pub ctx: *mut c_void,
    /// libfabric's completion flags.
    pub flags: u64,
    /// Bytes received (receives).
    pub len: u64,
    /// Tag of the message received.
    pub tag: u64,
    /// 0, or the (positive) libfabric error of a failed operation.
    pub err: i64,
}

impl Default for Cqe {
    fn default() -> Self {
        Cqe {
            ctx: std::ptr::null_mut(),
            flags: 0,
            len: 0,
            tag: 0,
            err: 0,
        }
    }
}

/// libfabric's `struct fi_context`: scratch space an operation in flight lends the provider
/// (the endpoint asks for `FI_CONTEXT` mode). Its address identifies the operation.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct FiContext {
    _internal: [usize; 4],
}

/// `FI_EAGAIN`: the provider's queues are full; poll completions, then try again.
pub const FI_EAGAIN: isize = 11;

extern "C" {
    fn hympi_ofi_open(
        prov: *const c_char,
        src: *const c_char,
        out: *mut *mut RawOfi,
        err: *mut c_char,
        errlen: usize,
    ) -> i32;
    fn hympi_ofi_close(o: *mut RawOfi);
    fn hympi_ofi_provider(o: *const RawOfi) -> *const c_char;
    fn hympi_ofi_max_msg(o: *const RawOfi) -> u64;
    fn hympi_ofi_getname(o: *mut RawOfi, addr: *mut c_void, len: *mut usize) -> i32;
    fn hympi_ofi_insert(
        o: *mut RawOfi,
        addrs: *const c_void,
        len: usize,
        count: usize,
        out: *mut u64,
    ) -> i32;
    fn hympi_ofi_tsend(
        o: *mut RawOfi,
        buf: *const c_void,
        len: usize,
        dest: u64,
        tag: u64,
        ctx: *mut c_void,
    ) -> isize;
    fn hympi_ofi_tinject(
        o: *mut RawOfi,
        buf: *const c_void,
        len: usize,
        dest: u64,
        tag: u64,
    ) -> isize;
    fn hympi_ofi_inject_max(o: *const RawOfi) -> u64;
    fn hympi_ofi_trecv(
        o: *mut RawOfi,
        buf: *mut c_void,
        len: usize,
        tag: u64,
        ignore: u64,
        ctx: *mut c_void,
    ) -> isize;
    fn hympi_ofi_poll(
        o: *mut RawOfi,
        out: *mut Cqe,
        n: usize,
        msg: *mut c_char,
        msglen: usize,
    ) -> isize;
    fn hympi_ofi_strerror(err: i32) -> *const c_char;
}

/// The text of a C buffer the shim filled.
fn text_of(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// libfabric's words for error `err` (positive or negative).
pub fn strerror(err: i64) -> String {
    // SAFETY: the shim returns a static string (libfabric's table, or its own text).
    unsafe { CStr::from_ptr(hympi_ofi_strerror(err.unsigned_abs() as i32)) }
        .to_string_lossy()
        .into_owned()
}

/// An open RDM endpoint with tagged messages; closed on drop.
#[derive(Debug)]
pub struct Endpoint {
    raw: *mut RawOfi,
}

// SAFETY: the endpoint is opened with FI_THREAD_DOMAIN and used by one thread at a time (the
// runtime's access discipline); the handle is not tied to the thread that opened it.
unsafe impl Send for Endpoint {}

impl Endpoint {
    /// Opens an endpoint on provider `prov` (`None`: libfabric's choice) bound to source
    /// address `src` (`None`: the provider's default interface).
    pub fn open(prov: Option<&str>, src: Option<&str>) -> Result<Endpoint, String> {
        let prov = prov.map(|p| CString::new(p).map_err(|_| "provider name has a NUL byte"));
        let src = src.map(|s| CString::new(s).map_err(|_| "address has a NUL byte"));
        let prov = prov.transpose()?;
        let src = src.transpose()?;
        let mut raw = std::ptr::null_mut();
        let mut err = [0u8; 512];
        // SAFETY: the strings are NUL-terminated and outlive the call; `err` is writable for
        // its length; `raw` receives the handle.
        let rc = unsafe {
            hympi_ofi_open(
                prov.as_ref().map_or(std::ptr::null(), |p| p.as_ptr()),
                src.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
                &mut raw,
                err.as_mut_ptr().cast(),
                err.len(),
            )
        };
        if rc != 0 || raw.is_null() {
            return Err(text_of(&err));
        }
        Ok(Endpoint { raw })
    }

    /// The provider opened.
    pub fn provider(&self) -> String {
        // SAFETY: `raw` is open; the name lives in it.
        unsafe { CStr::from_ptr(hympi_ofi_provider(self.raw)) }
            .to_string_lossy()
            .into_owned()
    }

    /// The largest message the provider carries in one operation.
    pub fn max_msg(&self) -> u64 {
        // SAFETY: `raw` is open.
        unsafe { hympi_ofi_max_msg(self.raw) }
    }

    /// This endpoint's address.
    pub fn name(&self) -> Result<Vec<u8>, String> {
        let mut buf = vec![0u8; 256];
        let mut len = buf.len();
        // SAFETY: `buf` is writable for `len` bytes.
        let rc = unsafe { hympi_ofi_getname(self.raw, buf.as_mut_ptr().cast(), &mut len) };
        if rc != 0 {
            return Err(format!("fi_getname: {}", strerror(rc as i64)));
        }
        buf.truncate(len);
        Ok(buf)
    }

    /// Inserts the peers' addresses (all of one length) in order; their libfabric
    /// addresses, in the same order.
    pub fn insert(&self, addrs: &[Vec<u8>]) -> Result<Vec<u64>, String> {
        let len = addrs.first().map_or(0, |a| a.len());
        if addrs.iter().any(|a| a.len() != len) {
            return Err("peers' network addresses differ in length".into());
        }
        let packed: Vec<u8> = addrs.concat();
        let mut out = vec![u64::MAX; addrs.len()];
        // SAFETY: `packed` holds `addrs.len()` addresses of `len` bytes; `out` has room for
        // as many fi_addr_t values.
        let n = unsafe {
            hympi_ofi_insert(
                self.raw,
                packed.as_ptr().cast(),
                len,
                addrs.len(),
                out.as_mut_ptr(),
            )
        };
        if n as usize != addrs.len() {
            return Err(format!(
                "fi_av_insert took {n} of {} addresses: {}",
                addrs.len(),
                strerror(n.min(0) as i64)
            ));
        }
        Ok(out)
    }

    /// Posts a tagged send of `len` bytes at `buf` to `dest`: 0, `-FI_EAGAIN` or an error.
    ///
    /// # Safety
    /// `buf` stays readable for `len` bytes and `ctx` stays valid and unused by any other
    /// operation until this send's completion is polled.
    pub unsafe fn tsend(
        &self,
        buf: *const u8,
        len: usize,
        dest: u64,
        tag: u64,
        ctx: *mut FiContext,
    ) -> isize {
        // SAFETY: the caller's guarantees; `raw` is open.
        unsafe { hympi_ofi_tsend(self.raw, buf.cast(), len, dest, tag, ctx.cast()) }
    }

    /// Sends `len` bytes at `buf` to `dest` as a tagged inject: the provider has copied them
    /// when this returns 0, and the send has no completion. 0, `-FI_EAGAIN` or an error; only
    /// up to [`Endpoint::inject_max`] bytes.
    ///
    /// # Safety
    /// `buf` is readable for `len` bytes.
    pub unsafe fn tinject(&self, buf: *const u8, len: usize, dest: u64, tag: u64) -> isize {
        // SAFETY: the caller's guarantee; `raw` is open.
        unsafe { hympi_ofi_tinject(self.raw, buf.cast(), len, dest, tag) }
    }

    /// The largest send the provider takes as an inject ([`Endpoint::tinject`]).
    pub fn inject_max(&self) -> u64 {
        // SAFETY: `raw` is open.
        unsafe { hympi_ofi_inject_max(self.raw) }
    }

    /// Posts a tagged receive into `buf` from any source: 0, `-FI_EAGAIN` or an error.
    ///
    /// # Safety
    /// `buf` stays writable for `len` bytes and `ctx` stays valid and unused by any other
    /// operation until this receive's completion is polled (or the endpoint is closed).
    pub unsafe fn trecv(
        &self,
        buf: *mut u8,
        len: usize,
        tag: u64,
        ignore: u64,
        ctx: *mut FiContext,
    ) -> isize {
        // SAFETY: the caller's guarantees; `raw` is open.
        unsafe { hympi_ofi_trecv(self.raw, buf.cast(), len, tag, ignore, ctx.cast()) }
    }

    /// Reads completions into `out` (progressing the provider): how many, or an error. A
    /// failed operation is one entry with `err` set and the provider's words in the `String`.
    pub fn poll(&self, out: &mut [Cqe]) -> Result<(usize, Option<String>), String> {
        let mut msg = [0u8; 256];
        // SAFETY: `out` and `msg` are writable for their lengths.
        let n = unsafe {
            hympi_ofi_poll(
                self.raw,
                out.as_mut_ptr(),
                out.len(),
                msg.as_mut_ptr().cast(),
                msg.len(),
            )
        };
        if n < 0 {
            return Err(format!("fi_cq_read: {}", strerror(n as i64)));
        }
        let n = n as usize;
        let failed = (n == 1 && out[0].err != 0).then(|| text_of(&msg));
        Ok((n, failed))
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        // SAFETY: `raw` is open and closed once, here.
        unsafe { hympi_ofi_close(self.raw) };
    }
}
