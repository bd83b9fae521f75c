//! The contention-aware cost model of single-copy (CMA) transfers between the processes of a
//! node (`papers/contention-aware-cma-collectives.md`, Table II): a read of `m` bytes with
//! `c` concurrent readers of one process takes `alpha + m * beta + lock * gamma(c) *
//! ceil(m / page)`, `gamma(c) = gamma2 * c^2 + gamma1 * c`. The simulator times on-node
//! transfers with it (`sim::model`), the on-node collectives take their throttle from it
//! (`coll::cma`) and `hympi-tune --cma` measures it (`platform::cma_calibrate`).

/// The contention-aware CMA model of large on-node transfers (times in seconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cma {
    /// Transfers of at least this many bytes go through CMA (`usize::MAX`: never).
    pub threshold: usize,
    /// `alpha`: start-up cost of one read (system call and permission check).
    pub startup: f64,
    /// `beta`: copy time per byte.
    pub per_byte: f64,
    /// `l`: time to lock and pin one page without contention.
    pub lock_per_page: f64,
    /// Page size in bytes.
    pub page: usize,
    /// `gamma(c) = quadratic * c^2 + linear * c` for `c` concurrent readers of one process.
    pub quadratic: f64,
    /// See `quadratic`.
    pub linear: f64,
}

impl Cma {
    /// The contention factor for `c` concurrent accessors of one process's memory.
    pub fn contention(&self, c: usize) -> f64 {
        let c = c.max(1) as f64;
        self.quadratic * c * c + self.linear * c
    }

    /// The number of concurrent readers of one process that moves pages fastest: the CMA
    /// paper's `k* = sqrt(page * beta / (lock * gamma2))`, which minimises the per-page cost
    /// `ceil(p / k) * (page * beta + lock * gamma(k))` of `p` readers taken `k` at a time.
    /// At least 1; `usize::MAX` when contention does not grow faster than the readers
    /// (no quadratic term), so any number may read at once.
    pub fn best_throttle(&self) -> usize {
        let denom = self.lock_per_page * self.quadratic;
        if denom <= 0.0 {
            return usize::MAX;
        }
        let k = (self.page as f64 * self.per_byte / denom).sqrt().round();
        if k.is_finite() {
            (k as usize).max(1)
        } else {
            usize::MAX
        }
    }

    /// Time of one read of `bytes` with `c` concurrent readers of the same process.
    pub fn read_time(&self, bytes: usize, c: usize) -> f64 {
        let pages = bytes.div_ceil(self.page.max(1)) as f64;
        self.startup
            + bytes as f64 * self.per_byte
            + self.lock_per_page * self.contention(c) * pages
    }
}

/// The built-in model: the CMA paper's Broadwell fit (Table IV), also the `cma` section of
/// the simulator's built-in parameter set (a test keeps them equal). Its best throttle is 4.
pub const BUILT_IN: Cma = Cma {
    threshold: 65536,
    startup: 0.98e-6,
    per_byte: 1.0 / 13.2e9,
    lock_per_page: 0.11e-6,
    page: 4096,
    quadratic: 0.18,
    linear: 0.83,
};
