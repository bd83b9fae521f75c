//! The shared file pointer of an open file: an 8-byte counter (in etypes). When every rank
//! of the file is on one node it is an atomic word in a shared mapping (a memfd, like the
//! node segment); across nodes it is kept in a hidden file beside the data file, updated
//! under a byte-range lock, so it works wherever the ranks see the same file system. The
//! hidden file is made on first use and removed when the file is closed.

use super::errno::io_error;
use crate::core::error::MpiResult;
use crate::platform::file_lock::RangeLock;
use crate::platform::shared_map::SharedMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::OnceLock;

/// A file's shared pointer.
#[derive(Debug)]
pub struct SharedPointer {
    path: PathBuf,
    file: OnceLock<File>,
    /// The node-local word, when every rank is on this node.
    word: Option<SharedMap>,
}

impl SharedPointer {
    /// The pointer of data file `data`, kept in a file named after it and `token` (the
    /// same on every rank of the open).
    pub fn new(data: &Path, token: u64) -> SharedPointer {
        let name = data
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let path = data.with_file_name(format!(".{name}.hympi-shfp.{token:x}"));
        SharedPointer {
            path,
            file: OnceLock::new(),
            word: None,
        }
    }

    /// Keeps the pointer in the shared mapping `map` (its first word) instead of a file.
    pub fn in_memory(mut self, map: SharedMap) -> SharedPointer {
        self.word = Some(map);
        self
    }

    fn file(&self) -> MpiResult<&File> {
        if let Some(f) = self.file.get() {
            return Ok(f);
        }
        let f = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&self.path)
            .map_err(|e| io_error(&e, "cannot make the shared file pointer's file", &self.path))?;
        Ok(self.file.get_or_init(|| f))
    }

    fn read(f: &File) -> std::io::Result<u64> {
        let mut b = [0u8; 8];
        let n = f.read_at(&mut b, 0)?;
        Ok(if n == 8 { u64::from_le_bytes(b) } else { 0 })
    }

    /// Adds `n` to the pointer atomically; returns the value before.
    pub fn fetch_add(&self, n: u64) -> MpiResult<u64> {
        if let Some(m) = &self.word {
            return Ok(m.atomic_u64(0).fetch_add(n, Ordering::AcqRel));
        }
        let f = self.file()?;
        let go = || -> std::io::Result<u64> {
            let _lock = RangeLock::take(f, 0, 8, true)?;
            let old = Self::read(f)?;
            f.write_all_at(&(old + n).to_le_bytes(), 0)?;
            Ok(old)
        };
        go().map_err(|e| io_error(&e, "shared file pointer update failed", &self.path))
    }

    /// Sets the pointer.
    pub fn set(&self, v: u64) -> MpiResult<()> {
        if let Some(m) = &self.word {
            m.atomic_u64(0).store(v, Ordering::Release);
            return Ok(());
        }
        let f = self.file()?;
        let go = || -> std::io::Result<()> {
            let _lock = RangeLock::take(f, 0, 8, true)?;
            f.write_all_at(&v.to_le_bytes(), 0)
        };
        go().map_err(|e| io_error(&e, "shared file pointer update failed", &self.path))
    }

    /// Sets the pointer to 0 if it was ever used (`MPI_File_set_view`).
    pub fn reset(&self) -> MpiResult<()> {
        if self.word.is_none() && self.file.get().is_none() && !self.path.exists() {
            return Ok(());
        }
        self.set(0)
    }

    /// Reads the pointer.
    pub fn get(&self) -> MpiResult<u64> {
        if let Some(m) = &self.word {
            return Ok(m.atomic_u64(0).load(Ordering::Acquire));
        }
        let f = self.file()?;
        let go = || -> std::io::Result<u64> {
            let _lock = RangeLock::take(f, 0, 8, false)?;
            Self::read(f)
        };
        go().map_err(|e| io_error(&e, "shared file pointer read failed", &self.path))
    }

    /// Removes the hidden file (at close, by one rank, after every rank is done with it).
    pub fn remove(&self) {
        if self.word.is_none() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exercise(p: &SharedPointer) {
        assert_eq!(p.get().unwrap(), 0);
        assert_eq!(p.fetch_add(5).unwrap(), 0);
        assert_eq!(p.fetch_add(3).unwrap(), 5);
        assert_eq!(p.get().unwrap(), 8);
        p.reset().unwrap();
        assert_eq!(p.get().unwrap(), 0);
        p.set(42).unwrap();
        assert_eq!(p.get().unwrap(), 42);
    }

    #[test]
    fn file_backed_and_in_memory_agree() {
        let data = std::env::temp_dir().join(format!("hympi-shfp-{}", std::process::id()));
        let on_file = SharedPointer::new(&data, 7);
        exercise(&on_file);
        assert!(on_file.path.exists());
        on_file.remove();
        assert!(!on_file.path.exists(), "the hidden file goes at close");
        let (map, _) = SharedMap::create(8).unwrap();
        let in_mem = SharedPointer::new(&data, 8).in_memory(map);
        exercise(&in_mem);
        assert!(
            !in_mem.path.exists(),
            "no hidden file for a node-local pointer"
        );
    }
}
