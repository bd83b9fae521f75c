//! Bootstrap: how ranks find each other before the transports exist (a key-value store with
//! a barrier). Under a launcher it is the PMI-1 client; started alone, a singleton.

use crate::platform::pmi::PmiClient;
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

impl Bootstrap for PmiClient {
    fn rank(&self) -> i32 {
        PmiClient::rank(self)
    }
    fn size(&self) -> i32 {
        PmiClient::size(self)
    }
    fn appnum(&self) -> i32 {
        PmiClient::appnum(self)
    }
    fn universe_size(&self) -> i32 {
        PmiClient::universe_size(self)
    }
    fn put(&mut self, key: &str, value: &str) -> io::Result<()> {
        PmiClient::put(self, key, value)
    }
    fn barrier(&mut self) -> io::Result<()> {
        PmiClient::barrier(self)
    }
    fn get(&mut self, key: &str) -> io::Result<Option<String>> {
        PmiClient::get(self, key)
    }
    fn finalize(&mut self) -> io::Result<()> {
        PmiClient::finalize(self)
    }
    fn abort(&mut self, code: i32, message: &str) -> io::Result<()> {
        PmiClient::abort(self, code, message)
    }
}

/// Connects to the process manager named by the environment (PMI-1), or makes a singleton
/// when the process was started without a launcher.
pub fn connect() -> io::Result<Box<dyn Bootstrap>> {
    Ok(match PmiClient::from_env()? {
        Some(pmi) => Box::new(pmi),
        None => Box::new(Singleton::default()),
    })
}
