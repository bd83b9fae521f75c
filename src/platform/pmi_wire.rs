//! The PMI-1 wire format, shared by the client ([`super::pmi`]) and the `hympiexec` server.
//!
//! A message is one line: `cmd=<name> key=value key=value ...\n`. Tokens are separated by one
//! or more spaces; a backslash makes the next character literal, so a value may contain a space
//! as `\ ` and a backslash as `\\` (this is how MPICH's parser reads values). A token without
//! `=` is read as a key with an empty value. Keys may repeat (Hydra's `keyval_cache` does);
//! [`Message::get`] returns the first.
//!
//! Limits (Hydra's `pmiserv_common.h`): key ≤ [`MAX_KEY_LEN`], value ≤ [`MAX_VALUE_LEN`],
//! KVS name ≤ [`MAX_KVSNAME_LEN`] bytes. A line longer than [`MAX_LINE_LEN`] is a protocol error.
//!
//! Interoperability note: Hydra 4.0 (Debian's `mpich`) splits lines at every space and does not
//! undo escapes, so a value meant for a third-party server should avoid spaces and backslashes
//! ([`is_portable_value`]).

use std::fmt;
use std::io;

/// Longest key, in bytes.
pub const MAX_KEY_LEN: usize = 64;
/// Longest value, in bytes (after unescaping).
pub const MAX_VALUE_LEN: usize = 1024;
/// Longest key-value-space name, in bytes.
pub const MAX_KVSNAME_LEN: usize = 256;
/// Longest line accepted by [`LineBuffer`], in bytes, newline excluded. Room for a `put` whose
/// value is fully escaped (2 × 1024) plus the KVS name, the key and the command words.
pub const MAX_LINE_LEN: usize = 4096;

/// Why a line is not a valid PMI-1 message, or a message cannot be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireError {
    /// The line holds no token at all.
    Empty,
    /// The first token is not `cmd=<name>` with a non-empty name.
    MissingCmd,
    /// A token starts with `=`.
    EmptyKey,
    /// A key is longer than [`MAX_KEY_LEN`].
    KeyTooLong(usize),
    /// A value (named by its key) is longer than [`MAX_VALUE_LEN`].
    ValueTooLong(String, usize),
    /// A key or value holds a character the wire format cannot carry (a control character in a
    /// value; a space, `=`, `\` or control character in a key).
    BadChar(String),
    /// A line is longer than [`MAX_LINE_LEN`].
    LineTooLong,
    /// A line is not UTF-8.
    NotUtf8,
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Empty => write!(f, "empty PMI message"),
            WireError::MissingCmd => write!(f, "PMI message does not start with cmd=<name>"),
            WireError::EmptyKey => write!(f, "PMI message has a token with an empty key"),
            WireError::KeyTooLong(n) => {
                write!(f, "PMI key of {n} bytes exceeds the limit of {MAX_KEY_LEN}")
            }
            WireError::ValueTooLong(k, n) => write!(
                f,
                "PMI value of `{k}` has {n} bytes, over the limit of {MAX_VALUE_LEN}"
            ),
            WireError::BadChar(what) => {
                write!(f, "PMI {what} holds a character the wire cannot carry")
            }
            WireError::LineTooLong => {
                write!(f, "PMI line exceeds the limit of {MAX_LINE_LEN} bytes")
            }
            WireError::NotUtf8 => write!(f, "PMI line is not UTF-8"),
        }
    }
}

impl std::error::Error for WireError {}

impl From<WireError> for io::Error {
    fn from(e: WireError) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, e)
    }
}

/// Checks a key: 1 to [`MAX_KEY_LEN`] bytes of printable ASCII other than `=` and `\`.
pub fn check_key(key: &str) -> Result<(), WireError> {
    if key.is_empty() {
        return Err(WireError::EmptyKey);
    }
    if key.len() > MAX_KEY_LEN {
        return Err(WireError::KeyTooLong(key.len()));
    }
    if !key
        .bytes()
        .all(|b| b.is_ascii_graphic() && b != b'=' && b != b'\\')
    {
        return Err(WireError::BadChar(format!("key `{}`", key.escape_debug())));
    }
    Ok(())
}

/// Checks a value: at most [`MAX_VALUE_LEN`] bytes and no control characters.
pub fn check_value(key: &str, value: &str) -> Result<(), WireError> {
    if value.len() > MAX_VALUE_LEN {
        return Err(WireError::ValueTooLong(key.to_string(), value.len()));
    }
    if value.chars().any(char::is_control) {
        return Err(WireError::BadChar(format!("value of `{key}`")));
    }
    Ok(())
}

/// True when every server, including ones that do not undo escapes (Hydra 4.0), stores `value`
/// unchanged: printable ASCII (33..=126) other than `\`, at most [`MAX_VALUE_LEN`] bytes.
pub fn is_portable_value(value: &str) -> bool {
    value.len() <= MAX_VALUE_LEN && value.bytes().all(|b| b.is_ascii_graphic() && b != b'\\')
}

/// Writes `value` with spaces and backslashes escaped.
fn escape_into(out: &mut String, value: &str) {
    for c in value.chars() {
        if c == ' ' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
}

/// One PMI-1 message: a command name and its `key=value` arguments, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    cmd: String,
    args: Vec<(String, String)>,
}

impl Message {
    /// A message with command `cmd` and no arguments.
    pub fn new(cmd: &str) -> Message {
        Message {
            cmd: cmd.to_string(),
            args: Vec::new(),
        }
    }

    /// Appends the argument `key=value` (builder style). Limits are checked by [`Self::to_line`].
    pub fn arg(mut self, key: &str, value: impl fmt::Display) -> Message {
        self.args.push((key.to_string(), value.to_string()));
        self
    }

    /// The command name (the value of `cmd=`).
    pub fn cmd(&self) -> &str {
        &self.cmd
    }

    /// The arguments other than `cmd`, in order.
    pub fn args(&self) -> &[(String, String)] {
        &self.args
    }

    /// The value of the first argument named `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.args
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The first argument named `key`, read as a decimal integer.
    pub fn get_int(&self, key: &str) -> Option<i64> {
        self.get(key).and_then(|v| v.trim().parse().ok())
    }

    /// The `rc=` of a response: 0 when absent; a value that is not a number counts as -1.
    pub fn rc(&self) -> i64 {
        match self.get("rc") {
            None => 0,
            Some(v) => v.trim().parse().unwrap_or(-1),
        }
    }

    /// Parses one line (with or without its trailing newline).
    pub fn parse(line: &str) -> Result<Message, WireError> {
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.len() > MAX_LINE_LEN {
            return Err(WireError::LineTooLong);
        }
        let mut tokens = Tokens { rest: line }.map(split_token);
        let (first_key, cmd) = match tokens.next() {
            None => return Err(WireError::Empty),
            Some(t) => t?,
        };
        if first_key != "cmd" || cmd.is_empty() {
            return Err(WireError::MissingCmd);
        }
        let mut args = Vec::new();
        for t in tokens {
            let (k, v) = t?;
            if k.len() > MAX_KEY_LEN {
                return Err(WireError::KeyTooLong(k.len()));
            }
            if v.len() > MAX_VALUE_LEN {
                return Err(WireError::ValueTooLong(k, v.len()));
            }
            args.push((k, v));
        }
        Ok(Message { cmd, args })
    }

    /// Formats the message as one line ending in `\n`, escaping values; fails when a key or
    /// value breaks the limits or holds a character the format cannot carry.
    pub fn to_line(&self) -> Result<String, WireError> {
        check_key(&self.cmd)?;
        let mut out = String::with_capacity(16 + self.args.len() * 16);
        out.push_str("cmd=");
        out.push_str(&self.cmd);
        for (k, v) in &self.args {
            check_key(k)?;
            check_value(k, v)?;
            out.push(' ');
            out.push_str(k);
            out.push('=');
            escape_into(&mut out, v);
        }
        out.push('\n');
        if out.len() > MAX_LINE_LEN + 1 {
            return Err(WireError::LineTooLong);
        }
        Ok(out)
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = format!("cmd={}", self.cmd);
        for (k, v) in &self.args {
            s.push(' ');
            s.push_str(k);
            s.push('=');
            escape_into(&mut s, v);
        }
        f.write_str(&s)
    }
}

/// Iterator over the raw (still escaped) space-separated tokens of a line.
struct Tokens<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        self.rest = self.rest.trim_start_matches(' ');
        if self.rest.is_empty() {
            return None;
        }
        let bytes = self.rest.as_bytes();
        let mut i = 0;
        while i < bytes.len() && bytes[i] != b' ' {
            // An escaped character never ends the token; a trailing lone backslash is literal.
            i += if bytes[i] == b'\\' && i + 1 < bytes.len() {
                2
            } else {
                1
            };
        }
        // `i` stops at a space or at the end (continuation bytes of an escaped multi-byte char
        // are never a space or a backslash), so it is a char boundary.
        let (tok, rest) = self.rest.split_at(i);
        self.rest = rest;
        Some(tok)
    }
}

/// Splits a raw token into its key and unescaped value.
fn split_token(tok: &str) -> Result<(String, String), WireError> {
    let (key, raw) = match tok.find('=') {
        Some(i) => (&tok[..i], &tok[i + 1..]),
        None => (tok, ""),
    };
    if key.is_empty() {
        return Err(WireError::EmptyKey);
    }
    if key.contains('\\') {
        return Err(WireError::BadChar(format!("key `{}`", key.escape_debug())));
    }
    let mut value = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            value.push(chars.next().unwrap_or('\\'));
        } else {
            value.push(c);
        }
    }
    Ok((key.to_string(), value))
}

/// Accumulates bytes read from a stream and hands out complete lines.
#[derive(Debug, Default)]
pub struct LineBuffer {
    buf: Vec<u8>,
}

impl LineBuffer {
    /// An empty buffer.
    pub fn new() -> LineBuffer {
        LineBuffer::default()
    }

    /// Appends bytes just read.
    pub fn extend(&mut self, data: &[u8]) {
        self.buf.extend_from_slice(data);
    }

    /// True when no bytes are pending.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Takes the next complete line (without its newline). `None` means more bytes are needed.
    /// A line longer than [`MAX_LINE_LEN`] (complete or not) is an error and the buffer is
    /// cleared, since the stream can no longer be trusted.
    pub fn next_line(&mut self) -> Option<Result<String, WireError>> {
        match self.buf.iter().position(|&b| b == b'\n') {
            Some(n) if n <= MAX_LINE_LEN => {
                let line: Vec<u8> = self.buf.drain(..=n).take(n).collect();
                Some(String::from_utf8(line).map_err(|_| WireError::NotUtf8))
            }
            Some(_) => {
                self.buf.clear();
                Some(Err(WireError::LineTooLong))
            }
            None if self.buf.len() > MAX_LINE_LEN => {
                self.buf.clear();
                Some(Err(WireError::LineTooLong))
            }
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_simple() {
        let m = Message::parse("cmd=put kvsname=kvs_1 key=k value=v\n").unwrap();
        assert_eq!(m.cmd(), "put");
        assert_eq!(m.get("kvsname"), Some("kvs_1"));
        assert_eq!(m.get("key"), Some("k"));
        assert_eq!(m.get("value"), Some("v"));
        assert_eq!(m.get("other"), None);
        assert_eq!(m.rc(), 0);
    }

    #[test]
    fn parse_extra_spaces_rc_and_bare_tokens() {
        let m = Message::parse("cmd=get_result   rc=-1 msg=key_x_not_found  found ").unwrap();
        assert_eq!(m.rc(), -1);
        assert_eq!(m.get("msg"), Some("key_x_not_found"));
        assert_eq!(m.get("found"), Some(""));
        assert_eq!(m.args().len(), 3);
    }

    #[test]
    fn value_keeps_equals_signs() {
        let m = Message::parse("cmd=put key=a value=x=y=z").unwrap();
        assert_eq!(m.get("value"), Some("x=y=z"));
    }

    #[test]
    fn escapes_round_trip() {
        let m = Message::new("abort")
            .arg("exitcode", 3)
            .arg("message", "bad thing \\ happened");
        let line = m.to_line().unwrap();
        assert_eq!(
            line,
            "cmd=abort exitcode=3 message=bad\\ thing\\ \\\\\\ happened\n"
        );
        assert_eq!(Message::parse(&line).unwrap(), m);
    }

    #[test]
    fn utf8_values_round_trip() {
        let m = Message::new("x").arg("v", "héllo wörld ✓");
        assert_eq!(Message::parse(&m.to_line().unwrap()).unwrap(), m);
        // An escaped multi-byte character.
        let m = Message::parse("cmd=x v=a\\é").unwrap();
        assert_eq!(m.get("v"), Some("aé"));
    }

    #[test]
    fn trailing_backslash_is_literal() {
        let m = Message::parse("cmd=x v=a\\").unwrap();
        assert_eq!(m.get("v"), Some("a\\"));
    }

    #[test]
    fn hydra_multi_line_initack() {
        let mut b = LineBuffer::new();
        b.extend(b"cmd=initack\ncmd=set size=4\ncmd=set ra");
        assert_eq!(b.next_line().unwrap().unwrap(), "cmd=initack");
        let m = Message::parse(&b.next_line().unwrap().unwrap()).unwrap();
        assert_eq!((m.cmd(), m.get_int("size")), ("set", Some(4)));
        assert!(b.next_line().is_none());
        b.extend(b"nk=2\n");
        let m = Message::parse(&b.next_line().unwrap().unwrap()).unwrap();
        assert_eq!(m.get_int("rank"), Some(2));
        assert!(b.next_line().is_none());
        assert!(b.is_empty());
    }

    #[test]
    fn rejects_malformed() {
        assert_eq!(Message::parse(""), Err(WireError::Empty));
        assert_eq!(Message::parse("   \n"), Err(WireError::Empty));
        assert_eq!(Message::parse("put key=x"), Err(WireError::MissingCmd));
        assert_eq!(Message::parse("key=x cmd=put"), Err(WireError::MissingCmd));
        assert_eq!(Message::parse("cmd= key=x"), Err(WireError::MissingCmd));
        assert_eq!(Message::parse("cmd=put =x"), Err(WireError::EmptyKey));
        let long_key = format!("cmd=put {}=1", "k".repeat(MAX_KEY_LEN + 1));
        assert_eq!(
            Message::parse(&long_key),
            Err(WireError::KeyTooLong(MAX_KEY_LEN + 1))
        );
        let long_val = format!("cmd=put value={}", "v".repeat(MAX_VALUE_LEN + 1));
        assert!(matches!(
            Message::parse(&long_val),
            Err(WireError::ValueTooLong(_, _))
        ));
    }

    #[test]
    fn limits_are_inclusive() {
        let k = "k".repeat(MAX_KEY_LEN);
        let v = " ".repeat(MAX_VALUE_LEN);
        let m = Message::new("put").arg(&k, &v);
        let line = m.to_line().unwrap();
        assert_eq!(Message::parse(&line).unwrap(), m);
    }

    #[test]
    fn to_line_rejects_what_the_wire_cannot_carry() {
        assert!(Message::new("x").arg("v", "a\nb").to_line().is_err());
        assert!(Message::new("x").arg("bad key", "v").to_line().is_err());
        assert!(Message::new("x").arg("k=", "v").to_line().is_err());
        assert!(Message::new("x").arg("", "v").to_line().is_err());
        assert!(Message::new("x")
            .arg("v", "x".repeat(MAX_VALUE_LEN + 1))
            .to_line()
            .is_err());
    }

    #[test]
    fn line_buffer_limits() {
        let mut b = LineBuffer::new();
        b.extend(&vec![b'a'; MAX_LINE_LEN + 1]);
        assert_eq!(b.next_line(), Some(Err(WireError::LineTooLong)));
        assert!(b.is_empty());
        b.extend(&[0xff, b'\n']);
        assert_eq!(b.next_line(), Some(Err(WireError::NotUtf8)));
        let mut exact = vec![b'a'; MAX_LINE_LEN];
        exact.push(b'\n');
        b.extend(&exact);
        assert_eq!(b.next_line().unwrap().unwrap().len(), MAX_LINE_LEN);
    }

    #[test]
    fn portable_values() {
        assert!(is_portable_value(
            "0a1b:tcp://127.0.0.1:5000,(vector,(0,1,4))"
        ));
        assert!(is_portable_value(""));
        assert!(!is_portable_value("a b"));
        assert!(!is_portable_value("a\\b"));
        assert!(!is_portable_value("é"));
        assert!(!is_portable_value(&"x".repeat(MAX_VALUE_LEN + 1)));
    }
}
