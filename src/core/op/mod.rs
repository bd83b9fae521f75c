//! Reduction operations: the predefined ops on every type the standard allows, user ops
//! (`MPI_Op_create`), and one entry point for everything that reduces (`MPI_Reduce_local`
//! now, the collectives and accumulate later).
//!
//! Use: resolve `(op, datatype)` once with [`Runtime::reducer`] (all argument checks happen
//! there, giving `MPI_ERR_OP`/`MPI_ERR_TYPE`), then apply the [`Reducer`] to as many buffer
//! pairs as needed with [`Reducer::apply`] (safe, over byte slices) or [`Reducer::apply_raw`]
//! (user buffers). A `Reducer` is `Copy` and holds no borrow of the runtime, so it can be
//! applied outside the runtime lock — which a user function needs, since it may call MPI.
//!
//! The predefined kernels live in `kernels.rs` (Rust) and `ext.c` (long double, `__float128`,
//! `_Float16`; see `ext.rs`).

pub mod ext;
pub mod kernels;

use crate::core::datatype::{self, TypeInfo};
use crate::core::error::{fail, MpiResult};
use crate::core::runtime::Runtime;
use crate::mpi_abi::consts::*;
use crate::mpi_abi::types::{MPI_Count, MPI_Datatype};
use core::ffi::{c_int, c_void};
use ext::Which;
use kernels::*;

/// The predefined operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// `MPI_SUM`.
    Sum,
    /// `MPI_PROD`.
    Prod,
    /// `MPI_MAX`.
    Max,
    /// `MPI_MIN`.
    Min,
    /// `MPI_LAND`.
    Land,
    /// `MPI_LOR`.
    Lor,
    /// `MPI_LXOR`.
    Lxor,
    /// `MPI_BAND`.
    Band,
    /// `MPI_BOR`.
    Bor,
    /// `MPI_BXOR`.
    Bxor,
    /// `MPI_MAXLOC`.
    Maxloc,
    /// `MPI_MINLOC`.
    Minloc,
    /// `MPI_REPLACE` (`inout = in`).
    Replace,
    /// `MPI_NO_OP` (`inout` unchanged).
    NoOp,
}

impl Builtin {
    /// The predefined op with ABI handle `h`.
    #[inline]
    pub fn from_handle(h: usize) -> Option<Builtin> {
        use Builtin::*;
        // The ABI numbers the predefined ops 0x21..=0x3d.
        const BY_HANDLE: [Option<Builtin>; 0x1e] = {
            let mut t = [None; 0x1e];
            t[MPI_SUM - 0x20] = Some(Sum);
            t[MPI_PROD - 0x20] = Some(Prod);
            t[MPI_MAX - 0x20] = Some(Max);
            t[MPI_MIN - 0x20] = Some(Min);
            t[MPI_LAND - 0x20] = Some(Land);
            t[MPI_LOR - 0x20] = Some(Lor);
            t[MPI_LXOR - 0x20] = Some(Lxor);
            t[MPI_BAND - 0x20] = Some(Band);
            t[MPI_BOR - 0x20] = Some(Bor);
            t[MPI_BXOR - 0x20] = Some(Bxor);
            t[MPI_MAXLOC - 0x20] = Some(Maxloc);
            t[MPI_MINLOC - 0x20] = Some(Minloc);
            t[MPI_REPLACE - 0x20] = Some(Replace);
            t[MPI_NO_OP - 0x20] = Some(NoOp);
            t
        };
        BY_HANDLE.get(h.wrapping_sub(0x20)).copied().flatten()
    }

    /// The C name, for messages.
    pub fn name(self) -> &'static str {
        use Builtin::*;
        match self {
            Sum => "MPI_SUM",
            Prod => "MPI_PROD",
            Max => "MPI_MAX",
            Min => "MPI_MIN",
            Land => "MPI_LAND",
            Lor => "MPI_LOR",
            Lxor => "MPI_LXOR",
            Band => "MPI_BAND",
            Bor => "MPI_BOR",
            Bxor => "MPI_BXOR",
            Maxloc => "MPI_MAXLOC",
            Minloc => "MPI_MINLOC",
            Replace => "MPI_REPLACE",
            NoOp => "MPI_NO_OP",
        }
    }

    /// Whether the op is commutative. Every predefined reduction is; `MPI_REPLACE` and
    /// `MPI_NO_OP` (which keep one operand) are not.
    pub fn commutative(self) -> bool {
        !matches!(self, Builtin::Replace | Builtin::NoOp)
    }
}

/// `MPI_User_function`: `void f(void *invec, void *inoutvec, int *len, MPI_Datatype *dt)`.
pub type UserFnInt = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut MPI_Datatype);
/// `MPI_User_function_c`: `void f(void *invec, void *inoutvec, MPI_Count *len, MPI_Datatype
/// *dt)`.
pub type UserFnBig =
    unsafe extern "C" fn(*mut c_void, *mut c_void, *mut MPI_Count, *mut MPI_Datatype);

/// The function given to `MPI_Op_create` or `MPI_Op_create_c`.
#[derive(Clone, Copy, Debug)]
pub enum UserFn {
    /// From `MPI_Op_create`.
    Int(UserFnInt),
    /// From `MPI_Op_create_c`.
    Big(UserFnBig),
}

/// A user op object (`MPI_Op_create`).
#[derive(Clone, Copy, Debug)]
pub struct UserOp {
    /// The user's function.
    pub func: UserFn,
    /// The `commute` flag given at creation.
    pub commute: bool,
}

/// A resolved operation handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpRef {
    /// A predefined op.
    Builtin(Builtin),
    /// A user op (index in `Runtime::ops`).
    User(u32),
}

/// What the elements of a predefined datatype are, for choosing kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Num {
    I8,
    I16,
    I32,
    I64,
    I128,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
    C(Which),
}

/// The standard's type groups (MPI-4.1 §6.9.2), which decide the valid ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Group {
    /// C integer: SUM PROD MAX MIN, logical and bitwise ops.
    CInt(Num),
    /// Fortran integer and the multi-language types (`MPI_AINT`, `MPI_OFFSET`, `MPI_COUNT`):
    /// SUM PROD MAX MIN and the bitwise ops.
    FInt(Num),
    /// Floating point: SUM PROD MAX MIN.
    Float(Num),
    /// Complex (of the given real type): SUM PROD.
    Complex(Num),
    /// Logical (C bool, Fortran LOGICAL of the given width): the logical ops.
    Logical(Num),
    /// `MPI_BYTE`: the bitwise ops.
    Byte,
    /// A value-index pair: MAXLOC and MINLOC.
    Pair(usize),
    /// Predefined, but in no reduction group (`MPI_CHAR`, `MPI_PACKED`, ...): only REPLACE
    /// and NO_OP apply.
    Other,
}

fn group_of(dt: usize) -> Group {
    use Group::*;
    use Num::*;
    let long = if std::mem::size_of::<libc::c_long>() == 8 {
        I64
    } else {
        I32
    };
    let ulong = if long == I64 { U64 } else { U32 };
    match dt.wrapping_sub(0x200) {
        0x01..=0x03 => FInt(I64),         // MPI_AINT, MPI_COUNT, MPI_OFFSET
        0x08 => CInt(I16),                // MPI_SHORT
        0x09 => CInt(I32),                // MPI_INT
        0x0a => CInt(long),               // MPI_LONG
        0x0b => CInt(I64),                // MPI_LONG_LONG
        0x0c => CInt(U16),                // MPI_UNSIGNED_SHORT
        0x0d => CInt(U32),                // MPI_UNSIGNED
        0x0e => CInt(ulong),              // MPI_UNSIGNED_LONG
        0x0f => CInt(U64),                // MPI_UNSIGNED_LONG_LONG
        0x10 | 0x1a | 0xd2 => Float(F32), // MPI_FLOAT, MPI_REAL, MPI_REAL4
        0x14 | 0x1c | 0xda => Float(F64), // MPI_DOUBLE, MPI_DOUBLE_PRECISION, MPI_REAL8
        0x20 => Float(C(Which::LongDouble)),
        0xe2 => Float(C(Which::Quad)),             // MPI_REAL16
        0xca => Float(C(Which::Half)),             // MPI_REAL2
        0x12 | 0x13 | 0x1b | 0xdb => Complex(F32), // C/CXX float complex, COMPLEX, COMPLEX8
        0x16 | 0x17 | 0x1d | 0xe3 => Complex(F64), // C/CXX double complex, DOUBLE COMPLEX, COMPLEX16
        0x24 | 0x25 => Complex(C(Which::LongDouble)),
        0xeb => Complex(C(Which::Quad)), // MPI_COMPLEX32
        0xd3 => Complex(C(Which::Half)), // MPI_COMPLEX4
        0x18 | 0xd0 => Logical(I32),     // MPI_LOGICAL, MPI_LOGICAL4
        0x38 | 0x39 => Logical(U8),      // MPI_C_BOOL, MPI_CXX_BOOL
        0xc0 => Logical(I8),             // MPI_LOGICAL1
        0xc8 => Logical(I16),            // MPI_LOGICAL2
        0xd8 => Logical(I64),            // MPI_LOGICAL8
        0xe0 => Logical(I128),           // MPI_LOGICAL16
        0x19 | 0xd1 => FInt(I32),        // MPI_INTEGER, MPI_INTEGER4
        0xc1 => FInt(I8),                // MPI_INTEGER1
        0xc9 => FInt(I16),               // MPI_INTEGER2
        0xd9 => FInt(I64),               // MPI_INTEGER8
        0xe1 => FInt(I128),              // MPI_INTEGER16
        0x40 | 0x44 => CInt(I8),         // MPI_INT8_T, MPI_SIGNED_CHAR
        0x41 | 0x45 => CInt(U8),         // MPI_UINT8_T, MPI_UNSIGNED_CHAR
        0x48 => CInt(I16),
        0x49 => CInt(U16),
        0x50 => CInt(I32),
        0x51 => CInt(U32),
        0x58 => CInt(I64),
        0x59 => CInt(U64),
        0x47 => Byte,
        p @ 0x28..=0x32 => Pair(p),
        _ => Other,
    }
}

macro_rules! by_num {
    ($num:expr, $f:ident, [$($n:ident => $t:ty),*]) => {
        match $num {
            $(Num::$n => Some($f::<$t> as Kernel),)*
            #[allow(unreachable_patterns)]
            _ => None,
        }
    };
}

fn arith(op: Builtin, n: Num) -> Option<Kernel> {
    if let Num::C(w) = n {
        return ext::real(w, op);
    }
    macro_rules! all {
        ($f:ident) => {
            by_num!(n, $f, [I8 => i8, I16 => i16, I32 => i32, I64 => i64, I128 => i128,
                U8 => u8, U16 => u16, U32 => u32, U64 => u64, F32 => f32, F64 => f64])
        };
    }
    match op {
        Builtin::Sum => all!(sum),
        Builtin::Prod => all!(prod),
        Builtin::Max => all!(max),
        Builtin::Min => all!(min),
        _ => None,
    }
}

fn bits(op: Builtin, n: Num) -> Option<Kernel> {
    macro_rules! ints {
        ($f:ident) => {
            by_num!(n, $f, [I8 => i8, I16 => i16, I32 => i32, I64 => i64, I128 => i128,
                U8 => u8, U16 => u16, U32 => u32, U64 => u64])
        };
    }
    match op {
        Builtin::Band => ints!(band),
        Builtin::Bor => ints!(bor),
        Builtin::Bxor => ints!(bxor),
        Builtin::Land => ints!(land),
        Builtin::Lor => ints!(lor),
        Builtin::Lxor => ints!(lxor),
        _ => None,
    }
}

fn complex(op: Builtin, n: Num) -> Option<Kernel> {
    match (n, op) {
        (Num::C(w), _) => ext::complex(w, op),
        (Num::F32, Builtin::Sum) => Some(csum::<f32>),
        (Num::F32, Builtin::Prod) => Some(cprod::<f32>),
        (Num::F64, Builtin::Sum) => Some(csum::<f64>),
        (Num::F64, Builtin::Prod) => Some(cprod::<f64>),
        _ => None,
    }
}

fn pair(op: Builtin, p: usize) -> Option<Kernel> {
    let max = match op {
        Builtin::Maxloc => true,
        Builtin::Minloc => false,
        _ => return None,
    };
    macro_rules! l {
        ($v:ty, $i:ty, $at:expr, $ext:expr) => {
            if max {
                loc::<$v, $i, $at, $ext, true> as Kernel
            } else {
                loc::<$v, $i, $at, $ext, false> as Kernel
            }
        };
    }
    Some(match p {
        0x28 => l!(f32, i32, 4, 8),  // MPI_FLOAT_INT
        0x29 => l!(f64, i32, 8, 16), // MPI_DOUBLE_INT
        0x2a if std::mem::size_of::<libc::c_long>() == 8 => l!(i64, i32, 8, 16), // MPI_LONG_INT
        0x2a => l!(i32, i32, 4, 8),
        0x2b | 0x32 => l!(i32, i32, 4, 8), // MPI_2INT, MPI_2INTEGER
        0x2c => l!(i16, i32, 4, 8),        // MPI_SHORT_INT
        0x2d => {
            if max {
                ext::ldi_maxloc
            } else {
                ext::ldi_minloc
            }
        }
        0x30 => l!(f32, f32, 4, 8),  // MPI_2REAL
        0x31 => l!(f64, f64, 8, 16), // MPI_2DOUBLE_PRECISION
        _ => return None,
    })
}

/// The kernel of predefined op `op` on predefined datatype `dt`, or `None` when the standard
/// does not define the combination.
pub fn builtin_kernel(op: Builtin, dt: usize) -> Option<Kernel> {
    datatype::predefined(dt)?;
    match op {
        Builtin::Replace => return Some(replace),
        Builtin::NoOp => return Some(no_op),
        _ => {}
    }
    match group_of(dt) {
        Group::CInt(n) => arith(op, n).or_else(|| bits(op, n)),
        Group::FInt(n) => arith(op, n).or_else(|| match op {
            Builtin::Band | Builtin::Bor | Builtin::Bxor => bits(op, n),
            _ => None,
        }),
        Group::Float(n) => arith(op, n),
        Group::Complex(n) => complex(op, n),
        Group::Logical(n) => match op {
            Builtin::Land | Builtin::Lor | Builtin::Lxor => bits(op, n),
            _ => None,
        },
        Group::Byte => match op {
            Builtin::Band | Builtin::Bor | Builtin::Bxor => bits(op, Num::U8),
            _ => None,
        },
        Group::Pair(p) => pair(op, p),
        Group::Other => None,
    }
}

/// Number of predefined ops (the `Builtin` variants).
const NBUILTIN: usize = 14;

/// [`builtin_kernel`] for every (predefined datatype, op), computed once: the per-call
/// lookup is then one index.
type KernelTable = [[Option<Kernel>; NBUILTIN]; 256];

fn kernel_table() -> &'static KernelTable {
    static TABLE: std::sync::OnceLock<Box<KernelTable>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        use Builtin::*;
        let all = [
            Sum, Prod, Max, Min, Land, Lor, Lxor, Band, Bor, Bxor, Maxloc, Minloc, Replace, NoOp,
        ];
        let mut t = Box::new([[None; NBUILTIN]; 256]);
        for (k, row) in t.iter_mut().enumerate() {
            for op in all {
                row[op as usize] = builtin_kernel(op, 0x200 + k);
            }
        }
        t
    })
}

/// The kernel of `op` on `dt` through the table (same answer as [`builtin_kernel`]).
#[inline]
fn cached_kernel(op: Builtin, dt: usize) -> Option<Kernel> {
    let k = dt.wrapping_sub(0x200);
    if k < 256 {
        kernel_table()[k][op as usize]
    } else {
        None
    }
}

/// Decides whether a derived datatype may be used with `op`, and gives its layout: a user op
/// accepts any committed datatype (its function receives the handle and walks the elements
/// by extent); the predefined ops are defined only on predefined datatypes (`MPI_ERR_OP`),
/// as the standard's table of op/type pairs says.
pub fn derived_type_for_op(rt: &Runtime, op: OpRef, dt: usize) -> MpiResult<TypeInfo> {
    if dt == MPI_DATATYPE_NULL {
        return fail(MPI_ERR_TYPE, "the datatype is MPI_DATATYPE_NULL");
    }
    let entry = rt.type_entry(dt)?;
    if !entry.committed {
        return fail(MPI_ERR_TYPE, "the datatype is not committed");
    }
    match op {
        OpRef::User(_) => Ok(entry.dt.info()),
        OpRef::Builtin(b) => fail(
            MPI_ERR_OP,
            format!(
                "{} is defined only for predefined datatypes (use a user op for derived datatypes)",
                b.name()
            ),
        ),
    }
}

/// A checked `(op, datatype)` pair, ready to apply to buffers.
#[derive(Clone, Copy, Debug)]
pub struct Reducer {
    how: How,
    /// Bytes between consecutive elements (the datatype's extent).
    pub extent: usize,
    /// Whether the op is commutative.
    pub commutative: bool,
}

#[derive(Clone, Copy, Debug)]
enum How {
    Kernel(Kernel),
    User { func: UserFn, dt: usize },
}

impl Runtime {
    /// Resolves an op handle; `MPI_ERR_OP` for `MPI_OP_NULL` and unknown or freed handles.
    #[inline]
    pub fn op(&self, h: usize) -> MpiResult<OpRef> {
        if let Some(b) = Builtin::from_handle(h) {
            return Ok(OpRef::Builtin(b));
        }
        match self.ops.decode(h) {
            Some(i) => Ok(OpRef::User(i)),
            None if h == MPI_OP_NULL => fail(MPI_ERR_OP, "the operation is MPI_OP_NULL"),
            None => fail(MPI_ERR_OP, format!("invalid operation handle {h:#x}")),
        }
    }

    /// `MPI_Op_commutative`.
    pub fn op_commutative(&self, op: OpRef) -> bool {
        match op {
            OpRef::Builtin(b) => b.commutative(),
            OpRef::User(i) => self.ops.get(i).is_some_and(|u| u.commute),
        }
    }

    /// Checks op handle `op` against datatype handle `dt` and returns how to apply it:
    /// `MPI_ERR_OP` for a bad op or a combination the standard does not define (e.g.
    /// `MPI_BAND` on `MPI_DOUBLE`, `MPI_SUM` on `MPI_2INT`), `MPI_ERR_TYPE` for a bad datatype.
    /// `MPI_REPLACE` and `MPI_NO_OP` are refused (`MPI_ERR_OP`): the standard allows them only
    /// in the accumulate functions, which use [`Runtime::accumulate_reducer`].
    #[inline]
    pub fn reducer(&self, op: usize, dt: usize) -> MpiResult<Reducer> {
        self.resolve(op, dt, false)
    }

    /// [`Runtime::reducer`] for the accumulate functions (`MPI_Accumulate`,
    /// `MPI_Get_accumulate`, `MPI_Fetch_and_op`, ...), where `MPI_REPLACE` and `MPI_NO_OP` are
    /// valid on every predefined datatype.
    pub fn accumulate_reducer(&self, op: usize, dt: usize) -> MpiResult<Reducer> {
        self.resolve(op, dt, true)
    }

    #[inline]
    fn resolve(&self, op: usize, dt: usize, accumulate: bool) -> MpiResult<Reducer> {
        let opref = self.op(op)?;
        if let OpRef::Builtin(b @ (Builtin::Replace | Builtin::NoOp)) = opref {
            if !accumulate {
                return fail(
                    MPI_ERR_OP,
                    format!(
                        "{} is valid only in the accumulate functions, not in reductions",
                        b.name()
                    ),
                );
            }
        }
        // A parameterized predefined type (`MPI_Type_create_f90_*`) reduces as the
        // predefined type it stands for.
        let (dt, info) = match datatype::predefined(dt) {
            Some(t) => (dt, t),
            None => match self.type_entry(dt).ok().and_then(|e| e.f90_base) {
                Some(base) if matches!(opref, OpRef::Builtin(_)) => {
                    (base, datatype::predefined(base).expect("f90 base type"))
                }
                _ => (dt, derived_type_for_op(self, opref, dt)?),
            },
        };
        match opref {
            OpRef::Builtin(b) => match cached_kernel(b, dt) {
                Some(k) => Ok(Reducer {
                    how: How::Kernel(k),
                    extent: info.extent,
                    commutative: b.commutative(),
                }),
                None => fail(
                    MPI_ERR_OP,
                    format!("{} is not defined for datatype {}", b.name(), type_name(dt)),
                ),
            },
            OpRef::User(i) => {
                let u = self.ops.get(i).expect("decoded op handle");
                Ok(Reducer {
                    how: How::User { func: u.func, dt },
                    extent: info.extent,
                    commutative: u.commute,
                })
            }
        }
    }

    /// `MPI_Op_create(_c)`: the new op's handle.
    pub fn op_create(&mut self, func: UserFn, commute: bool) -> MpiResult<usize> {
        match self.ops.insert(UserOp { func, commute }) {
            Some(i) => Ok(self.ops.handle(i)),
            None => fail(MPI_ERR_INTERN, "too many user operations"),
        }
    }

    /// `MPI_Op_free`: `MPI_ERR_OP` for predefined, null or invalid handles.
    pub fn op_free(&mut self, h: usize) -> MpiResult<()> {
        match self.op(h)? {
            OpRef::Builtin(b) => fail(
                MPI_ERR_OP,
                format!("{} is a predefined operation and cannot be freed", b.name()),
            ),
            OpRef::User(i) => {
                self.ops.free(i);
                Ok(())
            }
        }
    }
}

/// A datatype's name for messages (handle value for the ones without a short name).
fn type_name(dt: usize) -> String {
    let name = match dt {
        MPI_INT => "MPI_INT",
        MPI_DOUBLE => "MPI_DOUBLE",
        MPI_FLOAT => "MPI_FLOAT",
        MPI_2INT => "MPI_2INT",
        MPI_DOUBLE_INT => "MPI_DOUBLE_INT",
        MPI_CHAR => "MPI_CHAR",
        MPI_BYTE => "MPI_BYTE",
        MPI_C_BOOL => "MPI_C_BOOL",
        MPI_LOGICAL => "MPI_LOGICAL",
        MPI_LONG_DOUBLE => "MPI_LONG_DOUBLE",
        MPI_C_DOUBLE_COMPLEX => "MPI_C_DOUBLE_COMPLEX",
        _ => return format!("{dt:#x}"),
    };
    name.to_string()
}

impl Reducer {
    /// The reduction of predefined op `op` on predefined datatype `dt` without a runtime
    /// (the simulator's schedules); `None` when the standard does not define the pair.
    pub fn builtin(op: Builtin, dt: usize) -> Option<Reducer> {
        let info = datatype::predefined(dt)?;
        Some(Reducer {
            how: How::Kernel(builtin_kernel(op, dt)?),
            extent: info.extent,
            commutative: op.commutative(),
        })
    }

    /// `inout[k] = in[k] op inout[k]` for the whole elements both slices hold (normally
    /// equal lengths). For a user op the function is called directly:
    /// call this outside the runtime lock when the op may be a user op.
    pub fn apply(&self, input: &[u8], inout: &mut [u8]) {
        let n = inout.len().min(input.len()) / self.extent.max(1);
        match self.how {
            How::Kernel(k) => k(input, inout),
            How::User { .. } => {
                // SAFETY: both slices hold at least `n` elements (n is taken from the shorter)
                // and do not overlap (one is borrowed mutably).
                unsafe { self.call_user(n, input.as_ptr(), inout.as_mut_ptr()) }
            }
        }
    }

    /// [`Reducer::apply`] on `count` elements of raw buffers (user buffers from C).
    ///
    /// # Safety
    /// `input` and `inout` must each be valid for `count * extent` bytes (reads; reads and
    /// writes for `inout`), for the duration of the call. They may overlap: an overlapping
    /// input is copied first.
    #[inline]
    pub unsafe fn apply_raw(&self, count: usize, input: *const u8, inout: *mut u8) {
        let bytes = count * self.extent;
        if bytes == 0 {
            return;
        }
        let (a, b) = (input as usize, inout as usize);
        let overlap = a < b + bytes && b < a + bytes;
        match self.how {
            How::Kernel(k) => {
                // SAFETY: the caller guarantees both ranges are valid for `bytes`.
                let out = unsafe { std::slice::from_raw_parts_mut(inout, bytes) };
                if overlap {
                    // SAFETY: as above; the copy ends the borrow of `input` before `out` is
                    // written.
                    let copy = unsafe { std::slice::from_raw_parts(input, bytes) }.to_vec();
                    k(&copy, out);
                } else {
                    // SAFETY: as above, and the ranges are disjoint.
                    k(unsafe { std::slice::from_raw_parts(input, bytes) }, out);
                }
            }
            // SAFETY: the caller's guarantee; the user function sees C pointers, aliasing is
            // its business (as in every MPI).
            How::User { .. } => unsafe { self.call_user(count, input, inout) },
        }
    }

    /// Calls the user function on `n` elements, in pieces of at most `INT_MAX` elements for a
    /// function taking an `int` length.
    ///
    /// # Safety
    /// Both pointers valid for `n * extent` bytes.
    #[inline(never)]
    unsafe fn call_user(&self, n: usize, input: *const u8, inout: *mut u8) {
        let How::User { func, dt } = self.how else {
            return;
        };
        let mut dtype = dt as MPI_Datatype;
        match func {
            UserFn::Big(f) => {
                let mut len = n as MPI_Count;
                // SAFETY: `f` was registered through MPI_Op_create_c with this signature; the
                // buffers hold `len` elements of `dtype` (caller's guarantee).
                unsafe {
                    f(
                        input as *mut c_void,
                        inout as *mut c_void,
                        &mut len,
                        &mut dtype,
                    )
                };
            }
            UserFn::Int(f) => {
                let mut done = 0usize;
                while done < n {
                    let k = (n - done).min(c_int::MAX as usize);
                    let mut len = k as c_int;
                    let off = done * self.extent;
                    // SAFETY: `f` was registered through MPI_Op_create with this signature;
                    // `off + k * extent <= n * extent`, so both pointers stay in the buffers.
                    unsafe {
                        f(
                            input.add(off) as *mut c_void,
                            inout.add(off) as *mut c_void,
                            &mut len,
                            &mut dtype,
                        )
                    };
                    done += k;
                }
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn valid_and_invalid_combinations() {
        use Builtin::*;
        assert!(builtin_kernel(Sum, MPI_DOUBLE).is_some());
        assert!(builtin_kernel(Band, MPI_DOUBLE).is_none());
        assert!(builtin_kernel(Sum, MPI_2INT).is_none());
        assert!(builtin_kernel(Maxloc, MPI_INT).is_none());
        assert!(builtin_kernel(Maxloc, MPI_2INT).is_some());
        assert!(builtin_kernel(Land, MPI_C_BOOL).is_some());
        assert!(builtin_kernel(Sum, MPI_C_BOOL).is_none());
        assert!(builtin_kernel(Land, MPI_INTEGER).is_none());
        assert!(builtin_kernel(Band, MPI_INTEGER).is_some());
        assert!(builtin_kernel(Band, MPI_BYTE).is_some());
        assert!(builtin_kernel(Sum, MPI_BYTE).is_none());
        assert!(builtin_kernel(Sum, MPI_CHAR).is_none());
        assert!(builtin_kernel(Replace, MPI_CHAR).is_some());
        assert!(builtin_kernel(Max, MPI_C_DOUBLE_COMPLEX).is_none());
        assert!(builtin_kernel(Prod, MPI_C_LONG_DOUBLE_COMPLEX).is_some());
        assert!(builtin_kernel(Bxor, MPI_AINT).is_some());
        assert!(builtin_kernel(Lor, MPI_COUNT).is_none());
        assert!(builtin_kernel(Sum, MPI_DATATYPE_NULL).is_none());
    }

    /// Every predefined op has a kernel on every type of each group it is defined for.
    #[test]
    fn every_group_is_complete() {
        use Builtin::*;
        let all = [
            Sum, Prod, Max, Min, Land, Lor, Lxor, Band, Bor, Bxor, Maxloc, Minloc, Replace, NoOp,
        ];
        for dt in 0x200..0x300 {
            if datatype::predefined(dt).is_none() {
                continue;
            }
            let want: &[Builtin] = match group_of(dt) {
                Group::CInt(_) => &[Sum, Prod, Max, Min, Land, Lor, Lxor, Band, Bor, Bxor],
                Group::FInt(_) => &[Sum, Prod, Max, Min, Band, Bor, Bxor],
                Group::Float(_) => &[Sum, Prod, Max, Min],
                Group::Complex(_) => &[Sum, Prod],
                Group::Logical(_) => &[Land, Lor, Lxor],
                Group::Byte => &[Band, Bor, Bxor],
                Group::Pair(_) => &[Maxloc, Minloc],
                Group::Other => &[],
            };
            for op in all {
                let expect = want.contains(&op) || matches!(op, Replace | NoOp);
                assert_eq!(
                    builtin_kernel(op, dt).is_some(),
                    expect,
                    "{} on {dt:#x}",
                    op.name()
                );
            }
        }
    }

    #[test]
    fn table_agrees_with_kernel_choice() {
        use Builtin::*;
        for dt in 0x1f0..0x310 {
            for op in [
                Sum, Prod, Max, Min, Land, Lor, Lxor, Band, Bor, Bxor, Maxloc, Minloc, Replace,
                NoOp,
            ] {
                assert_eq!(
                    cached_kernel(op, dt).map(|k| k as usize),
                    builtin_kernel(op, dt).map(|k| k as usize)
                );
            }
        }
    }

    fn ld_bytes(v: f64) -> [u8; 16] {
        // x86-64 extended precision of a double with an integer value: sign, 15-bit exponent,
        // explicit integer bit.
        let mut out = [0u8; 16];
        if v == 0.0 {
            return out;
        }
        let bits = v.to_bits();
        let sign = (bits >> 63) as u16;
        let exp = ((bits >> 52) & 0x7ff) as i32 - 1023 + 16383;
        let mant = ((bits & ((1 << 52) - 1)) << 11) | (1 << 63);
        out[..8].copy_from_slice(&mant.to_ne_bytes());
        out[8..10].copy_from_slice(&((sign << 15) | exp as u16).to_ne_bytes());
        out
    }

    #[test]
    fn long_double_kernels() {
        let a: Vec<f64> = (0..9).map(|k| k as f64 - 3.0).collect();
        let b: Vec<f64> = (0..9).map(|k| 2.0 * k as f64 - 5.0).collect();
        let enc = |v: &[f64]| v.iter().flat_map(|&x| ld_bytes(x)).collect::<Vec<u8>>();
        type Case = (Kernel, fn(f64, f64) -> f64);
        let cases: [Case; 4] = [
            (ext::ld_sum, |x, y| x + y),
            (ext::ld_prod, |x, y| x * y),
            (ext::ld_max, |x, y| x.max(y)),
            (ext::ld_min, |x, y| x.min(y)),
        ];
        for (k, r) in cases {
            let ib = enc(&a);
            let mut ob = enc(&b);
            k(&ib, &mut ob);
            for (n, c) in ob.chunks_exact(16).enumerate() {
                assert_eq!(c[..10], ld_bytes(r(a[n], b[n]))[..10], "element {n}");
            }
        }
        // Complex long double: (1 + 2i) * (3 - 1i) = 5 + 5i; sum = 4 + 1i.
        let z1: Vec<u8> = [1.0, 2.0].iter().flat_map(|&x| ld_bytes(x)).collect();
        let z2: Vec<u8> = [3.0, -1.0].iter().flat_map(|&x| ld_bytes(x)).collect();
        let mut o = z2.clone();
        ext::cld_prod(&z1, &mut o);
        assert_eq!(
            (&o[..10], &o[16..26]),
            (&ld_bytes(5.0)[..10], &ld_bytes(5.0)[..10])
        );
        let mut o = z2.clone();
        ext::cld_sum(&z1, &mut o);
        assert_eq!(
            (&o[..10], &o[16..26]),
            (&ld_bytes(4.0)[..10], &ld_bytes(1.0)[..10])
        );
        // MPI_LONG_DOUBLE_INT: ties keep the lower index.
        let pair = |v: f64, i: i32| {
            let mut e = [0u8; 32];
            e[..16].copy_from_slice(&ld_bytes(v));
            e[16..20].copy_from_slice(&i.to_ne_bytes());
            e
        };
        let ib: Vec<u8> = [pair(1.0, 5), pair(2.0, 1), pair(3.0, 9)].concat();
        let ob0: Vec<u8> = [pair(1.0, 2), pair(1.0, 7), pair(3.0, 4)].concat();
        let mut ob = ob0.clone();
        ext::ldi_maxloc(&ib, &mut ob);
        let idx = |o: &[u8], k: usize| {
            i32::from_ne_bytes(o[k * 32 + 16..k * 32 + 20].try_into().unwrap())
        };
        assert_eq!([idx(&ob, 0), idx(&ob, 1), idx(&ob, 2)], [2, 1, 4]);
        assert_eq!(&ob[32..42], &ld_bytes(2.0)[..10]);
        let mut ob = ob0.clone();
        ext::ldi_minloc(&ib, &mut ob);
        assert_eq!([idx(&ob, 0), idx(&ob, 1), idx(&ob, 2)], [2, 7, 4]);
    }

    #[test]
    fn quad_and_half_kernels() {
        // binary128 and binary16 encodings of small integers.
        fn quad(v: i32) -> [u8; 16] {
            let b = (v as f64).to_bits() as u128;
            if v == 0 {
                return [0; 16];
            }
            let sign = b >> 63;
            let exp = ((b >> 52) & 0x7ff) + 16383 - 1023;
            let mant = (b & ((1 << 52) - 1)) << 60;
            ((sign << 127) | (exp << 112) | mant).to_ne_bytes()
        }
        fn half(v: i32) -> [u8; 2] {
            let b = (v as f32).to_bits();
            if v == 0 {
                return [0; 2];
            }
            let sign = (b >> 31) as u16;
            let exp = (((b >> 23) & 0xff) as i32 - 127 + 15) as u16;
            let mant = ((b & 0x7fffff) >> 13) as u16;
            ((sign << 15) | (exp << 10) | mant).to_ne_bytes()
        }
        let a = [3, -2, 7, 0, 5];
        let b = [4, 6, -1, 9, 5];
        type Case = (Kernel, Kernel, fn(i32, i32) -> i32);
        let cases: [Case; 4] = [
            (ext::f128_sum, ext::f16_sum, |x, y| x + y),
            (ext::f128_prod, ext::f16_prod, |x, y| x * y),
            (ext::f128_max, ext::f16_max, |x, y| x.max(y)),
            (ext::f128_min, ext::f16_min, |x, y| x.min(y)),
        ];
        for (kq, kh, r) in cases {
            let ib: Vec<u8> = a.iter().flat_map(|&x| quad(x)).collect();
            let mut ob: Vec<u8> = b.iter().flat_map(|&x| quad(x)).collect();
            kq(&ib, &mut ob);
            let want: Vec<u8> = a
                .iter()
                .zip(&b)
                .flat_map(|(&x, &y)| quad(r(x, y)))
                .collect();
            assert_eq!(ob, want);
            let ib: Vec<u8> = a.iter().flat_map(|&x| half(x)).collect();
            let mut ob: Vec<u8> = b.iter().flat_map(|&x| half(x)).collect();
            kh(&ib, &mut ob);
            let want: Vec<u8> = a
                .iter()
                .zip(&b)
                .flat_map(|(&x, &y)| half(r(x, y)))
                .collect();
            assert_eq!(ob, want);
        }
        // (1 + 2i) * (3 - 1i) = 5 + 5i.
        let z1: Vec<u8> = [1, 2].iter().flat_map(|&x| quad(x)).collect();
        let mut z2: Vec<u8> = [3, -1].iter().flat_map(|&x| quad(x)).collect();
        ext::cf128_prod(&z1, &mut z2);
        assert_eq!(
            z2,
            [5, 5].iter().flat_map(|&x| quad(x)).collect::<Vec<u8>>()
        );
        let z1: Vec<u8> = [1, 2].iter().flat_map(|&x| half(x)).collect();
        let mut z2: Vec<u8> = [3, -1].iter().flat_map(|&x| half(x)).collect();
        ext::cf16_prod(&z1, &mut z2);
        assert_eq!(
            z2,
            [5, 5].iter().flat_map(|&x| half(x)).collect::<Vec<u8>>()
        );
        let mut z3: Vec<u8> = [3, -1].iter().flat_map(|&x| half(x)).collect();
        ext::cf16_sum(&z1, &mut z3);
        assert_eq!(
            z3,
            [4, 1].iter().flat_map(|&x| half(x)).collect::<Vec<u8>>()
        );
    }
}
