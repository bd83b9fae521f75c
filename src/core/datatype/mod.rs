//! Datatypes. The predefined types of the MPI-5.0 ABI are a static table (all contiguous but
//! for the padded pair types); derived types are [`Dtype`] objects in the runtime's table,
//! compiled at construction into a layout program ([`engine`]) that packs, unpacks and lists
//! segments for the transfers.

pub mod derived;
pub mod engine;
pub mod external;
pub mod names;

pub use derived::{Contents, Dtype, Kids};

use crate::core::error::{fail, MpiResult};
use crate::core::runtime::Runtime;
use crate::mpi_abi::consts::{MPI_BYTE, MPI_DATATYPE_NULL, MPI_ERR_TYPE};
use std::sync::Arc;

/// A user datatype handle's entry in the runtime table.
#[derive(Debug)]
pub struct TypeEntry {
    /// The type (shared with requests using it, so freeing the handle is safe meanwhile).
    pub dt: Arc<Dtype>,
    /// `MPI_Type_commit` was called.
    pub committed: bool,
    /// `MPI_Type_set_name`.
    pub name: String,
    /// Attributes (keyval, value), kept for the attribute functions.
    pub attrs: Vec<(i32, usize)>,
    /// A parameterized predefined type (`MPI_Type_create_f90_*`): the predefined type it
    /// stands for (in reductions too). Such a type is never freed.
    pub f90_base: Option<usize>,
}

impl TypeEntry {
    /// A fresh, uncommitted entry.
    pub fn new(dt: Dtype) -> TypeEntry {
        TypeEntry {
            dt: Arc::new(dt),
            committed: false,
            name: String::new(),
            attrs: Vec::new(),
            f90_base: None,
        }
    }
}

/// The data of a transfer with a noncontiguous derived type: `count` elements of `dt` at the
/// transfer's buffer address.
#[derive(Clone, Debug)]
pub struct Layout {
    /// The type.
    pub dt: Arc<Dtype>,
    /// Elements.
    pub count: usize,
}

impl Layout {
    /// Packed bytes of the whole transfer.
    pub fn bytes(&self) -> usize {
        self.dt.size * self.count
    }
    /// Average bytes per contiguous segment (how well it suits vectored copies).
    pub fn avg_segment(&self) -> usize {
        self.dt.size / self.dt.prog.segments.max(1)
    }
    /// Packs bytes `[from, from + out.len())` of the transfer at `base`.
    ///
    /// # Safety
    /// `base` must be the buffer of a valid transfer of this layout (readable).
    pub unsafe fn pack(&self, base: usize, from: usize, out: &mut [u8]) {
        let t = &self.dt;
        // SAFETY: forwarded caller guarantee.
        unsafe { engine::pack(&t.prog, t.extent, self.count, base, from, out) }
    }
    /// Unpacks `data` as bytes `[from, from + data.len())` of the transfer at `base`.
    ///
    /// # Safety
    /// `base` must be the buffer of a valid transfer of this layout (writable).
    pub unsafe fn unpack(&self, base: usize, from: usize, data: &[u8]) {
        let t = &self.dt;
        // SAFETY: forwarded caller guarantee.
        unsafe { engine::unpack(&t.prog, t.extent, self.count, base, from, data) }
    }
    /// Lists the segments of bytes `[from, to)` at `base`, at most `max` of them (fewer bytes
    /// when the limit cuts the range: see `IovSink::bytes`).
    pub fn segments(&self, base: usize, from: usize, to: usize, max: usize) -> engine::IovSink {
        let mut s = engine::IovSink::new(max);
        let t = &self.dt;
        engine::walk_n(&t.prog, t.extent, self.count, base, from, to, &mut s);
        s
    }
}

impl crate::transport::wire::Gather for Layout {
    unsafe fn pack(&self, base: usize, from: usize, out: &mut [u8]) {
        // SAFETY: forwarded caller guarantee.
        unsafe { Layout::pack(self, base, from, out) }
    }
}

/// How a transfer sees its datatype.
#[derive(Clone, Debug)]
pub enum Resolved {
    /// A predefined type, or a derived one whose elements are one contiguous block
    /// (`offset` bytes from the buffer).
    Plain {
        /// Element layout.
        unit: TypeInfo,
        /// Offset of the data from the buffer address.
        offset: isize,
    },
    /// A derived type with holes.
    Layout(Arc<Dtype>),
}

impl Runtime {
    /// The type object of any valid handle (predefined ones are built on the fly); committed
    /// or not.
    pub fn dtype(&self, handle: usize) -> MpiResult<Arc<Dtype>> {
        if let Some(t) = Dtype::predefined(handle) {
            return Ok(Arc::new(t));
        }
        Ok(self.type_entry(handle)?.dt.clone())
    }

    /// The table entry of a user datatype handle.
    pub fn type_entry(&self, handle: usize) -> MpiResult<&TypeEntry> {
        match self.types.decode(handle) {
            Some(i) => Ok(self.types.get(i).unwrap()),
            None => bad_handle(handle),
        }
    }

    /// Resolves a datatype handle for a transfer of `count` elements: predefined types by
    /// the static table (no allocation), derived ones must be committed.
    #[inline(always)]
    pub fn resolve_type(&self, handle: usize, count: usize) -> MpiResult<Resolved> {
        if let Some(unit) = predefined(handle) {
            return Ok(Resolved::Plain { unit, offset: 0 });
        }
        self.resolve_derived(handle, count)
    }

    #[inline(never)]
    fn resolve_derived(&self, handle: usize, count: usize) -> MpiResult<Resolved> {
        if handle == MPI_DATATYPE_NULL && count == 0 {
            // An empty buffer of MPI_DATATYPE_NULL, which codes use for a zero-byte
            // synchronisation and MPICH accepts: as empty as zero bytes (README, deviations).
            let unit = predefined(MPI_BYTE).expect("MPI_BYTE");
            return Ok(Resolved::Plain { unit, offset: 0 });
        }
        let e = self.type_entry(handle)?;
        if !e.committed {
            return fail(
                MPI_ERR_TYPE,
                "the datatype is not committed (call MPI_Type_commit before using it)",
            );
        }
        let t = &e.dt;
        match t.contiguous_run(count) {
            Some(offset) => Ok(Resolved::Plain {
                unit: TypeInfo {
                    size: t.size,
                    extent: t.size,
                    head: 0,
                    tail_at: 0,
                    basic: 1,
                },
                offset,
            }),
            None => Ok(Resolved::Layout(t.clone())),
        }
    }
}

#[cold]
fn bad_handle<T>(handle: usize) -> MpiResult<T> {
    if handle == MPI_DATATYPE_NULL {
        fail(MPI_ERR_TYPE, "the datatype is MPI_DATATYPE_NULL")
    } else {
        fail(MPI_ERR_TYPE, format!("invalid datatype handle {handle:#x}"))
    }
}

/// What a transfer needs to know about a datatype.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TypeInfo {
    /// `MPI_Type_size`: bytes of data in one element.
    pub size: usize,
    /// Bytes one element spans in memory (extent); equal to `size` unless the type has holes
    /// (the pair types such as `MPI_DOUBLE_INT` carry alignment padding).
    pub extent: usize,
    /// For types with holes: the data of an element is `head` bytes at offset 0 followed by
    /// `size - head` bytes at offset `tail_at` (`MPI_SHORT_INT`: 2 bytes, then 4 at offset 4).
    pub head: u16,
    /// See `head`.
    pub tail_at: u16,
    /// Basic elements per element (`MPI_Get_elements`): 2 for the pair types, else 1.
    pub basic: u8,
}

impl TypeInfo {
    /// Bytes `count` elements span in memory, holes included. (Messages carry only the data:
    /// types with holes are packed, see `core::p2p`.)
    #[inline(always)]
    pub fn span(&self, count: usize) -> Option<usize> {
        count.checked_mul(self.extent)
    }
    /// Elements in `bytes` received data bytes (`MPI_Get_count`), or `None` (MPI_UNDEFINED).
    pub fn count_of(&self, bytes: u64) -> Option<u64> {
        if self.size == 0 {
            return if bytes == 0 { Some(0) } else { None };
        }
        bytes
            .is_multiple_of(self.size as u64)
            .then(|| bytes / self.size as u64)
    }
}

/// Size and extent of every predefined datatype, indexed by `handle - 0x200` (the ABI puts
/// all predefined datatypes in 0x200..0x300). Extent 0 marks unused values. Fortran types use
/// gfortran's default kinds (INTEGER, REAL, LOGICAL: 4 bytes).
static PREDEFINED: [TypeInfo; 256] = {
    const fn plain(n: usize) -> TypeInfo {
        TypeInfo {
            size: n,
            extent: n,
            head: n as u16,
            tail_at: n as u16,
            basic: 1,
        }
    }
    const fn pair(size: usize, extent: usize, head: usize, tail_at: usize) -> TypeInfo {
        TypeInfo {
            size,
            extent,
            head: head as u16,
            tail_at: tail_at as u16,
            basic: 2,
        }
    }
    let long = std::mem::size_of::<libc::c_long>();
    let wchar = std::mem::size_of::<libc::wchar_t>();
    let mut t = [TypeInfo {
        size: 0,
        extent: 0,
        head: 0,
        tail_at: 0,
        basic: 0,
    }; 256];
    let entries: [(usize, TypeInfo); 69] = [
        (0x01, plain(8)),             // MPI_AINT
        (0x02, plain(8)),             // MPI_COUNT
        (0x03, plain(8)),             // MPI_OFFSET
        (0x07, plain(1)),             // MPI_PACKED
        (0x08, plain(2)),             // MPI_SHORT
        (0x09, plain(4)),             // MPI_INT
        (0x0a, plain(long)),          // MPI_LONG
        (0x0b, plain(8)),             // MPI_LONG_LONG
        (0x0c, plain(2)),             // MPI_UNSIGNED_SHORT
        (0x0d, plain(4)),             // MPI_UNSIGNED
        (0x0e, plain(long)),          // MPI_UNSIGNED_LONG
        (0x0f, plain(8)),             // MPI_UNSIGNED_LONG_LONG
        (0x10, plain(4)),             // MPI_FLOAT
        (0x12, plain(8)),             // MPI_C_FLOAT_COMPLEX
        (0x13, plain(8)),             // MPI_CXX_FLOAT_COMPLEX
        (0x14, plain(8)),             // MPI_DOUBLE
        (0x16, plain(16)),            // MPI_C_DOUBLE_COMPLEX
        (0x17, plain(16)),            // MPI_CXX_DOUBLE_COMPLEX
        (0x18, plain(4)),             // MPI_LOGICAL
        (0x19, plain(4)),             // MPI_INTEGER
        (0x1a, plain(4)),             // MPI_REAL
        (0x1b, plain(8)),             // MPI_COMPLEX
        (0x1c, plain(8)),             // MPI_DOUBLE_PRECISION
        (0x1d, plain(16)),            // MPI_DOUBLE_COMPLEX
        (0x1e, plain(1)),             // MPI_CHARACTER
        (0x20, plain(16)),            // MPI_LONG_DOUBLE
        (0x24, plain(32)),            // MPI_C_LONG_DOUBLE_COMPLEX
        (0x25, plain(32)),            // MPI_CXX_LONG_DOUBLE_COMPLEX
        (0x28, pair(8, 8, 8, 8)),     // MPI_FLOAT_INT
        (0x29, pair(12, 16, 12, 12)), // MPI_DOUBLE_INT
        (0x2a, pair(12, 16, 12, 12)), // MPI_LONG_INT
        (0x2b, pair(8, 8, 8, 8)),     // MPI_2INT
        (0x2c, pair(6, 8, 2, 4)),     // MPI_SHORT_INT
        (0x2d, pair(20, 32, 20, 20)), // MPI_LONG_DOUBLE_INT
        (0x30, pair(8, 8, 8, 8)),     // MPI_2REAL
        (0x31, pair(16, 16, 16, 16)), // MPI_2DOUBLE_PRECISION
        (0x32, pair(8, 8, 8, 8)),     // MPI_2INTEGER
        (0x38, plain(1)),             // MPI_C_BOOL
        (0x39, plain(1)),             // MPI_CXX_BOOL
        (0x3c, plain(wchar)),         // MPI_WCHAR
        (0x40, plain(1)),             // MPI_INT8_T
        (0x41, plain(1)),             // MPI_UINT8_T
        (0x43, plain(1)),             // MPI_CHAR
        (0x44, plain(1)),             // MPI_SIGNED_CHAR
        (0x45, plain(1)),             // MPI_UNSIGNED_CHAR
        (0x47, plain(1)),             // MPI_BYTE
        (0x48, plain(2)),             // MPI_INT16_T
        (0x49, plain(2)),             // MPI_UINT16_T
        (0x50, plain(4)),             // MPI_INT32_T
        (0x51, plain(4)),             // MPI_UINT32_T
        (0x58, plain(8)),             // MPI_INT64_T
        (0x59, plain(8)),             // MPI_UINT64_T
        (0xc0, plain(1)),             // MPI_LOGICAL1
        (0xc1, plain(1)),             // MPI_INTEGER1
        (0xc8, plain(2)),             // MPI_LOGICAL2
        (0xc9, plain(2)),             // MPI_INTEGER2
        (0xca, plain(2)),             // MPI_REAL2
        (0xd0, plain(4)),             // MPI_LOGICAL4
        (0xd1, plain(4)),             // MPI_INTEGER4
        (0xd2, plain(4)),             // MPI_REAL4
        (0xd3, plain(4)),             // MPI_COMPLEX4
        (0xd8, plain(8)),             // MPI_LOGICAL8
        (0xd9, plain(8)),             // MPI_INTEGER8
        (0xda, plain(8)),             // MPI_REAL8
        (0xdb, plain(8)),             // MPI_COMPLEX8
        (0xe0, plain(16)),            // MPI_LOGICAL16
        (0xe1, plain(16)),            // MPI_INTEGER16
        (0xe2, plain(16)),            // MPI_REAL16
        (0xe3, plain(16)),            // MPI_COMPLEX16
    ];
    let mut k = 0;
    while k < entries.len() {
        t[entries[k].0] = entries[k].1;
        k += 1;
    }
    t[0xeb] = plain(32); // MPI_COMPLEX32
    t
};

/// Looks up a predefined datatype by its ABI handle value. `None` for unknown values.
#[inline(always)]
pub fn predefined(handle: usize) -> Option<TypeInfo> {
    let i = handle.wrapping_sub(0x200);
    if i < 256 {
        let t = PREDEFINED[i];
        if t.extent != 0 {
            return Some(t);
        }
    }
    None
}

/// Element sizes of the predefined datatypes whose elements lie back to back (size equal to
/// extent), by handle value - 0x200; 0 for the others and for unknown values. One byte
/// per type, so that the fast paths check a type with one load.
static CONTIGUOUS_SIZE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let p = PREDEFINED[i];
        if p.extent != 0 && p.size == p.extent && p.size < 256 {
            t[i] = p.size as u8;
        }
        i += 1;
    }
    t
};

/// The element size of predefined datatype `handle` if its elements lie back to back (a
/// predefined type without holes); `None` for every other handle.
#[inline(always)]
pub fn contiguous_size(handle: usize) -> Option<usize> {
    match CONTIGUOUS_SIZE.get(handle.wrapping_sub(0x200)) {
        Some(&n) if n != 0 => Some(n as usize),
        _ => None,
    }
}

/// Size of the first component of a pair type (`MPI_DOUBLE_INT`: the double), for counting
/// basic elements of a message cut between components.
pub fn first_component(handle: usize, t: &TypeInfo) -> usize {
    match handle.wrapping_sub(0x200) {
        // MPI_2INT, MPI_2REAL, MPI_2DOUBLE_PRECISION, MPI_2INTEGER: two equal halves.
        0x2b | 0x30 | 0x31 | 0x32 => t.size / 2,
        // The value-int pairs end with a C int.
        _ => t.size - std::mem::size_of::<i32>(),
    }
}

/// Resolves a datatype handle for a transfer; `MPI_ERR_TYPE` for null or unknown handles.
#[inline(always)]
pub fn lookup(handle: usize) -> MpiResult<TypeInfo> {
    match predefined(handle) {
        Some(t) => Ok(t),
        None if handle == MPI_DATATYPE_NULL => {
            fail(MPI_ERR_TYPE, "the datatype is MPI_DATATYPE_NULL")
        }
        None => fail(MPI_ERR_TYPE, format!("invalid datatype handle {handle:#x}")),
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::mpi_abi::consts::{MPI_DOUBLE_INT, MPI_INT};

    #[test]
    fn sizes_and_counts() {
        assert_eq!(lookup(MPI_INT).unwrap().size, 4);
        let di = lookup(MPI_DOUBLE_INT).unwrap();
        assert_eq!((di.size, di.extent, di.basic), (12, 16, 2));
        let si = lookup(crate::mpi_abi::consts::MPI_SHORT_INT).unwrap();
        assert_eq!((si.size, si.extent, si.head, si.tail_at), (6, 8, 2, 4));
        assert_eq!(lookup(MPI_INT).unwrap().count_of(12), Some(3));
        assert_eq!(lookup(MPI_INT).unwrap().count_of(13), None);
        assert!(lookup(MPI_DATATYPE_NULL).is_err());
        assert!(lookup(0x2ff).is_err());
        assert_eq!(
            lookup(crate::mpi_abi::consts::MPI_COMPLEX32).unwrap().size,
            32
        );
        assert_eq!(
            lookup(crate::mpi_abi::consts::MPI_UINT64_T).unwrap().size,
            8
        );
    }
}

#[cfg(all(test, not(loom)))]
mod proptests;
