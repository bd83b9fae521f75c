//! Bootstrap: how ranks find each other before the transports exist (a key-value store with
//! a barrier). Under a launcher it is the PMI-1 or PMI-2 client ([`PmiVersion`] decides
//! which); started alone, a singleton.

use crate::platform::config::{self, Knob, Setting};
use crate::platform::pmi::PmiClient;
use crate::platform::pmi2::Pmi2Client;
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
    /// The launcher's `PMI_process_mapping` (which ranks share a node), when it gives one.
    fn process_mapping(&mut self) -> io::Result<Option<String>> {
        self.get("PMI_process_mapping")
    }
    /// A name of this job that its processes share and other jobs do not (the key-value
    /// space's name); a singleton's is its host and process id.
    fn job_name(&self) -> String;
}

/// A 32-bit id of the job named `name` (FNV-1a, folded; never 0): how processes of
/// different jobs tell each other's ranks apart once connected.
pub fn job_id(name: &str) -> u32 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    ((h >> 32) as u32 ^ h as u32).max(1)
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
    fn job_name(&self) -> String {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
        format!(
            "singleton-{}-{}-{}",
            host.trim(),
            boot.trim(),
            std::process::id()
        )
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
    fn job_name(&self) -> String {
        self.kvsname().to_string()
    }
}

impl Bootstrap for Pmi2Client {
    fn rank(&self) -> i32 {
        Pmi2Client::rank(self)
    }
    fn size(&self) -> i32 {
        Pmi2Client::size(self)
    }
    fn appnum(&self) -> i32 {
        Pmi2Client::appnum(self)
    }
    fn universe_size(&self) -> i32 {
        Pmi2Client::universe_size(self)
    }
    fn put(&mut self, key: &str, value: &str) -> io::Result<()> {
        Pmi2Client::put(self, key, value)
    }
    fn barrier(&mut self) -> io::Result<()> {
        Pmi2Client::barrier(self)
    }
    fn get(&mut self, key: &str) -> io::Result<Option<String>> {
        Pmi2Client::get(self, key)
    }
    fn finalize(&mut self) -> io::Result<()> {
        Pmi2Client::finalize(self)
    }
    fn abort(&mut self, code: i32, message: &str) -> io::Result<()> {
        Pmi2Client::abort(self, code, message)
    }
    fn process_mapping(&mut self) -> io::Result<Option<String>> {
        self.job_attr("PMI_process_mapping")
    }
    fn job_name(&self) -> String {
        self.jobid().to_string()
    }
}

/// Which PMI protocol a launch speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PmiVersion {
    /// PMI-1 (`hympiexec`, Hydra's default, and every `PMI_PORT` launch).
    V1,
    /// PMI-2 over `PMI_FD` (Slurm's `srun --mpi=pmi2`; Hydra serves it too).
    V2,
}

/// The protocol to speak: `HYMPI_PMI_VERSION` when set to 1 or 2; otherwise PMI-2 when the
/// launcher handed a socket (`PMI_FD`) and a `PMI_JOBID`, which Slurm's `mpi/pmi2` plugin
/// sets and PMI-1 launchers do not; otherwise PMI-1.
pub fn pmi_version() -> PmiVersion {
    let fd = std::env::var_os("PMI_FD").is_some();
    match config::setting(Knob::PmiVersion) {
        Setting::Value(2) if fd => PmiVersion::V2,
        Setting::Value(_) => PmiVersion::V1,
        _ if fd && std::env::var_os("PMI_JOBID").is_some() => PmiVersion::V2,
        _ => PmiVersion::V1,
    }
}

/// Connects to the process manager named by the environment (PMI-1 or PMI-2, see
/// [`pmi_version`]), or makes a singleton when the process was started without a launcher.
pub fn connect() -> io::Result<Box<dyn Bootstrap>> {
    let client: Option<Box<dyn Bootstrap>> = match pmi_version() {
        PmiVersion::V2 => Pmi2Client::from_env()?.map(|c| Box::new(c) as Box<dyn Bootstrap>),
        PmiVersion::V1 => PmiClient::from_env()?.map(|c| Box::new(c) as Box<dyn Bootstrap>),
    };
    Ok(client.unwrap_or_else(|| Box::new(Singleton::default())))
}
