//! Hosts of a multi-host job: `--hosts h1,h2:2` and `--hostfile FILE`, and which ranks each
//! host runs.

/// One host and how many ranks it takes per round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    /// The name given (passed to the launcher command as `{host}`).
    pub name: String,
    /// Ranks per round (`:N` or `slots=N`; 1 when not given).
    pub slots: usize,
}

/// Largest accepted slot count.
const MAX_SLOTS: usize = 4096;

fn host_name_ok(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '@'))
}

fn parse_slots(v: &str, context: &str) -> Result<usize, String> {
    match v.parse::<usize>() {
        Ok(n) if (1..=MAX_SLOTS).contains(&n) => Ok(n),
        _ => Err(format!(
            "{context}: invalid slot count {v:?} (expected 1 to {MAX_SLOTS})"
        )),
    }
}

/// One `name[:slots]` entry.
fn parse_entry(entry: &str, context: &str) -> Result<Host, String> {
    let (name, slots) = match entry.rsplit_once(':') {
        Some((n, s)) if s.chars().all(|c| c.is_ascii_digit()) => (n, parse_slots(s, context)?),
        _ => (entry, 1),
    };
    if !host_name_ok(name) {
        return Err(format!("{context}: invalid host name {name:?}"));
    }
    Ok(Host {
        name: name.to_string(),
        slots,
    })
}

/// Parses `--hosts a,b:2,c`.
pub fn parse_list(list: &str) -> Result<Vec<Host>, String> {
    let hosts = list
        .split(',')
        .map(|e| parse_entry(e.trim(), "--hosts"))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(hosts)
}

/// Parses a host file: one host per line, `name`, `name:N` or `name slots=N`; `#` starts a
/// comment; blank lines are skipped.
pub fn parse_file(text: &str, path: &str) -> Result<Vec<Host>, String> {
    let mut hosts = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let context = format!("{path}:{}", i + 1);
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or("");
        let mut host = parse_entry(first, &context)?;
        for w in words {
            match w.split_once('=') {
                Some(("slots", v)) | Some(("max_slots", v)) => {
                    host.slots = parse_slots(v, &context)?
                }
                _ => return Err(format!("{context}: unexpected {w:?} (expected slots=N)")),
            }
        }
        hosts.push(host);
    }
    if hosts.is_empty() {
        return Err(format!("{path}: no hosts in the file"));
    }
    Ok(hosts)
}

/// The host index of every rank of a job of `np` ranks: hosts take their slots in turn, in
/// blocks, and the list starts over when every slot is taken.
pub fn place(hosts: &[Host], np: usize) -> Vec<usize> {
    let mut host_of = Vec::with_capacity(np);
    'fill: loop {
        for (h, host) in hosts.iter().enumerate() {
            for _ in 0..host.slots {
                if host_of.len() == np {
                    break 'fill;
                }
                host_of.push(h);
            }
        }
    }
    host_of
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(name: &str, slots: usize) -> Host {
        Host {
            name: name.into(),
            slots,
        }
    }

    #[test]
    fn lists_and_files() {
        assert_eq!(parse_list("a,b:2").unwrap(), vec![h("a", 1), h("b", 2)]);
        let file = "# hosts\nnode1 slots=2\n\nnode2:3  # comment\nnode3\n";
        assert_eq!(
            parse_file(file, "f").unwrap(),
            vec![h("node1", 2), h("node2", 3), h("node3", 1)]
        );
    }

    #[test]
    fn bad_input_names_the_place() {
        assert!(parse_list("a,,b")
            .unwrap_err()
            .contains("invalid host name"));
        assert!(parse_list("a:0").unwrap_err().contains("slot count"));
        assert!(parse_file("a\nb slots=x\n", "hf")
            .unwrap_err()
            .starts_with("hf:2:"));
        assert!(parse_file("a\nb cores=2\n", "hf")
            .unwrap_err()
            .contains("unexpected"));
        assert!(parse_file("# nothing\n", "hf")
            .unwrap_err()
            .contains("no hosts"));
        assert!(parse_file("a;b\n", "hf")
            .unwrap_err()
            .contains("invalid host name"));
    }

    #[test]
    fn placement_fills_slots_then_wraps() {
        assert_eq!(place(&[h("a", 2), h("b", 2)], 4), vec![0, 0, 1, 1]);
        assert_eq!(place(&[h("a", 2), h("b", 2)], 6), vec![0, 0, 1, 1, 0, 0]);
        assert_eq!(place(&[h("a", 1), h("b", 1)], 3), vec![0, 1, 0]);
        assert_eq!(place(&[h("a", 4)], 2), vec![0, 0]);
    }
}
