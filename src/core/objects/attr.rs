//! Attribute caching: keyvals, and which callbacks run when an object is duplicated or freed.
//!
//! The callbacks themselves are C functions; they are stored here as addresses and called by
//! the C-facing layer (`abi::imp::attr`), always outside the runtime lock so they may call MPI.

use crate::core::error::{fail, MpiResult};
use crate::mpi_abi::consts::*;

/// First value of a user keyval (above the predefined attribute keyvals of the ABI).
pub const FIRST_USER_KEYVAL: i32 = 0x1000;

/// What to do with an attribute when its object is duplicated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyAction {
    /// `MPI_*_NULL_COPY_FN`: not copied.
    Null,
    /// `MPI_*_DUP_FN`: the value is copied.
    Dup,
    /// A user copy function (its address).
    User(usize),
}

/// The kind of object a keyval is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjKind {
    /// Communicators.
    Comm,
    /// Datatypes.
    Type,
    /// Windows.
    Win,
}

/// A keyval.
#[derive(Clone, Copy, Debug)]
pub struct Keyval {
    /// Copy action.
    pub copy: CopyAction,
    /// Delete function address (`None`: `MPI_*_NULL_DELETE_FN`).
    pub delete: Option<usize>,
    /// `extra_state` given at creation.
    pub extra: usize,
    /// Object kind.
    pub kind: ObjKind,
    /// Freed by the user (kept while attributes still use it).
    pub freed: bool,
    /// Attributes using it.
    pub refs: u32,
}

/// One attribute of an object, with what its callbacks need.
#[derive(Clone, Copy, Debug)]
pub struct AttrEntry {
    /// Keyval (user value).
    pub keyval: i32,
    /// Attribute value.
    pub value: usize,
    /// The keyval's definition.
    pub def: Keyval,
}

/// All keyvals. Values are never reused, so a stale keyval is always detected.
#[derive(Debug, Default)]
pub struct Keyvals {
    list: Vec<Option<Keyval>>,
}

impl Keyvals {
    /// Creates a keyval; returns its value.
    pub fn create(&mut self, kv: Keyval) -> MpiResult<i32> {
        if self.list.len() >= (i32::MAX - FIRST_USER_KEYVAL) as usize {
            return fail(MPI_ERR_KEYVAL, "too many keyvals");
        }
        self.list.push(Some(kv));
        Ok(FIRST_USER_KEYVAL + self.list.len() as i32 - 1)
    }

    fn slot(&self, keyval: i32) -> Option<usize> {
        let i = keyval.checked_sub(FIRST_USER_KEYVAL)?;
        (i >= 0 && (i as usize) < self.list.len()).then_some(i as usize)
    }

    /// A live (not freed) keyval of `kind`; `MPI_ERR_KEYVAL` otherwise.
    pub fn get(&self, keyval: i32, kind: ObjKind) -> MpiResult<Keyval> {
        match self.slot(keyval).and_then(|i| self.list[i]) {
            Some(k) if !k.freed && k.kind == kind => Ok(k),
            Some(k) if k.kind != kind => fail(
                MPI_ERR_KEYVAL,
                format!("keyval {keyval} was created for another kind of object"),
            ),
            _ if keyval == MPI_KEYVAL_INVALID => {
                fail(MPI_ERR_KEYVAL, "the keyval is MPI_KEYVAL_INVALID")
            }
            _ => fail(MPI_ERR_KEYVAL, format!("invalid or freed keyval {keyval}")),
        }
    }

    /// The definition of a keyval in use by an attribute (even if freed by the user).
    pub fn def(&self, keyval: i32) -> Option<Keyval> {
        self.slot(keyval).and_then(|i| self.list[i])
    }

    /// One more attribute uses `keyval`.
    pub fn attach(&mut self, keyval: i32) {
        if let Some(Some(k)) = self.slot(keyval).map(|i| &mut self.list[i]) {
            k.refs += 1;
        }
    }

    /// An attribute using `keyval` is gone; a freed keyval disappears with its last one.
    pub fn detach(&mut self, keyval: i32) {
        if let Some(i) = self.slot(keyval) {
            if let Some(k) = &mut self.list[i] {
                k.refs = k.refs.saturating_sub(1);
                if k.freed && k.refs == 0 {
                    self.list[i] = None;
                }
            }
        }
    }

    /// `MPI_*_free_keyval`.
    pub fn free(&mut self, keyval: i32, kind: ObjKind) -> MpiResult<()> {
        self.get(keyval, kind)?;
        let i = self.slot(keyval).unwrap();
        let k = self.list[i].as_mut().unwrap();
        k.freed = true;
        if k.refs == 0 {
            self.list[i] = None;
        }
        Ok(())
    }

    /// The entries of an attribute list, for the callbacks.
    pub fn entries(&self, attrs: &[(i32, usize)]) -> Vec<AttrEntry> {
        attrs
            .iter()
            .filter_map(|&(keyval, value)| {
                self.def(keyval).map(|def| AttrEntry { keyval, value, def })
            })
            .collect()
    }
}

/// Whether `keyval` is one of the predefined attribute keyvals (`MPI_TAG_UB` ...).
pub fn is_predefined(keyval: i32) -> bool {
    (MPI_TAG_UB..=MPI_UNIVERSE_SIZE).contains(&keyval)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn freed_keyvals_live_while_used() {
        let mut k = Keyvals::default();
        let kv = Keyval {
            copy: CopyAction::Dup,
            delete: None,
            extra: 7,
            kind: ObjKind::Comm,
            freed: false,
            refs: 0,
        };
        let a = k.create(kv).unwrap();
        k.attach(a);
        k.free(a, ObjKind::Comm).unwrap();
        assert!(k.get(a, ObjKind::Comm).is_err(), "freed for the user");
        assert_eq!(k.def(a).unwrap().extra, 7, "still known to its attribute");
        k.detach(a);
        assert!(k.def(a).is_none());
        assert!(k.get(a, ObjKind::Type).is_err());
        assert!(k.get(MPI_KEYVAL_INVALID, ObjKind::Comm).is_err());
    }
}
