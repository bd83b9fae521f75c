//! Datatypes. This layer knows the predefined types of the MPI-5.0 ABI (all of which are
//! contiguous in memory); derived datatypes plug in here with their own layout programs.

use crate::abi::consts::*;
use crate::core::error::{fail, MpiResult};

/// What a transfer needs to know about a datatype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypeInfo {
    /// `MPI_Type_size`: bytes of data in one element.
    pub size: usize,
    /// Bytes one element spans in memory (extent); equal to `size` unless the type has holes
    /// (the pair types such as `MPI_DOUBLE_INT` carry alignment padding).
    pub extent: usize,
}

impl TypeInfo {
    const fn plain(n: usize) -> Self {
        TypeInfo { size: n, extent: n }
    }
    const fn padded(size: usize, extent: usize) -> Self {
        TypeInfo { size, extent }
    }
    /// Bytes moved for `count` elements: the memory span, holes included. Pair types travel
    /// with their padding; both sides use the same type, so the bytes land where they belong.
    #[inline]
    pub fn span(&self, count: usize) -> Option<usize> {
        count.checked_mul(self.extent)
    }
    /// Elements in `bytes` received bytes (`MPI_Get_count`), or `None` (MPI_UNDEFINED).
    pub fn count_of(&self, bytes: u64) -> Option<u64> {
        if self.extent == 0 {
            return if bytes == 0 { Some(0) } else { None };
        }
        (bytes % self.extent as u64 == 0).then(|| bytes / self.extent as u64)
    }
}

/// Looks up a predefined datatype by its ABI handle value. `None` for unknown values.
#[inline]
pub fn predefined(handle: usize) -> Option<TypeInfo> {
    use std::mem::size_of;
    let h = handle;
    Some(match h {
        x if x == MPI_AINT || x == MPI_COUNT || x == MPI_OFFSET => TypeInfo::plain(8),
        x if x == MPI_PACKED
            || x == MPI_BYTE
            || x == MPI_CHAR
            || x == MPI_SIGNED_CHAR
            || x == MPI_UNSIGNED_CHAR =>
        {
            TypeInfo::plain(1)
        }
        x if x == MPI_INT8_T || x == MPI_UINT8_T || x == MPI_C_BOOL => TypeInfo::plain(1),
        x if x == MPI_SHORT || x == MPI_UNSIGNED_SHORT || x == MPI_INT16_T || x == MPI_UINT16_T => {
            TypeInfo::plain(2)
        }
        x if x == MPI_INT
            || x == MPI_UNSIGNED
            || x == MPI_INT32_T
            || x == MPI_UINT32_T
            || x == MPI_FLOAT =>
        {
            TypeInfo::plain(4)
        }
        x if x == MPI_WCHAR => TypeInfo::plain(size_of::<libc::wchar_t>()),
        x if x == MPI_LONG || x == MPI_UNSIGNED_LONG => TypeInfo::plain(size_of::<libc::c_long>()),
        x if x == MPI_LONG_LONG
            || x == MPI_UNSIGNED_LONG_LONG
            || x == MPI_INT64_T
            || x == MPI_UINT64_T =>
        {
            TypeInfo::plain(8)
        }
        x if x == MPI_DOUBLE || x == MPI_C_FLOAT_COMPLEX => TypeInfo::plain(8),
        x if x == MPI_C_DOUBLE_COMPLEX || x == MPI_LONG_DOUBLE => TypeInfo::plain(16),
        x if x == MPI_FLOAT_INT || x == MPI_2INT => TypeInfo::plain(8),
        x if x == MPI_DOUBLE_INT => TypeInfo::padded(12, 16),
        x if x == MPI_LONG_INT => TypeInfo::padded(12, 16),
        x if x == MPI_SHORT_INT => TypeInfo::padded(6, 8),
        x if x == MPI_LONG_DOUBLE_INT => TypeInfo::padded(20, 32),
        _ => return extra_predefined(h),
    })
}

/// Predefined types added to the ABI table beyond the core C set (Fortran, C++, sized).
fn extra_predefined(h: usize) -> Option<TypeInfo> {
    // Values of the MPI-5.0 ABI (see src/abi/api/prologue.h).
    Some(match h {
        0x224 => TypeInfo::plain(32), // MPI_C_LONG_DOUBLE_COMPLEX
        _ => return None,
    })
}

/// Resolves a datatype handle for a transfer; `MPI_ERR_TYPE` for null or unknown handles.
#[inline]
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

    #[test]
    fn sizes_and_counts() {
        assert_eq!(lookup(MPI_INT).unwrap().size, 4);
        assert_eq!(
            lookup(MPI_DOUBLE_INT).unwrap(),
            TypeInfo {
                size: 12,
                extent: 16
            }
        );
        assert_eq!(lookup(MPI_INT).unwrap().count_of(12), Some(3));
        assert_eq!(lookup(MPI_INT).unwrap().count_of(13), None);
        assert!(lookup(MPI_DATATYPE_NULL).is_err());
        assert!(lookup(0x2ff).is_err());
    }
}
