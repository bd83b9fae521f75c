//! The PMI-2 wire format, as Slurm's `mpi/pmi2` plugin and MPICH's Hydra serve it.
//!
//! After a PMI-1-style `cmd=init pmi_version=2 pmi_subversion=0` line, every message is a
//! command: a 6-byte length field (decimal, left-aligned, space-padded) followed by that many
//! bytes of `key=value;` pairs, the first being `cmd=<name>;`. In a value, `;;` stands for a
//! literal `;` (MPICH's rule; Slurm neither writes nor reads the escape, so portable values
//! avoid `;`). Keys may repeat (`spawn` lists `argv0`, `argv1`, ...); [`Command::get`] returns
//! the first.

use std::fmt;
use std::io;

/// Width of the length field that precedes each command.
pub const LENGTH_FIELD: usize = 6;
/// Longest command body, in bytes (what fits in the length field).
pub const MAX_BODY_LEN: usize = 999_999;

/// One PMI-2 command or response: its name and its `key=value` pairs, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    cmd: String,
    args: Vec<(String, String)>,
}

fn bad(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// A key the format can carry: non-empty printable ASCII without `=` or `;`.
fn check_key(key: &str) -> io::Result<()> {
    if key.is_empty()
        || !key
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'=' && b != b';')
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("PMI-2 key {key:?} must be printable ASCII without '=' or ';'"),
        ));
    }
    Ok(())
}

impl Command {
    /// A command named `cmd` with no arguments.
    pub fn new(cmd: &str) -> Command {
        Command {
            cmd: cmd.to_string(),
            args: Vec::new(),
        }
    }

    /// Appends `key=value` (builder style); checked when framed.
    pub fn arg(mut self, key: &str, value: impl fmt::Display) -> Command {
        self.args.push((key.to_string(), value.to_string()));
        self
    }

    /// The command name.
    pub fn cmd(&self) -> &str {
        &self.cmd
    }

    /// The value of the first argument named `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.args
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The first argument named `key` as a decimal integer.
    pub fn get_int(&self, key: &str) -> Option<i64> {
        self.get(key).and_then(|v| v.trim().parse().ok())
    }

    /// The first argument named `key` as a PMI-2 boolean (`TRUE`/`FALSE`, any case).
    pub fn get_bool(&self, key: &str) -> Option<bool> {
        self.get(key).map(|v| v.eq_ignore_ascii_case("true"))
    }

    /// The `rc=` of a response: 0 when absent, -1 when not a number.
    pub fn rc(&self) -> i64 {
        match self.get("rc") {
            None => 0,
            Some(v) => v.trim().parse().unwrap_or(-1),
        }
    }

    /// The body: `cmd=<name>;key=value;...`, with `;` in values doubled.
    pub fn body(&self) -> io::Result<String> {
        check_key(&self.cmd)?;
        let mut out = format!("cmd={};", self.cmd);
        for (k, v) in &self.args {
            check_key(k)?;
            if v.chars().any(char::is_control) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("PMI-2 value of {k:?} holds a control character"),
                ));
            }
            out.push_str(k);
            out.push('=');
            out.push_str(&v.replace(';', ";;"));
            out.push(';');
        }
        if out.len() > MAX_BODY_LEN {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("PMI-2 command {} is {} bytes long", self.cmd, out.len()),
            ));
        }
        Ok(out)
    }

    /// The command as sent: length field and body.
    pub fn frame(&self) -> io::Result<Vec<u8>> {
        let body = self.body()?;
        let mut out = format!("{:<width$}", body.len(), width = LENGTH_FIELD).into_bytes();
        out.extend_from_slice(body.as_bytes());
        Ok(out)
    }

    /// Parses a body (the bytes after the length field).
    pub fn parse(body: &str) -> io::Result<Command> {
        let mut pairs = Vec::new();
        let mut rest = body;
        while !rest.is_empty() {
            let eq = rest
                .find('=')
                .ok_or_else(|| bad(format!("PMI-2 pair without '=' in {body:?}")))?;
            let key = &rest[..eq];
            if key.is_empty() || key.contains(';') {
                return Err(bad(format!("PMI-2 bad key {key:?} in {body:?}")));
            }
            let bytes = rest.as_bytes();
            let mut i = eq + 1;
            let mut value = String::new();
            let mut start = i;
            loop {
                if i >= bytes.len() {
                    // A last pair without its ';' is accepted (some servers omit it).
                    value.push_str(&rest[start..]);
                    break;
                }
                if bytes[i] == b';' {
                    if bytes.get(i + 1) == Some(&b';') {
                        value.push_str(&rest[start..=i]);
                        i += 2;
                        start = i;
                        continue;
                    }
                    value.push_str(&rest[start..i]);
                    i += 1;
                    break;
                }
                i += 1;
            }
            pairs.push((key.to_string(), value));
            rest = &rest[i.min(rest.len())..];
        }
        let mut pairs = pairs.into_iter();
        match pairs.next() {
            Some((k, cmd)) if k == "cmd" && !cmd.is_empty() => Ok(Command {
                cmd,
                args: pairs.collect(),
            }),
            _ => Err(bad(format!(
                "PMI-2 message does not start with cmd=: {body:?}"
            ))),
        }
    }

    /// Reads the length field's value.
    pub fn parse_length(field: &[u8]) -> io::Result<usize> {
        std::str::from_utf8(field)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .filter(|&n| n <= MAX_BODY_LEN)
            .ok_or_else(|| {
                bad(format!(
                    "PMI-2 length field {:?} is not a length",
                    String::from_utf8_lossy(field)
                ))
            })
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cmd={};", self.cmd)?;
        for (k, v) in &self.args {
            write!(f, "{k}={};", v.replace(';', ";;"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_with_a_left_aligned_length() {
        let c = Command::new("kvs-put").arg("key", "a").arg("value", "b");
        let f = c.frame().unwrap();
        assert_eq!(f, b"26    cmd=kvs-put;key=a;value=b;".to_vec());
        assert_eq!(Command::parse_length(&f[..LENGTH_FIELD]).unwrap(), 26);
    }

    #[test]
    fn parses_responses_and_escapes() {
        let c = Command::parse("cmd=kvs-get-response;rc=0;found=TRUE;value=x;;y=z;").unwrap();
        assert_eq!(c.cmd(), "kvs-get-response");
        assert_eq!(c.rc(), 0);
        assert_eq!(c.get_bool("found"), Some(true));
        assert_eq!(c.get("value"), Some("x;y=z"));
        let back = Command::parse(&c.body().unwrap()).unwrap();
        assert_eq!(back, c);
        let open = Command::parse("cmd=finalize-response;rc=0").unwrap();
        assert_eq!(open.get_int("rc"), Some(0));
        let empty = Command::parse("cmd=x;k=;").unwrap();
        assert_eq!(empty.get("k"), Some(""));
    }

    #[test]
    fn refuses_malformed_input() {
        assert!(Command::parse("rc=0;cmd=x;").is_err());
        assert!(Command::parse("cmd=x;novalue;").is_err());
        assert!(Command::parse("").is_err());
        assert!(Command::parse_length(b"12a   ").is_err());
        assert!(Command::new("x").arg("a;b", "v").frame().is_err());
        assert!(Command::new("x").arg("k", "line\nbreak").frame().is_err());
        assert!(Command::new("x")
            .arg("k", "v".repeat(MAX_BODY_LEN))
            .frame()
            .is_err());
    }
}
