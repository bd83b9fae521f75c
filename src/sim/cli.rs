//! Argument parsing shared by `hympi-sim` and `hympi-tune`.

use crate::coll::tuning::{Coll, COLLS};

/// A byte count with an optional K/M/G suffix (powers of 1024).
pub fn size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let (num, mul) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 1 << 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 1 << 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.parse::<usize>()
        .map(|n| n * mul)
        .map_err(|_| format!("`{text}` is not a size"))
}

/// A collective by its table name (`bcast`, `allreduce`, ...), any case.
pub fn coll(name: &str) -> Result<Coll, String> {
    COLLS
        .iter()
        .copied()
        .find(|c| c.name().eq_ignore_ascii_case(name))
        .ok_or_else(|| format!("unknown collective `{name}`"))
}

/// A comma-separated list, each item parsed by `f` (empty items skipped).
pub fn list<T>(text: &str, f: impl Fn(&str) -> Result<T, String>) -> Result<Vec<T>, String> {
    text.split(',').filter(|s| !s.is_empty()).map(f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_lists_and_collectives() {
        assert_eq!(size("64K"), Ok(65536));
        assert_eq!(size(" 1m "), Ok(1 << 20));
        assert_eq!(size("3"), Ok(3));
        assert!(size("K").is_err() && size("1.5K").is_err());
        assert_eq!(list("1,,2", size), Ok(vec![1, 2]));
        assert_eq!(coll("AllReduce"), Ok(Coll::Allreduce));
        assert!(coll("nope").is_err());
    }
}
