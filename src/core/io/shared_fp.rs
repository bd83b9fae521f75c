//! The shared file pointer of an open file: an 8-byte counter (in etypes) kept in a hidden
//! file beside the data file, updated under a byte-range lock, so it works wherever the
//! ranks see the same file system (one node or many). The hidden file is made on first use
//! and removed when the file is closed.

use super::errno::io_error;
use crate::core::error::MpiResult;
use crate::platform::file_lock::RangeLock;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A file's shared pointer.
#[derive(Debug)]
pub struct SharedPointer {
    path: PathBuf,
    file: OnceLock<File>,
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
        }
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
        let f = self.file()?;
        let go = || -> std::io::Result<()> {
            let _lock = RangeLock::take(f, 0, 8, true)?;
            f.write_all_at(&v.to_le_bytes(), 0)
        };
        go().map_err(|e| io_error(&e, "shared file pointer update failed", &self.path))
    }

    /// Sets the pointer to 0 if it was ever used (`MPI_File_set_view`).
    pub fn reset(&self) -> MpiResult<()> {
        if self.file.get().is_none() && !self.path.exists() {
            return Ok(());
        }
        self.set(0)
    }

    /// Reads the pointer.
    pub fn get(&self) -> MpiResult<u64> {
        let f = self.file()?;
        let go = || -> std::io::Result<u64> {
            let _lock = RangeLock::take(f, 0, 8, false)?;
            Self::read(f)
        };
        go().map_err(|e| io_error(&e, "shared file pointer read failed", &self.path))
    }

    /// Removes the hidden file (at close, by one rank, after every rank is done with it).
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
