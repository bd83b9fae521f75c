//! Info objects: ordered (key, value) string pairs.

/// An info object. Keys keep their insertion order (`MPI_Info_get_nthkey`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Info {
    /// (key, value) pairs, keys unique.
    pub entries: Vec<(String, String)>,
}

impl Info {
    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Sets `key` to `value`, replacing an existing value in place.
    pub fn set(&mut self, key: &str, value: &str) {
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some(e) => e.1 = value.to_string(),
            None => self.entries.push((key.to_string(), value.to_string())),
        }
    }

    /// Removes `key`; whether it was there.
    pub fn delete(&mut self, key: &str) -> bool {
        let before = self.entries.len();
        self.entries.retain(|(k, _)| k != key);
        self.entries.len() != before
    }
}
