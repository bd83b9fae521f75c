//! Info objects: ordered (key, value) string pairs.
//!
//! MPI-4 lets the info functions run at any time, before `MPI_Init` and after `MPI_Finalize`
//! included (MPI-4.1 section 11.4.1, table 11.1), and from any thread. So info objects do not
//! live in the runtime: they are in a process-wide table with its own mutex ([`with_table`]).
//! Code running inside `runtime::with` may call into this module (runtime lock, then info
//! lock); this module never takes the runtime lock, so the order cannot invert.
//!
//! `MPI_INFO_ENV` is predefined: built on first use from `/proc/self/cmdline`, the working
//! directory, the host name and architecture; `MPI_Init` adds `maxprocs` and `thread_level`.
//! It can be read and modified like any info object, but not freed.

use crate::core::error::{fail, MpiResult};
use crate::core::objects::slab::{kind, Slab};
use crate::mpi_abi::consts::*;
use parking_lot::Mutex;

/// An info object. Keys keep their insertion order (`MPI_Info_get_nthkey`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Info {
    /// (key, value) pairs, keys unique.
    pub entries: Vec<(String, String)>,
}

impl Info {
    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Sets `key` to `value`, replacing an existing value in place.
    pub fn set(&mut self, key: &str, value: &str) {
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some(e) => e.1 = value.to_string(),
            None => self.entries.push((key.to_string(), value.to_string())),
        }
    }

    /// Removes `key`; whether it was there.
    pub fn delete(&mut self, key: &str) -> bool {
        let before = self.entries.len();
        self.entries.retain(|(k, _)| k != key);
        self.entries.len() != before
    }
}

/// Longest key accepted, in bytes: `MPI_MAX_INFO_KEY` counts the terminating NUL, so a key
/// fits a buffer of `MPI_MAX_INFO_KEY` characters (and matches MPICH's 255).
pub const MAX_KEY: usize = MPI_MAX_INFO_KEY as usize - 1;
/// Longest value accepted, in bytes (same convention as [`MAX_KEY`]).
pub const MAX_VALUE: usize = MPI_MAX_INFO_VAL as usize - 1;

/// Checks a key: non-empty and at most [`MAX_KEY`] bytes (`MPI_ERR_INFO_KEY`).
pub fn check_key(key: &str) -> MpiResult<()> {
    if key.is_empty() {
        return fail(MPI_ERR_INFO_KEY, "the info key is empty");
    }
    if key.len() > MAX_KEY {
        return fail(
            MPI_ERR_INFO_KEY,
            format!(
                "the info key is {} characters long; the limit is {MAX_KEY} (MPI_MAX_INFO_KEY - 1)",
                key.len()
            ),
        );
    }
    Ok(())
}

/// Checks a value: at most [`MAX_VALUE`] bytes (`MPI_ERR_INFO_VALUE`).
pub fn check_value(value: &str) -> MpiResult<()> {
    if value.len() > MAX_VALUE {
        return fail(
            MPI_ERR_INFO_VALUE,
            format!(
                "the info value is {} characters long; the limit is {MAX_VALUE} (MPI_MAX_INFO_VAL - 1)",
                value.len()
            ),
        );
    }
    Ok(())
}

/// The process-wide info table.
pub struct Table {
    /// User info objects.
    pub slab: Slab<Info>,
    /// `MPI_INFO_ENV`, once built.
    env: Option<Info>,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

/// Runs `f` on the info table (created on first use).
pub fn with_table<R>(f: impl FnOnce(&mut Table) -> R) -> R {
    let mut guard = TABLE.lock();
    let t = guard.get_or_insert_with(|| Table {
        slab: Slab::new(kind::INFO),
        env: None,
    });
    f(t)
}

/// The number of processes the launcher started (`maxprocs` of `MPI_INFO_ENV`), known
/// before `MPI_Init`: the launcher's `PMI_SIZE`, or 1 for a process started without a
/// launcher (a singleton); unknown when a launcher gave no size.
fn launch_size() -> Option<i32> {
    let launched = std::env::var_os("PMI_FD").is_some() || std::env::var_os("PMI_PORT").is_some();
    size_of_launch(std::env::var("PMI_SIZE").ok().as_deref(), launched)
}

/// `maxprocs` from the launcher's `PMI_SIZE` (if any) and whether a launcher started us.
fn size_of_launch(pmi_size: Option<&str>, launched: bool) -> Option<i32> {
    match pmi_size {
        Some(v) => v.trim().parse().ok().filter(|&n: &i32| n > 0),
        None if !launched => Some(1),
        None => None,
    }
}

/// The command line of this process (`/proc/self/cmdline`), if readable.
pub fn own_argv() -> Option<Vec<String>> {
    let raw = std::fs::read("/proc/self/cmdline").ok()?;
    let args: Vec<String> = raw
        .split(|&b| b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    // The file ends with a NUL, which leaves one empty piece at the end.
    let n = args.len() - usize::from(raw.last() == Some(&0));
    Some(args[..n].to_vec())
}

/// The contents of `MPI_INFO_ENV` (or of `MPI_Info_create_env` given `argv`): `command` and
/// `argv` (the arguments after the command, separated by spaces) from `argv`, `maxprocs` (the
/// processes the launcher started), `wdir`, `host` and `arch`. The same before and after
/// `MPI_Init`, as the standard asks. Keys whose value is unknown are absent, as the standard
/// allows: `soft` and `file`, and `thread_level`, which names a level requested before the
/// program started (hympi's launchers take no such request; the level asked of
/// `MPI_Init_thread` is what `MPI_Query_thread` reports).
fn env_info(argv: Option<&[String]>) -> Info {
    let mut info = Info::default();
    if let Some(args) = argv.filter(|a| !a.is_empty()) {
        info.set("command", &args[0]);
        if args.len() > 1 {
            info.set("argv", &args[1..].join(" "));
        }
    }
    if let Some(n) = launch_size() {
        info.set("maxprocs", &n.to_string());
    }
    if let Ok(d) = std::env::current_dir() {
        info.set("wdir", &d.to_string_lossy());
    }
    if let Ok(h) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        let h = h.trim();
        if !h.is_empty() {
            info.set("host", h);
        }
    }
    info.set("arch", std::env::consts::ARCH);
    // Keep values within the limits every other path enforces.
    info.entries
        .retain(|(k, v)| check_key(k).is_ok() && check_value(v).is_ok());
    info
}

/// `MPI_Info_create_env`: a new info object built like `MPI_INFO_ENV` from `argv`
/// (`None`: no command line). Returns its handle.
pub fn create_env(argv: Option<&[String]>) -> MpiResult<usize> {
    create(env_info(argv))
}

fn invalid(h: usize) -> crate::core::error::MpiError {
    use crate::core::error::MpiError;
    if h == MPI_INFO_NULL {
        MpiError::new(MPI_ERR_INFO, "the info object is MPI_INFO_NULL")
    } else {
        MpiError::new(MPI_ERR_INFO, format!("invalid info handle {h:#x}"))
    }
}

impl Table {
    /// The info object behind handle `h` (`MPI_INFO_ENV` included); `MPI_ERR_INFO` when
    /// invalid.
    pub fn get_mut(&mut self, h: usize) -> MpiResult<&mut Info> {
        if h == MPI_INFO_ENV {
            if self.env.is_none() {
                self.env = Some(env_info(own_argv().as_deref()));
            }
            return Ok(self.env.as_mut().unwrap());
        }
        match self.slab.decode(h) {
            Some(i) => Ok(self.slab.get_mut(i).unwrap()),
            None => Err(invalid(h)),
        }
    }

    /// Stores `info`, returning its handle.
    pub fn insert(&mut self, info: Info) -> MpiResult<usize> {
        match self.slab.insert(info) {
            Some(i) => Ok(self.slab.handle(i)),
            None => fail(MPI_ERR_INTERN, "too many info objects"),
        }
    }
}

/// Reads the info object `h`.
pub fn with<R>(h: usize, f: impl FnOnce(&Info) -> R) -> MpiResult<R> {
    with_table(|t| t.get_mut(h).map(|i| f(i)))
}

/// Modifies the info object `h`.
pub fn with_mut<R>(h: usize, f: impl FnOnce(&mut Info) -> MpiResult<R>) -> MpiResult<R> {
    with_table(|t| f(t.get_mut(h)?))
}

/// A copy of the info object `h` (for functions that take an info argument).
pub fn lookup(h: usize) -> MpiResult<Info> {
    with(h, |i| i.clone())
}

/// Like [`lookup`], but `MPI_INFO_NULL` (allowed where an info argument is optional) gives
/// `None`.
pub fn lookup_opt(h: usize) -> MpiResult<Option<Info>> {
    if h == MPI_INFO_NULL {
        Ok(None)
    } else {
        lookup(h).map(Some)
    }
}

/// Stores a new info object (e.g. the result of an `MPI_*_get_info`), returning its handle.
pub fn create(info: Info) -> MpiResult<usize> {
    with_table(|t| t.insert(info))
}

/// `MPI_Info_free`: `MPI_ERR_INFO` for `MPI_INFO_NULL`, `MPI_INFO_ENV` and invalid handles.
pub fn free(h: usize) -> MpiResult<()> {
    if h == MPI_INFO_ENV {
        return fail(
            MPI_ERR_INFO,
            "MPI_INFO_ENV is predefined and cannot be freed",
        );
    }
    with_table(|t| match t.slab.decode(h) {
        Some(i) => {
            t.slab.free(i);
            Ok(())
        }
        None => Err(invalid(h)),
    })
}

/// The current handle of the info object at slab index `ix` (`MPI_Info_fromint`).
pub fn handle_at(ix: u32) -> Option<usize> {
    with_table(|t| t.slab.get(ix).map(|_| t.slab.handle(ix)))
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn set_get_delete_keep_order() {
        let mut i = Info::default();
        i.set("b", "1");
        i.set("a", "2");
        i.set("b", "3");
        assert_eq!(
            i.entries,
            vec![("b".into(), "3".into()), ("a".into(), "2".into())]
        );
        assert_eq!(i.get("a"), Some("2"));
        assert!(i.delete("b"));
        assert!(!i.delete("b"));
        assert_eq!(i.get("b"), None);
    }

    #[test]
    fn limits() {
        assert!(check_key(&"k".repeat(MAX_KEY)).is_ok());
        assert_eq!(
            check_key(&"k".repeat(MAX_KEY + 1)).unwrap_err().class(),
            MPI_ERR_INFO_KEY
        );
        assert_eq!(check_key("").unwrap_err().class(), MPI_ERR_INFO_KEY);
        assert!(check_value("").is_ok());
        assert_eq!(
            check_value(&"v".repeat(MAX_VALUE + 1)).unwrap_err().class(),
            MPI_ERR_INFO_VALUE
        );
    }

    #[test]
    fn table_handles() {
        let h = create(Info::default()).unwrap();
        with_mut(h, |i| {
            i.set("x", "y");
            Ok(())
        })
        .unwrap();
        assert_eq!(lookup(h).unwrap().get("x"), Some("y"));
        free(h).unwrap();
        assert_eq!(lookup(h).unwrap_err().class(), MPI_ERR_INFO);
        assert_eq!(free(h).unwrap_err().class(), MPI_ERR_INFO);
        assert_eq!(lookup(MPI_INFO_NULL).unwrap_err().class(), MPI_ERR_INFO);
        assert!(lookup_opt(MPI_INFO_NULL).unwrap().is_none());
        assert_eq!(free(MPI_INFO_ENV).unwrap_err().class(), MPI_ERR_INFO);
    }

    #[test]
    fn env_keys() {
        let args = vec!["./prog".to_string(), "a".into(), "b c".into()];
        let i = env_info(Some(&args));
        assert_eq!(i.get("command"), Some("./prog"));
        assert_eq!(i.get("argv"), Some("a b c"));
        assert_eq!(
            i.get("maxprocs").map(str::to_string),
            launch_size().map(|n| n.to_string())
        );
        assert_eq!(i.get("thread_level"), None);
        assert!(i.get("wdir").is_some());
        assert_eq!(i.get("soft"), None);
        let i = env_info(None);
        assert_eq!(i.get("command"), None);
        assert_eq!(size_of_launch(Some("4"), true), Some(4));
        assert_eq!(size_of_launch(Some(" 6\n"), false), Some(6));
        assert_eq!(size_of_launch(Some("x"), true), None);
        assert_eq!(size_of_launch(Some("0"), true), None);
        assert_eq!(size_of_launch(None, false), Some(1));
        assert_eq!(size_of_launch(None, true), None);
        let own = own_argv().unwrap();
        assert!(!own.is_empty() && !own[0].is_empty());
    }
}
