//! MPICH's ABI (`libmpich.so.12`, built with the cargo feature `mpich-abi`): the entry points a
//! program compiled with MPICH's `mpi.h` calls, translated at the boundary to the standard-ABI
//! entry points.
//!
//! MPICH's handles are `int`s (`MPI_File` and the tool handles are pointers, as in the
//! standard ABI). A predefined handle converts by table (its MPICH value to the standard one,
//! generated from `constants.txt`); a user handle's integer is its standard-ABI integer form
//! (`MPI_<Handle>_toint`), which stays below MPICH's predefined values (`0x04000000` and up)
//! for up to 2^18 live objects of a kind. `MPI_Status` is 5 ints (`count_lo`,
//! `count_hi_and_cancelled`, `MPI_SOURCE`, `MPI_TAG`, `MPI_ERROR`). Integers whose special
//! values differ (ranks, tags, thread levels, error classes, modes, combiners...) convert by
//! domain, chosen from the parameter's name by build.rs (`codegen/mpich_abi.rs`).
#![allow(non_snake_case, non_upper_case_globals, clippy::missing_safety_doc)]

mod callbacks;

use crate::abi::types::{MPI_File, MPI_Status};
use core::ffi::{c_int, c_void};

/// The value maps generated from `constants.txt`.
#[allow(
    dead_code,
    clippy::unreadable_literal,
    clippy::match_single_binding,
    clippy::match_overlapping_arm,
    clippy::manual_range_patterns,
    unreachable_patterns
)]
mod values {
    include!(concat!(env!("OUT_DIR"), "/abi_mpich_values.rs"));
}
pub use values::*;

/// The generated MPICH-ABI `MPI_*` / `PMPI_*` entry points.
#[allow(
    unused_variables,
    unused_mut,
    unused_parens,
    unused_imports,
    clippy::too_many_arguments,
    clippy::unit_arg,
    clippy::let_and_return,
    clippy::unnecessary_cast
)]
mod generated {
    use super as cv;
    use super::MpichStatus;
    use crate::abi::types::*;
    use core::ffi::{c_char, c_int, c_long, c_uint, c_void};
    include!(concat!(env!("OUT_DIR"), "/abi_mpich_entry.rs"));
}

/// `MPI_Status` in MPICH's ABI.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MpichStatus {
    /// Low 32 bits of the received byte count.
    pub count_lo: c_int,
    /// High bits of the byte count (shifted left by one) and the cancelled flag (bit 0).
    pub count_hi_and_cancelled: c_int,
    /// Source rank.
    pub MPI_SOURCE: c_int,
    /// Tag.
    pub MPI_TAG: c_int,
    /// Error code.
    pub MPI_ERROR: c_int,
}

/// MPICH's `MPI_STATUS_IGNORE` / `MPI_STATUSES_IGNORE`.
const STATUS_IGNORE: usize = 1;

/// `MPI_ERROR` of a status the call has not written (no error code has this value).
const ERROR_UNSET: c_int = i32::MIN + 0x5a5a;

impl MpichStatus {
    /// The same status in the standard ABI (hympi keeps the byte count in `MPI_internal[0..2]`
    /// and the cancelled flag in `MPI_internal[2]`).
    fn to_std(self) -> MPI_Status {
        let bytes = (self.count_lo as u32 as u64)
            | (((self.count_hi_and_cancelled as u32 >> 1) as u64) << 32);
        MPI_Status {
            MPI_SOURCE: rank_to_std(self.MPI_SOURCE),
            MPI_TAG: tag_to_std(self.MPI_TAG),
            MPI_ERROR: err_to_std(self.MPI_ERROR),
            MPI_internal: [
                bytes as u32 as i32,
                (bytes >> 32) as u32 as i32,
                self.count_hi_and_cancelled & 1,
                0,
                0,
            ],
        }
    }

    /// Writes `s` over `self` in MPICH's layout, leaving `MPI_ERROR` alone if the call did
    /// not set it (it still holds [`ERROR_UNSET`]): only the multiple-completion calls set it,
    /// and only on error.
    #[inline(always)]
    fn store(&mut self, s: &MPI_Status) {
        let m = MpichStatus::from_std(s);
        self.count_lo = m.count_lo;
        self.count_hi_and_cancelled = m.count_hi_and_cancelled;
        self.MPI_SOURCE = m.MPI_SOURCE;
        self.MPI_TAG = m.MPI_TAG;
        if s.MPI_ERROR != ERROR_UNSET {
            self.MPI_ERROR = m.MPI_ERROR;
        }
    }

    /// The same status in MPICH's ABI.
    fn from_std(s: &MPI_Status) -> MpichStatus {
        let bytes = (s.MPI_internal[0] as u32 as u64) | ((s.MPI_internal[1] as u32 as u64) << 32);
        MpichStatus {
            count_lo: bytes as u32 as i32,
            count_hi_and_cancelled: ((((bytes >> 32) as u32) << 1)
                | (s.MPI_internal[2] != 0) as u32) as i32,
            MPI_SOURCE: rank_to_mpich(s.MPI_SOURCE),
            MPI_TAG: tag_to_mpich(s.MPI_TAG),
            MPI_ERROR: err_to_mpich(s.MPI_ERROR),
        }
    }
}

/// The handle kinds that are integers in MPICH's ABI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `MPI_Comm`.
    Comm,
    /// `MPI_Datatype`.
    Datatype,
    /// `MPI_Errhandler`.
    Errhandler,
    /// `MPI_Group`.
    Group,
    /// `MPI_Info`.
    Info,
    /// `MPI_Message`.
    Message,
    /// `MPI_Op`.
    Op,
    /// `MPI_Request`.
    Request,
    /// `MPI_Session`.
    Session,
    /// `MPI_Win`.
    Win,
}

use crate::abi::imp as std_imp;
use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Entries per chunk of a [`HandleTable`].
const CHUNK: usize = 4096;

/// The user handles given to the program, by integer: bits 12..31 of the integer (its
/// standard-ABI integer form, `MPI_<Handle>_toint`) index 2^20 entries in chunks allocated on
/// first use. Written whenever a handle goes out to the program, read when it comes back: no
/// lock, so that threads calling MPI at `MPI_THREAD_MULTIPLE` do not serialize on handle
/// conversion. An integer whose slot holds another object now (the object was freed and its
/// slot reused) converts to that object, as `MPI_<Handle>_fromint` would.
struct HandleTable {
    chunks: [AtomicPtr<[AtomicUsize; CHUNK]>; 256],
}

impl HandleTable {
    const fn new() -> HandleTable {
        HandleTable {
            chunks: [const { AtomicPtr::new(core::ptr::null_mut()) }; 256],
        }
    }

    /// The entry of integer `v`, if its chunk exists.
    #[inline(always)]
    fn get(&self, v: u32) -> Option<&AtomicUsize> {
        let key = (v >> 12) as usize;
        let chunk = self.chunks[key / CHUNK].load(Ordering::Acquire);
        // SAFETY: a published chunk is never freed (it lives as long as the process).
        (!chunk.is_null()).then(|| unsafe { &(*chunk)[key % CHUNK] })
    }

    /// The entry of integer `v`, allocating its chunk the first time.
    #[inline(always)]
    fn entry(&self, v: u32) -> &AtomicUsize {
        match self.get(v) {
            Some(e) => e,
            None => self.grow(v),
        }
    }

    #[cold]
    fn grow(&self, v: u32) -> &AtomicUsize {
        let key = (v >> 12) as usize;
        let fresh: Box<[AtomicUsize; CHUNK]> = Box::new([const { AtomicUsize::new(0) }; CHUNK]);
        let fresh = Box::into_raw(fresh);
        let slot = &self.chunks[key / CHUNK];
        if let Err(_other) = slot.compare_exchange(
            core::ptr::null_mut(),
            fresh,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            // SAFETY: `fresh` was not published: this thread owns it.
            drop(unsafe { Box::from_raw(fresh) });
        }
        self.get(v).expect("the chunk was just published")
    }
}

/// One [`HandleTable`] per integer handle kind (indexed by `Kind as usize`).
static TABLES: [HandleTable; 10] = [const { HandleTable::new() }; 10];

/// A user handle's integer back to the handle (the kind's null handle when it was never
/// handed out).
#[inline]
fn user_to_std(kind: Kind, v: c_int) -> usize {
    match TABLES[kind as usize]
        .get(v as u32)
        .map(|e| e.load(Ordering::Acquire))
    {
        Some(h) if h != 0 => h,
        _ => kind.null(),
    }
}

/// A user handle's integer: its standard-ABI integer form, recorded for the way back.
#[inline]
fn user_to_mpich(kind: Kind, h: usize) -> c_int {
    // SAFETY: the `toint` conversions only read the handle's bits.
    let r = unsafe {
        match kind {
            Kind::Request => std_imp::MPI_Request_toint(h as _),
            _ => std_imp::MPI_Comm_toint(h as _),
        }
    };
    match r {
        Ok(v) => {
            TABLES[kind as usize]
                .entry(v as u32)
                .store(h, Ordering::Release);
            v
        }
        // A request beyond the integer form's reach (thousands outstanding on one VCI).
        Err(_) => kind.to_mpich(kind.null()),
    }
}

impl Kind {
    /// The kind's null handle in the standard ABI.
    fn null(self) -> usize {
        use crate::abi::consts::*;
        match self {
            Kind::Comm => MPI_COMM_NULL,
            Kind::Datatype => MPI_DATATYPE_NULL,
            Kind::Errhandler => MPI_ERRHANDLER_NULL,
            Kind::Group => MPI_GROUP_NULL,
            Kind::Info => MPI_INFO_NULL,
            Kind::Message => MPI_MESSAGE_NULL,
            Kind::Op => MPI_OP_NULL,
            Kind::Request => MPI_REQUEST_NULL,
            Kind::Session => MPI_SESSION_NULL,
            Kind::Win => MPI_WIN_NULL,
        }
    }

    /// An MPICH handle value to the standard ABI's.
    #[inline]
    pub fn to_std(self, v: c_int) -> usize {
        let pre = match self {
            Kind::Comm => comm_predefined_std(v),
            Kind::Datatype => datatype_predefined_std(v),
            Kind::Errhandler => errhandler_predefined_std(v),
            Kind::Group => group_predefined_std(v),
            Kind::Info => info_predefined_std(v),
            Kind::Message => message_predefined_std(v),
            Kind::Op => op_predefined_std(v),
            Kind::Request => request_predefined_std(v),
            Kind::Session => session_predefined_std(v),
            Kind::Win => win_predefined_std(v),
        };
        match pre {
            Some(h) => h,
            None => user_to_std(self, v),
        }
    }

    /// A standard-ABI handle to MPICH's value.
    #[inline]
    pub fn to_mpich(self, h: usize) -> c_int {
        if h >= 0x1000 {
            return user_to_mpich(self, h);
        }
        let pre = match self {
            Kind::Comm => comm_predefined_mpich(h),
            Kind::Datatype => datatype_predefined_mpich(h),
            Kind::Errhandler => errhandler_predefined_mpich(h),
            Kind::Group => group_predefined_mpich(h),
            Kind::Info => info_predefined_mpich(h),
            Kind::Message => message_predefined_mpich(h),
            Kind::Op => op_predefined_mpich(h),
            Kind::Request => request_predefined_mpich(h),
            Kind::Session => session_predefined_mpich(h),
            Kind::Win => win_predefined_mpich(h),
        };
        // A predefined handle MPICH 4.0 does not name keeps its standard value (< 0x1000),
        // which converts back unchanged.
        pre.unwrap_or(h as c_int)
    }
}

macro_rules! handle_in {
    ($($f:ident => $k:ident),* $(,)?) => {$(
        #[doc = concat!("An MPICH `", stringify!($k), "` handle to the standard ABI's.")]
        #[inline]
        pub fn $f(v: c_int) -> usize {
            Kind::$k.to_std(v)
        }
    )*};
}

handle_in! {
    comm_in => Comm, datatype_in => Datatype, errhandler_in => Errhandler, group_in => Group,
    info_in => Info, message_in => Message, op_in => Op, request_in => Request,
    session_in => Session, win_in => Win,
}

/// An MPICH `MPI_File` (a pointer; `MPI_FILE_NULL` is 0) to the standard ABI's.
#[inline]
pub fn file_in(f: MPI_File) -> MPI_File {
    if f.is_null() {
        crate::abi::consts::MPI_FILE_NULL as MPI_File
    } else {
        f
    }
}

/// A standard-ABI `MPI_File` to MPICH's.
#[inline]
pub fn file_out(f: MPI_File) -> MPI_File {
    if f as usize == crate::abi::consts::MPI_FILE_NULL {
        core::ptr::null_mut()
    } else {
        f
    }
}

/// The MPICH error code of a standard-ABI return code.
#[inline]
pub fn err_out(rc: c_int) -> c_int {
    if rc == 0 {
        0
    } else {
        err_to_mpich(rc)
    }
}

/// A collective buffer: MPICH's `MPI_IN_PLACE` is `(void *)-1`, the standard's `(void *)1`.
#[inline]
pub fn buffer<T>(p: *const T) -> *mut T {
    if p as isize == -1 {
        1 as *mut T
    } else {
        p as *mut T
    }
}

/// A pointer to one handle: read before the call (for in/out arguments), written after.
pub struct HandleRef {
    user: *mut c_int,
    value: usize,
    kind: Kind,
}

impl HandleRef {
    /// Reads `*user` (if not null).
    #[inline(always)]
    pub unsafe fn new(user: *mut c_int, kind: Kind) -> HandleRef {
        let value = if user.is_null() {
            0
        } else {
            // SAFETY: a handle argument points to an int (the caller's contract).
            kind.to_std(unsafe { *user })
        };
        HandleRef { user, value, kind }
    }

    /// The standard-ABI handle to pass (null if the caller passed null).
    #[inline]
    pub fn ptr(&mut self) -> *mut usize {
        if self.user.is_null() {
            core::ptr::null_mut()
        } else {
            &mut self.value
        }
    }

    /// Writes the handle back in MPICH's form.
    #[inline]
    pub unsafe fn finish(self) {
        if !self.user.is_null() {
            // SAFETY: as in `new`.
            unsafe { *self.user = self.kind.to_mpich(self.value) };
        }
    }
}

/// Room for a short array on the stack, a long one on the heap; declared by each entry
/// point for its arrays (not initialised: every element the call reads is written first).
pub struct Room<T> {
    inline: [core::mem::MaybeUninit<T>; 8],
    heap: Vec<T>,
}

impl<T> Room<T> {
    /// No room taken yet.
    #[inline(always)]
    pub fn new() -> Room<T> {
        Room {
            inline: [const { core::mem::MaybeUninit::uninit() }; 8],
            heap: Vec::new(),
        }
    }

    /// Room for `n` elements.
    #[inline(always)]
    fn take(&mut self, n: usize) -> *mut T {
        if n <= 8 {
            self.inline.as_mut_ptr().cast()
        } else {
            self.heap.reserve_exact(n);
            self.heap.as_mut_ptr()
        }
    }
}

impl<T> Default for Room<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// An array length argument (a negative count is no elements: the call reports it).
#[inline(always)]
pub fn len(n: impl TryInto<usize>) -> usize {
    n.try_into().unwrap_or(0)
}

/// Converts `n` handles of `user` into `room`; null when `user` is.
#[inline(always)]
pub unsafe fn handles_in(
    user: *const c_int,
    n: usize,
    kind: Kind,
    room: &mut Room<usize>,
) -> *mut usize {
    if user.is_null() {
        return core::ptr::null_mut();
    }
    let t = room.take(n);
    for i in 0..n {
        // SAFETY: the array has `n` elements (the MPI call's contract); `t` has room for `n`.
        unsafe { t.add(i).write(kind.to_std(*user.add(i))) };
    }
    t
}

/// Writes `n` handles of `std` back to `user` in MPICH's form.
#[inline(always)]
pub unsafe fn handles_out(user: *mut c_int, n: usize, kind: Kind, std: *mut usize) {
    if user.is_null() {
        return;
    }
    for i in 0..n {
        // SAFETY: both arrays have `n` elements, all written (by `handles_in` or the call).
        unsafe { *user.add(i) = kind.to_mpich(*std.add(i)) };
    }
}

/// Room for `n` statuses; null (the standard's `MPI_STATUSES_IGNORE`) for MPICH's.
#[inline(always)]
pub unsafe fn statuses_room(
    user: *mut MpichStatus,
    n: usize,
    room: &mut Room<MPI_Status>,
) -> *mut MPI_Status {
    if user.is_null() || user as usize == STATUS_IGNORE {
        return core::ptr::null_mut();
    }
    let t = room.take(n);
    for i in 0..n {
        // SAFETY: `t` has room for `n` statuses.
        unsafe { core::ptr::addr_of_mut!((*t.add(i)).MPI_ERROR).write(ERROR_UNSET) };
    }
    t
}

/// Converts the first `n` statuses the call wrote back to `user`.
#[inline(always)]
pub unsafe fn statuses_out(user: *mut MpichStatus, std: *mut MPI_Status, n: usize) {
    if std.is_null() {
        return;
    }
    for i in 0..n {
        // SAFETY: the call wrote the first `n` statuses; the user's array has as many.
        unsafe { (*user.add(i)).store(&*std.add(i)) };
    }
}

/// A pointer to one `MPI_File` (null is `MPI_FILE_NULL` in MPICH's ABI).
pub struct FileRef {
    user: *mut MPI_File,
    value: MPI_File,
}

impl FileRef {
    /// Reads `*user` (if not null).
    pub unsafe fn new(user: *mut MPI_File) -> FileRef {
        let value = if user.is_null() {
            core::ptr::null_mut()
        } else {
            // SAFETY: the argument points to a file handle (the caller's contract).
            file_in(unsafe { *user })
        };
        FileRef { user, value }
    }

    /// The standard-ABI handle to pass.
    pub fn ptr(&mut self) -> *mut MPI_File {
        if self.user.is_null() {
            core::ptr::null_mut()
        } else {
            &mut self.value
        }
    }

    /// Writes the handle back.
    pub unsafe fn finish(self) {
        if !self.user.is_null() {
            // SAFETY: as in `new`.
            unsafe { *self.user = file_out(self.value) };
        }
    }
}

/// A pointer to one status: MPICH's `MPI_STATUS_IGNORE` (1) becomes the standard's (null).
pub struct StatusRef {
    user: *mut MpichStatus,
    value: MPI_Status,
    /// `value.MPI_ERROR` as read (the field is written back only if the call changed it).
    read_error: c_int,
}

impl StatusRef {
    /// Room for a status the call writes, holding `*user` if the call reads it (`read`).
    #[inline(always)]
    pub unsafe fn new(user: *mut MpichStatus, read: bool) -> StatusRef {
        let value = if !read || user.is_null() || user as usize == STATUS_IGNORE {
            MPI_Status {
                MPI_ERROR: ERROR_UNSET,
                ..MPI_Status::default()
            }
        } else {
            // SAFETY: the argument points to a status (the caller's contract).
            unsafe { (*user).to_std() }
        };
        StatusRef {
            user,
            value,
            read_error: value.MPI_ERROR,
        }
    }

    /// The standard-ABI status to pass.
    #[inline]
    pub fn ptr(&mut self) -> *mut MPI_Status {
        if self.user.is_null() || self.user as usize == STATUS_IGNORE {
            core::ptr::null_mut()
        } else {
            &mut self.value
        }
    }

    /// Writes the status back in MPICH's layout.
    #[inline]
    pub unsafe fn finish(mut self) {
        if !(self.user.is_null() || self.user as usize == STATUS_IGNORE) {
            if self.value.MPI_ERROR == self.read_error {
                self.value.MPI_ERROR = ERROR_UNSET;
            }
            // SAFETY: as in `new`.
            unsafe { (*self.user).store(&self.value) };
        }
    }
}

/// The number of entries a `*some` call wrote (`*outcount`, none for `MPI_UNDEFINED`).
pub unsafe fn some_count(outcount: *mut c_int) -> usize {
    if outcount.is_null() {
        return 0;
    }
    // SAFETY: the call wrote `*outcount`.
    usize::try_from(unsafe { *outcount }).unwrap_or(0)
}

/// A pointer to one integer of a domain: read before, written after.
pub struct IntRef {
    user: *mut c_int,
    value: c_int,
    out: fn(c_int) -> c_int,
}

impl IntRef {
    /// Reads `*user` (if not null) into the standard ABI's value.
    pub unsafe fn new(
        user: *mut c_int,
        to_std: fn(c_int) -> c_int,
        out: fn(c_int) -> c_int,
    ) -> IntRef {
        let value = if user.is_null() {
            0
        } else {
            // SAFETY: the argument points to an int (the caller's contract).
            to_std(unsafe { *user })
        };
        IntRef { user, value, out }
    }

    /// The standard-ABI int to pass.
    pub fn ptr(&mut self) -> *mut c_int {
        if self.user.is_null() {
            core::ptr::null_mut()
        } else {
            &mut self.value
        }
    }

    /// Writes the value back in MPICH's form.
    pub unsafe fn finish(self) {
        if !self.user.is_null() {
            // SAFETY: as in `new`.
            unsafe { *self.user = (self.out)(self.value) };
        }
    }
}

/// An input array of integers of a domain.
pub struct IntArray {
    values: Vec<c_int>,
    null: bool,
}

impl IntArray {
    /// Converts `n` integers from `user`.
    pub unsafe fn new(user: *const c_int, n: c_int, to_std: fn(c_int) -> c_int) -> IntArray {
        let null = user.is_null();
        let n = if null {
            0
        } else {
            usize::try_from(n).unwrap_or(0)
        };
        // SAFETY: the array has `n` elements (the MPI call's contract).
        let values = (0..n).map(|i| to_std(unsafe { *user.add(i) })).collect();
        IntArray { values, null }
    }

    /// The standard-ABI array to pass.
    pub fn ptr(&self) -> *const c_int {
        if self.null {
            core::ptr::null()
        } else {
            self.values.as_ptr()
        }
    }
}

/// After `MPI_Type_get_contents(_c)` on `datatype` (MPICH's handle): the integers that are
/// constants in MPICH's ABI (a subarray's or darray's order, a darray's distributions and
/// distribution arguments) converted, among the first `max` of `ints`.
pub unsafe fn contents_ints_out(datatype: c_int, ints: *mut c_int, max: usize) {
    let dt = datatype_in(datatype) as crate::abi::types::MPI_Datatype;
    let (mut ni, mut na, mut nc, mut nd, mut comb) = (0, 0, 0, 0, 0);
    if ints.is_null() {
        return;
    }
    // SAFETY: the query writes only the values it is given.
    let envelope = unsafe {
        std_imp::MPI_Type_get_envelope_c(dt, &mut ni, &mut na, &mut nc, &mut nd, &mut comb)
    };
    if envelope.is_err() {
        return;
    }
    let avail = usize::try_from(ni).unwrap_or(0).min(max);
    let read = |i: usize| -> Option<c_int> {
        // SAFETY: `i` < `avail`: within the user's array and the integers the call wrote.
        (i < avail).then(|| unsafe { *ints.add(i) })
    };
    let map = |i: usize, f: fn(c_int) -> c_int| {
        if let Some(v) = read(i) {
            // SAFETY: as in `read`.
            unsafe { *ints.add(i) = f(v) };
        }
    };
    let large = nc > 0;
    if comb == crate::abi::consts::MPI_COMBINER_SUBARRAY {
        // [ndims, (sizes, subsizes, starts unless large), order]
        let n = read(0).and_then(|v| usize::try_from(v).ok()).unwrap_or(0);
        map(if large { 1 } else { 1 + 3 * n }, order_to_mpich);
    } else if comb == crate::abi::consts::MPI_COMBINER_DARRAY {
        // [size, rank, ndims, (gsizes unless large), distribs, dargs, psizes, order]
        let n = read(2).and_then(|v| usize::try_from(v).ok()).unwrap_or(0);
        let d = if large { 3 } else { 3 + n };
        for i in 0..n {
            map(d + i, distrib_to_mpich);
            map(d + n + i, darg_to_mpich);
        }
        map(d + 3 * n, order_to_mpich);
    }
}

/// The number of send or receive types of an `*alltoallw` call on `comm` (MPICH's handle):
/// the group size (the remote group's for an intercommunicator), or the neighbour count.
pub unsafe fn alltoallw_len(comm: c_int, send: bool, neighbor: bool) -> usize {
    let c = comm_in(comm) as crate::abi::types::MPI_Comm;
    let (mut a, mut b, mut w) = (0, 0, 0);
    // SAFETY: the queries write only the ints they are given.
    let n =
        unsafe {
            if neighbor {
                std_imp::MPI_Topo_test(c, &mut a).ok();
                match a {
                    x if x == crate::abi::consts::MPI_CART => {
                        std_imp::MPI_Cartdim_get(c, &mut b).map(|_| 2 * b)
                    }
                    x if x == crate::abi::consts::MPI_GRAPH => std_imp::MPI_Comm_rank(c, &mut w)
                        .and_then(|_| std_imp::MPI_Graph_neighbors_count(c, w, &mut b))
                        .map(|_| b),
                    _ => std_imp::MPI_Dist_graph_neighbors_count(c, &mut a, &mut b, &mut w)
                        .map(|_| if send { b } else { a }),
                }
            } else {
                std_imp::MPI_Comm_test_inter(c, &mut a).ok();
                if a != 0 {
                    std_imp::MPI_Comm_remote_size(c, &mut b).map(|_| b)
                } else {
                    std_imp::MPI_Comm_size(c, &mut b).map(|_| b)
                }
            }
        };
    n.ok().and_then(|n| usize::try_from(n).ok()).unwrap_or(0)
}

/// Storage behind MPICH's `MPI_UNWEIGHTED` and `MPI_WEIGHTS_EMPTY` (their addresses).
static UNWEIGHTED_MARK: c_int = 0;
/// See [`UNWEIGHTED_MARK`].
static WEIGHTS_EMPTY_MARK: c_int = 0;

/// A pointer that may be exported as a C `const` variable.
#[repr(transparent)]
pub struct ExportedPtr(*const c_void);
// SAFETY: the pointer is never written and points to immutable data (or nothing).
unsafe impl Sync for ExportedPtr {}

/// MPICH's `MPI_UNWEIGHTED` (`extern int * const`).
#[no_mangle]
pub static MPI_UNWEIGHTED: ExportedPtr =
    ExportedPtr(&UNWEIGHTED_MARK as *const c_int as *const c_void);
/// MPICH's `MPI_WEIGHTS_EMPTY`.
#[no_mangle]
pub static MPI_WEIGHTS_EMPTY: ExportedPtr =
    ExportedPtr(&WEIGHTS_EMPTY_MARK as *const c_int as *const c_void);
/// MPICH's `MPI_F_STATUS_IGNORE` (no Fortran interface: null).
#[no_mangle]
pub static MPI_F_STATUS_IGNORE: ExportedPtr = ExportedPtr(core::ptr::null());
/// MPICH's `MPI_F_STATUSES_IGNORE`.
#[no_mangle]
pub static MPI_F_STATUSES_IGNORE: ExportedPtr = ExportedPtr(core::ptr::null());
/// MPICH's `MPI_T_PVAR_ALL_HANDLES` (the standard ABI's value).
#[no_mangle]
pub static MPI_T_PVAR_ALL_HANDLES: ExportedPtr = ExportedPtr(core::ptr::dangling::<c_void>());

/// A weights array: MPICH's `MPI_UNWEIGHTED` / `MPI_WEIGHTS_EMPTY` (addresses of its
/// variables) to the standard's (10 and 11).
#[inline]
pub fn weights<T>(p: *const T) -> *mut T {
    if core::ptr::eq(p.cast::<c_int>(), &UNWEIGHTED_MARK) {
        10 as *mut T
    } else if core::ptr::eq(p.cast::<c_int>(), &WEIGHTS_EMPTY_MARK) {
        11 as *mut T
    } else {
        p as *mut T
    }
}
