//! I/O hints (`MPI_Info` on files): ROMIO's names, so that codes tuned for MPICH keep their
//! settings. Unknown keys are kept and reported back by `MPI_File_get_info`.

use super::access::Sieve;
use crate::core::error::{fail, MpiResult};
use crate::core::objects::info::Info;
use crate::mpi_abi::consts::*;

/// `enable` / `disable` / `automatic` hints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switch {
    /// Always.
    Enable,
    /// Never.
    Disable,
    /// When the access pattern calls for it.
    Automatic,
}

impl Switch {
    fn parse(key: &str, v: &str) -> MpiResult<Switch> {
        match v {
            "enable" | "true" => Ok(Switch::Enable),
            "disable" | "false" => Ok(Switch::Disable),
            "automatic" => Ok(Switch::Automatic),
            _ => fail(
                MPI_ERR_INFO_VALUE,
                format!("hint {key} takes enable, disable or automatic, not \"{v}\""),
            ),
        }
    }
    fn name(self) -> &'static str {
        match self {
            Switch::Enable => "enable",
            Switch::Disable => "disable",
            Switch::Automatic => "automatic",
        }
    }
}

/// The hints of an open file.
#[derive(Clone, Debug)]
pub struct Hints {
    /// Data sieving of independent access.
    pub sieve: Sieve,
    /// `romio_cb_read`: two-phase collective reads.
    pub cb_read: Switch,
    /// `romio_cb_write`: two-phase collective writes.
    pub cb_write: Switch,
    /// `cb_buffer_size`: bytes an aggregator handles per round.
    pub cb_buffer: usize,
    /// `cb_nodes`: most aggregators (default: one per node).
    pub cb_nodes: Option<usize>,
    /// `striping_unit`: file domains of aggregators are aligned to it.
    pub striping_unit: usize,
    /// Keys not interpreted here, kept as given.
    pub other: Info,
}

impl Default for Hints {
    fn default() -> Hints {
        Hints {
            sieve: Sieve::default(),
            cb_read: Switch::Automatic,
            cb_write: Switch::Automatic,
            cb_buffer: 16 << 20,
            cb_nodes: None,
            striping_unit: 4096,
            other: Info::default(),
        }
    }
}

fn size(key: &str, v: &str) -> MpiResult<usize> {
    match v.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => fail(
            MPI_ERR_INFO_VALUE,
            format!("hint {key} takes a positive number of bytes, not \"{v}\""),
        ),
    }
}

impl Hints {
    /// The hints of `info` over the defaults.
    pub fn from_info(info: &Info) -> MpiResult<Hints> {
        let mut h = Hints::default();
        h.update(info)?;
        Ok(h)
    }

    /// Applies the keys of `info`. A value that does not parse is ignored (hints never
    /// make a call fail), as are keys this implementation does not know, which are kept.
    pub fn update(&mut self, info: &Info) -> MpiResult<()> {
        for (k, v) in &info.entries {
            let (k, v) = (k.as_str(), v.as_str());
            let sw = || Switch::parse(k, v).ok();
            let sz = || size(k, v).ok();
            match k {
                "romio_ds_read" => {
                    self.sieve.read = sw().map_or(self.sieve.read, |s| s != Switch::Disable)
                }
                "romio_ds_write" => {
                    self.sieve.write = sw().map_or(self.sieve.write, |s| s != Switch::Disable)
                }
                "ind_rd_buffer_size" => {
                    self.sieve.read_buffer = sz().unwrap_or(self.sieve.read_buffer)
                }
                "ind_wr_buffer_size" => {
                    self.sieve.write_buffer = sz().unwrap_or(self.sieve.write_buffer)
                }
                "romio_cb_read" => self.cb_read = sw().unwrap_or(self.cb_read),
                "romio_cb_write" => self.cb_write = sw().unwrap_or(self.cb_write),
                "cb_buffer_size" => self.cb_buffer = sz().unwrap_or(self.cb_buffer),
                "cb_nodes" => self.cb_nodes = sz().or(self.cb_nodes),
                "striping_unit" => self.striping_unit = sz().unwrap_or(self.striping_unit),
                _ => self.other.set(k, v),
            }
        }
        Ok(())
    }

    /// The hints in use, as `MPI_File_get_info` reports them.
    pub fn to_info(&self, nodes: usize) -> Info {
        let mut i = Info::default();
        let onoff = |b: bool| if b { "enable" } else { "disable" };
        i.set("romio_ds_read", onoff(self.sieve.read));
        i.set("romio_ds_write", onoff(self.sieve.write));
        i.set("ind_rd_buffer_size", &self.sieve.read_buffer.to_string());
        i.set("ind_wr_buffer_size", &self.sieve.write_buffer.to_string());
        i.set("romio_cb_read", self.cb_read.name());
        i.set("romio_cb_write", self.cb_write.name());
        i.set("cb_buffer_size", &self.cb_buffer.to_string());
        i.set("cb_nodes", &self.cb_nodes.unwrap_or(nodes).to_string());
        i.set("striping_unit", &self.striping_unit.to_string());
        for (k, v) in &self.other.entries {
            i.set(k, v);
        }
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_report() {
        let mut info = Info::default();
        info.set("cb_buffer_size", "1048576");
        info.set("romio_cb_write", "disable");
        info.set("my_key", "x");
        let h = Hints::from_info(&info).unwrap();
        assert_eq!(h.cb_buffer, 1 << 20);
        assert_eq!(h.cb_write, Switch::Disable);
        let back = h.to_info(2);
        assert_eq!(back.get("cb_nodes"), Some("2"));
        assert_eq!(back.get("my_key"), Some("x"));
        info.set("cb_nodes", "zero");
        assert_eq!(
            Hints::from_info(&info).unwrap().cb_nodes,
            None,
            "bad values are ignored"
        );
    }
}
