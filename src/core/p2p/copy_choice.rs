//! How a contiguous rendezvous from a waiting node peer is copied: streamed through
//! shared-memory cells (two user-space copies, on the two ranks' cores at once) or read with
//! CMA (`process_vm_readv`, one kernel copy that pins the sender's pages; split between both
//! ranks above `HYMPI_CMA_SPLIT_MIN`).
//!
//! Which is faster depends on the machine, not on the code: on one measured VM a CMA copy ran
//! far below memcpy speed and the stream won at every size (1 MiB windowed bandwidth 51
//! against 30 GB/s), on another the stream paid for moving every line between the cores
//! twice and CMA won from 16 KiB up (1 MiB 50 against 16 GB/s). So by default
//! (`HYMPI_STREAM_MAX=auto`) the receiver measures both, per power-of-two size class, and
//! takes the faster one: [`CopyChoice`] runs *epochs* of [`EPOCH_MESSAGES`] messages with
//! one kind of copy and charges each epoch the time during which at least one message of the
//! class was being copied, per byte. That busy time is a message's duration in a ping-pong
//! and the length of the whole transfer when a window of messages is in flight at once, so
//! one figure serves latency- and bandwidth-bound traffic. The kind switches only when no
//! message of the class is in flight, so an epoch never mixes them. The class's first epoch
//! (two streamed messages) is a warm-up and not counted (first-touch costs), nor is the
//! first copy of an epoch that changed the kind (it moves what the other kind left in the
//! caches: a sender's buffer that CMA copies then find warm on the receiver's core, as they
//! do while CMA runs, was on the sender's core while the stream ran); then one short
//! epoch of each kind is measured, the faster kind runs, and the slower one gets a short probe
//! epoch now and then (every 16 epochs at first, the gap doubling up to 512 while the
//! probes confirm the choice) so a change of load is noticed; an epoch of the running kind
//! far slower than its estimate calls a probe at once ([`SLOW_EPOCH`]). A kind's estimate is
//! the mean of its recent epochs without the worst ([`RECENT`]). A class that starts after
//! another has measured both kinds takes that class's choice at once and measures the other
//! kind first in a probe. A size set in `HYMPI_STREAM_MAX` fixes the choice instead: streamed up to it.

/// The two ways of copying a contiguous rendezvous whose sender waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyKind {
    /// `Cts`, then the sender pipelines `Data` cells.
    Stream = 0,
    /// `process_vm_readv` by the receiver (split with the sender when large).
    Cma = 1,
}

impl CopyKind {
    fn other(self) -> CopyKind {
        match self {
            CopyKind::Stream => CopyKind::Cma,
            CopyKind::Cma => CopyKind::Stream,
        }
    }
}

/// Messages of an epoch (a window of messages in flight at once makes a longer one).
pub const EPOCH_MESSAGES: u32 = 8;
/// Messages of the class's first epoch (streamed, not counted: first-touch costs).
const WARM_MESSAGES: u32 = 2;
/// Messages of a probe of the slower kind, and of the first measured epoch of a kind.
const PROBE_MESSAGES: u32 = 4;
/// Counted epochs of a kind its estimate remembers. The estimate is their mean without the
/// worst one: a single epoch disturbed by a descheduling or by other traffic cannot make a
/// kind look slow (which with a probed kind would stick until its next probe), while a kind
/// that is slow most of the time, with clean epochs now and then (a competing CPU load
/// deschedules one rank or the other every few milliseconds), is judged by what it costs on
/// the whole. (An estimate that was the best of the recent epochs locked onto the stream
/// under such a load: 40x slower one run in four, 3.6x slower on average than CMA, and
/// still chosen for every copy, the probes of CMA having grown rare on the quiet machine.)
const RECENT: usize = 8;
/// An epoch of the running kind this many times slower than its estimate says the load
/// changed: the other kind is probed at once, and that probe replaces its history (figures
/// from before the change say nothing about now).
const SLOW_EPOCH: f64 = 2.0;
/// First gap (in epochs) between probes of the slower kind.
const PROBE_GAP_MIN: u32 = 16;
/// Largest gap between probes of the slower kind.
const PROBE_GAP_MAX: u32 = 512;

/// Measurements of one power-of-two size class.
#[derive(Clone, Copy, Debug)]
struct Class {
    /// Kind new messages of the class take.
    current: CopyKind,
    /// Messages of the class being copied now.
    active: u32,
    /// When `active` last rose from 0 (ns).
    busy_since: i64,
    /// Busy time of the current epoch so far (ns).
    busy_ns: i64,
    /// Bytes of the current epoch's completed messages.
    bytes: u64,
    /// Completed messages of the current epoch.
    done: u32,
    /// Estimated ns per byte of each kind (valid once `counted` is non-zero): the mean of
    /// its last [`RECENT`] epochs without the worst one.
    estimate: [f64; 2],
    /// Figures (ns per byte) of the last [`RECENT`] counted epochs of each kind, newest
    /// first (infinite: none yet).
    recent: [[f64; RECENT]; 2],
    /// Epochs of each kind finished, the first (uncounted) one included.
    epochs: [u32; 2],
    /// Epochs since the slower kind was last probed.
    since_probe: u32,
    /// Current gap between probes.
    probe_gap: u32,
    /// The running epoch is a probe of the slower kind.
    probing: bool,
    /// The class started from a measured neighbour's choice: no warm-up, no exploration
    /// (the other kind is first measured by a probe).
    inherited: bool,
    /// The running probe was called by a slow epoch ([`SLOW_EPOCH`]): its figure replaces
    /// the probed kind's history.
    refresh: bool,
    /// The running epoch changed the kind and its first copy has not completed: that copy
    /// is not charged (see [`CopyChoice::finish`]).
    settling: bool,
}

impl Class {
    const NEW: Class = Class {
        current: CopyKind::Stream,
        active: 0,
        busy_since: 0,
        busy_ns: 0,
        bytes: 0,
        done: 0,
        estimate: [0.0; 2],
        recent: [[f64::INFINITY; RECENT]; 2],
        epochs: [0; 2],
        since_probe: 0,
        probe_gap: PROBE_GAP_MIN,
        probing: false,
        inherited: false,
        refresh: false,
        settling: false,
    };

    /// Counted epochs of `kind` (the class's first epoch, streamed, is a warm-up).
    fn counted(&self, kind: CopyKind) -> u32 {
        match kind {
            CopyKind::Stream if !self.inherited => self.epochs[0].saturating_sub(1),
            _ => self.epochs[kind as usize],
        }
    }

    /// The kind the class prefers (the current one, unless it is being probed).
    fn preferred(&self) -> CopyKind {
        if self.probing {
            self.current.other()
        } else {
            self.current
        }
    }

    /// Messages the current epoch runs.
    fn epoch_len(&self) -> u32 {
        if self.epochs == [0, 0] && !self.inherited {
            WARM_MESSAGES
        } else if self.probing || self.counted(self.current) == 0 {
            PROBE_MESSAGES
        } else {
            EPOCH_MESSAGES
        }
    }

    /// Ends the current epoch: folds its figure into the estimate of its kind and picks the
    /// kind of the next one.
    fn close_epoch(&mut self) {
        let kind = self.current;
        let warm = self.epochs == [0, 0] && !self.inherited;
        let mut slow = false;
        // An epoch charged no time (its copies all ended with the uncharged first one, or
        // went another way) has no figure and does not count: the kind runs another.
        let measured = !warm && self.bytes > 0 && self.busy_ns > 0;
        if measured {
            let sample = self.busy_ns as f64 / self.bytes as f64;
            let k = kind as usize;
            slow = !self.probing
                && self.counted(kind) > 0
                && self.counted(kind.other()) > 0
                && sample > SLOW_EPOCH * self.estimate[k];
            if self.probing && std::mem::take(&mut self.refresh) {
                self.recent[k] = [f64::INFINITY; RECENT];
            }
            self.recent[k].rotate_right(1);
            self.recent[k][0] = sample;
            self.estimate[k] = trimmed_mean(&self.recent[k]);
        }
        if warm || measured {
            self.epochs[kind as usize] += 1;
        }
        self.busy_ns = 0;
        self.bytes = 0;
        self.done = 0;
        if slow {
            // Probe the other kind now, with a fresh history.
            self.probe_gap = PROBE_GAP_MIN;
            self.since_probe = PROBE_GAP_MIN;
            self.refresh = true;
        }
        self.pick_next();
        self.refresh &= self.probing;
        self.settling = self.current != kind;
    }

    /// Picks the kind of the next epoch (exploring, running the faster kind or probing the
    /// slower).
    fn pick_next(&mut self) {
        let (s, c) = (self.counted(CopyKind::Stream), self.counted(CopyKind::Cma));
        if (s == 0 || c == 0) && !self.inherited {
            // Explore: CMA after the warm-up, then the stream.
            self.current = if c == 0 {
                CopyKind::Cma
            } else {
                CopyKind::Stream
            };
            return;
        }
        let best = match (s > 0, c > 0) {
            (true, true) if self.estimate[0] <= self.estimate[1] => CopyKind::Stream,
            (true, true) => CopyKind::Cma,
            (true, false) => CopyKind::Stream,
            (false, true) => CopyKind::Cma,
            (false, false) => self.current,
        };
        if self.probing {
            // The probe confirmed the choice: probe less often; else start over.
            self.probe_gap = if best != self.current {
                (self.probe_gap * 2).min(PROBE_GAP_MAX)
            } else {
                PROBE_GAP_MIN
            };
            self.probing = false;
            self.since_probe = 0;
        } else {
            self.since_probe += 1;
        }
        if self.since_probe >= self.probe_gap {
            self.probing = true;
            self.current = best.other();
        } else {
            self.current = best;
        }
    }
}

/// The mean of the measured figures in `recent` (infinite: none) without the largest one,
/// or the only one; infinite when there is none.
fn trimmed_mean(recent: &[f64; RECENT]) -> f64 {
    let (mut n, mut sum, mut worst) = (0u32, 0.0, f64::NEG_INFINITY);
    for &x in recent.iter().filter(|x| x.is_finite()) {
        n += 1;
        sum += x;
        worst = worst.max(x);
    }
    match n {
        0 => f64::INFINITY,
        1 => sum,
        _ => (sum - worst) / f64::from(n - 1),
    }
}

/// The size class of a message of `bytes`: `floor(log2(bytes))`.
fn class_of(bytes: usize) -> usize {
    (usize::BITS - 1 - bytes.max(1).leading_zeros()) as usize
}

/// Chooses, message by message, how a waiting sender's contiguous rendezvous is copied.
#[derive(Clone, Debug)]
pub struct CopyChoice {
    /// `Some(max)`: streamed up to `max` bytes, never measured.
    fixed: Option<usize>,
    /// Measurements by size class (`floor(log2(bytes))`).
    classes: Box<[Class; 64]>,
}

impl CopyChoice {
    /// Streams messages up to `stream_max` bytes and copies larger ones with CMA.
    pub fn fixed(stream_max: usize) -> CopyChoice {
        CopyChoice {
            fixed: Some(stream_max),
            classes: Box::new([Class::NEW; 64]),
        }
    }

    /// Measures both kinds per size class and prefers the faster.
    pub fn measured() -> CopyChoice {
        CopyChoice {
            fixed: None,
            classes: Box::new([Class::NEW; 64]),
        }
    }

    /// Whether choices depend on measurements ([`CopyChoice::start`] then
    /// [`CopyChoice::finish`] must bracket each copy).
    pub fn is_measured(&self) -> bool {
        self.fixed.is_none()
    }

    /// The kind of copy for a message of `bytes` whose sender waits, when no measurement is
    /// taken (fixed choice).
    pub fn fixed_kind(&self, bytes: usize) -> CopyKind {
        match self.fixed {
            Some(max) if bytes > max => CopyKind::Cma,
            _ => CopyKind::Stream,
        }
    }

    fn class(&mut self, bytes: usize) -> &mut Class {
        &mut self.classes[class_of(bytes)]
    }

    /// A class about to run its first message starts from the choice of the nearest class
    /// (below first) that measured both kinds, when there is one: a machine that favours
    /// one kind at 16 KiB mostly does at 1 MiB too, and probes still correct it.
    fn inherit(&mut self, bits: usize) {
        let measured = |c: &Class| c.counted(CopyKind::Stream) > 0 && c.counted(CopyKind::Cma) > 0;
        let below = (0..bits).rev().find(|&i| measured(&self.classes[i]));
        let near = below.or_else(|| (bits + 1..64).find(|&i| measured(&self.classes[i])));
        if let Some(i) = near {
            let n = &self.classes[i];
            let best = if n.estimate[0] <= n.estimate[1] {
                CopyKind::Stream
            } else {
                CopyKind::Cma
            };
            let c = &mut self.classes[bits];
            c.inherited = true;
            c.current = best;
        }
    }

    /// A copy of `bytes` starts at `now_ns`: returns its kind. Each call must be followed by
    /// one [`CopyChoice::finish`] with the same size.
    pub fn start(&mut self, bytes: usize, now_ns: i64) -> CopyKind {
        if self.fixed.is_some() {
            return self.fixed_kind(bytes);
        }
        let bits = class_of(bytes);
        if self.classes[bits].epochs == [0, 0] && self.classes[bits].done == 0 {
            self.inherit(bits);
        }
        let c = &mut self.classes[bits];
        if c.active == 0 {
            if c.done >= c.epoch_len() {
                c.close_epoch();
            }
            c.busy_since = now_ns;
        }
        c.active += 1;
        c.current
    }

    /// The copy of `bytes` that [`CopyChoice::start`] started has completed at `now_ns`.
    pub fn finish(&mut self, bytes: usize, now_ns: i64) {
        self.end(bytes, now_ns, true);
    }

    /// The copy of `bytes` that [`CopyChoice::start`] started went another way (it is not
    /// counted, but its busy time so far is).
    pub fn abandon(&mut self, bytes: usize, now_ns: i64) {
        self.end(bytes, now_ns, false);
    }

    /// A started copy ends at `now_ns`; `counted`: its bytes go into the epoch's figure.
    fn end(&mut self, bytes: usize, now_ns: i64, counted: bool) {
        if self.fixed.is_some() {
            return;
        }
        let c = self.class(bytes);
        if c.active == 0 {
            return;
        }
        c.active -= 1;
        if c.settling && counted {
            // The first copy after a change of kind moves what the other kind left in the
            // caches (a send buffer the stream read on the sender's core, which CMA copies
            // then find on the receiver's): it runs the epoch but is not charged, so that
            // each kind is judged by what it costs while it runs. Charging starts now.
            c.settling = false;
            c.done += 1;
            c.busy_ns = 0;
            c.busy_since = now_ns;
            return;
        }
        if counted {
            c.bytes += bytes as u64;
            c.done += 1;
        }
        if c.active == 0 {
            c.busy_ns += now_ns - c.busy_since;
        }
    }

    /// The `HYMPI_STATS=1` line: per measured size class, the epochs run and the estimates
    /// of each kind (`None` when nothing was measured).
    pub fn stats_line(&self, rank: i32) -> Option<String> {
        let mut parts = Vec::new();
        for (bits, c) in self.classes.iter().enumerate() {
            if c.epochs == [0, 0] {
                continue;
            }
            let est = |k: CopyKind| {
                if c.counted(k) > 0 {
                    format!("{:.3}", c.estimate[k as usize])
                } else {
                    "-".into()
                }
            };
            parts.push(format!(
                "2^{bits} B: stream {} epochs {} ns/B, cma {} epochs {} ns/B, prefers {:?}",
                c.epochs[0],
                est(CopyKind::Stream),
                c.epochs[1],
                est(CopyKind::Cma),
                c.preferred()
            ));
        }
        (!parts.is_empty()).then(|| {
            format!(
                "hympi stats: rank {rank}: rendezvous copies: {}",
                parts.join("; ")
            )
        })
    }

    /// The kind the class of `bytes` prefers now and its two estimates (ns per byte; 0 when
    /// not measured yet), for reports and tests.
    pub fn state(&mut self, bytes: usize) -> (CopyKind, [f64; 2]) {
        let c = self.class(bytes);
        let est = [CopyKind::Stream, CopyKind::Cma].map(|k| {
            if c.counted(k) > 0 {
                c.estimate[k as usize]
            } else {
                0.0
            }
        });
        (c.preferred(), est)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Runs `n` one-at-a-time copies of `bytes`, each taking `cost(kind)` ns, and returns
    /// how many took each kind.
    fn run(
        choice: &mut CopyChoice,
        bytes: usize,
        n: u32,
        mut cost: impl FnMut(CopyKind) -> i64,
    ) -> [u32; 2] {
        let mut now = 1_000;
        let mut used = [0; 2];
        for _ in 0..n {
            let kind = choice.start(bytes, now);
            used[kind as usize] += 1;
            now += cost(kind);
            choice.finish(bytes, now);
            now += 500; // idle between messages: not charged
        }
        used
    }

    #[test]
    fn fixed_choice_streams_up_to_its_limit() {
        let mut c = CopyChoice::fixed(65536);
        assert!(!c.is_measured());
        assert_eq!(c.start(65536, 0), CopyKind::Stream);
        assert_eq!(c.start(65537, 0), CopyKind::Cma);
        assert_eq!(CopyChoice::fixed(0).start(16384, 0), CopyKind::Cma);
        assert_eq!(
            CopyChoice::fixed(usize::MAX).start(1 << 30, 0),
            CopyKind::Stream
        );
    }

    #[test]
    fn measured_choice_settles_on_the_faster_kind_and_probes_the_other_rarely() {
        for (fast, slow) in [
            (CopyKind::Cma, CopyKind::Stream),
            (CopyKind::Stream, CopyKind::Cma),
        ] {
            let mut c = CopyChoice::measured();
            let cost = |k: CopyKind| if k == fast { 1_000 } else { 2_500 };
            let first = run(&mut c, 300_000, WARM_MESSAGES + 2 * PROBE_MESSAGES, cost);
            // Exploration: the streamed warm-up, then one short epoch of each kind.
            assert_eq!(first, [WARM_MESSAGES + PROBE_MESSAGES, PROBE_MESSAGES]);
            let later = run(&mut c, 300_000, 4000, cost);
            assert!(later[fast as usize] > 3800, "{fast:?} {later:?}");
            assert!(
                later[slow as usize] > 0,
                "the slower kind is probed: {later:?}"
            );
            let (pick, est) = c.state(300_000);
            assert_eq!(pick, fast);
            assert!(est[fast as usize] < est[slow as usize]);
            // Other classes are untouched.
            assert_eq!(c.state(100_000).1, [0.0, 0.0]);
        }
    }

    #[test]
    fn the_first_copy_after_a_change_of_kind_is_not_charged() {
        // CMA costs 1 us a copy once it runs, but 20 us for the first copy after streamed
        // ones; the stream always 2 us: CMA is the faster kind while it runs.
        let mut c = CopyChoice::measured();
        let (bytes, mut last) = (16_384, None);
        let used = run(&mut c, bytes, 2000, |kind| {
            let cost = match kind {
                CopyKind::Cma if last != Some(CopyKind::Cma) => 20_000,
                CopyKind::Cma => 1_000,
                CopyKind::Stream => 2_000,
            };
            last = Some(kind);
            cost
        });
        let (pick, est) = c.state(bytes);
        assert_eq!(pick, CopyKind::Cma, "{est:?}");
        assert!(used[CopyKind::Cma as usize] > 1800, "{used:?}");
        assert!((est[CopyKind::Cma as usize] * bytes as f64 - 1_000.0).abs() < 1.0);
    }

    #[test]
    fn one_disturbed_epoch_does_not_turn_the_choice() {
        let mut c = CopyChoice::measured();
        let cost = |k: CopyKind| if k == CopyKind::Cma { 1_000 } else { 2_000 };
        run(&mut c, 65_536, 400, cost);
        assert_eq!(c.state(65_536).0, CopyKind::Cma);
        // One copy descheduled for 100 us.
        let mut slow_once = Some(100_000);
        run(&mut c, 65_536, 1, |k| slow_once.take().unwrap_or(cost(k)));
        let used = run(&mut c, 65_536, 100, cost);
        assert!(used[CopyKind::Cma as usize] >= 90, "{used:?}");
        assert_eq!(c.state(65_536).0, CopyKind::Cma);
    }

    #[test]
    fn measured_choice_follows_a_change_of_costs() {
        let mut c = CopyChoice::measured();
        run(&mut c, 20_000, 400, |k| {
            if k == CopyKind::Cma {
                1_000
            } else {
                3_000
            }
        });
        assert_eq!(c.state(20_000).0, CopyKind::Cma);
        let used = run(&mut c, 20_000, 3000, |k| {
            if k == CopyKind::Cma {
                5_000
            } else {
                1_500
            }
        });
        assert_eq!(c.state(20_000).0, CopyKind::Stream);
        assert!(used[CopyKind::Stream as usize] > 2500, "{used:?}");
    }

    #[test]
    fn overlapping_copies_are_charged_their_common_busy_time_and_never_mix_kinds() {
        // Windows of 16 copies in flight at once: 16 stream copies finish together after
        // 4 us, 16 CMA copies one after the other at 1 us each (16 us). Per message the
        // stream takes longer, per byte of busy time it is 4x faster.
        let mut c = CopyChoice::measured();
        let mut now = 0;
        let mut used = [0u32; 2];
        for _ in 0..200 {
            let kinds: Vec<CopyKind> = (0..16).map(|_| c.start(1 << 20, now)).collect();
            assert!(kinds.iter().all(|&k| k == kinds[0]), "one kind per window");
            used[kinds[0] as usize] += 16;
            if kinds[0] == CopyKind::Stream {
                now += 4_000;
                for _ in 0..16 {
                    c.finish(1 << 20, now);
                }
            } else {
                for _ in 0..16 {
                    now += 1_000;
                    c.finish(1 << 20, now);
                }
            }
            now += 10_000;
        }
        assert_eq!(c.state(1 << 20).0, CopyKind::Stream);
        assert!(
            used[CopyKind::Stream as usize] > 2 * used[CopyKind::Cma as usize],
            "{used:?}"
        );
    }

    #[test]
    fn a_new_class_starts_from_a_measured_neighbour_and_still_probes() {
        let mut c = CopyChoice::measured();
        let cost = |k: CopyKind| if k == CopyKind::Cma { 1_000 } else { 4_000 };
        run(&mut c, 16384, 100, cost);
        assert_eq!(c.state(16384).0, CopyKind::Cma);
        // 64 KiB: no warm-up, no exploration: CMA from the first message on.
        let before_probe = PROBE_MESSAGES + (PROBE_GAP_MIN - 1) * EPOCH_MESSAGES;
        let first = run(&mut c, 65536, before_probe, cost);
        assert_eq!(first, [0, before_probe]);
        let later = run(&mut c, 65536, 400, cost);
        assert!(later[CopyKind::Stream as usize] > 0, "probed: {later:?}");
        assert!(c.state(65536).1[0] > 0.0, "the probe measured the stream");
        assert_eq!(c.state(65536).0, CopyKind::Cma);
        // A class whose inherited choice is wrong turns round after its first probe.
        let mut c = CopyChoice::measured();
        run(&mut c, 16384, 100, cost);
        let flipped = |k: CopyKind| if k == CopyKind::Stream { 1_000 } else { 4_000 };
        let used = run(&mut c, 1 << 20, 400, flipped);
        assert_eq!(c.state(1 << 20).0, CopyKind::Stream);
        assert!(used[CopyKind::Stream as usize] > 200, "{used:?}");
    }

    /// Under a competing load a kind can be slow most of the time and clean now and then:
    /// the choice follows what it costs on the whole, not its best moments. The stream is
    /// the faster kind on the quiet machine (so the probes of CMA become rare), then a
    /// descheduling makes one streamed run of 16 copies in four 40x slower (10.75 us a copy
    /// on average), while CMA, which needs only the receiver running, costs 3 us.
    #[test]
    fn a_kind_slowed_most_of_the_time_is_left_even_if_some_epochs_are_clean() {
        let mut c = CopyChoice::measured();
        let quiet = |k: CopyKind| if k == CopyKind::Stream { 1_000 } else { 1_500 };
        run(&mut c, 1 << 20, 6000, quiet);
        assert_eq!(c.state(1 << 20).0, CopyKind::Stream);
        let mut streamed = 0u32;
        let loaded = |k: CopyKind| {
            if k == CopyKind::Cma {
                return 3_000;
            }
            streamed += 1;
            if (streamed / 16).is_multiple_of(4) {
                40_000
            } else {
                1_000
            }
        };
        let used = run(&mut c, 1 << 20, 4000, loaded);
        assert_eq!(c.state(1 << 20).0, CopyKind::Cma, "{used:?}");
        assert!(used[CopyKind::Cma as usize] > 3000, "{used:?}");
    }

    /// A kind whose epoch comes out far slower than its estimate gets the other kind probed
    /// at once, however long the gap between probes had grown: a change of load is noticed
    /// within an epoch or two, not after hundreds.
    #[test]
    fn a_slow_epoch_probes_the_other_kind_at_once() {
        // Quiet: the stream 1 us a copy, CMA 5 us; the probes of CMA grow rare.
        let mut c = CopyChoice::measured();
        let quiet = |k: CopyKind| if k == CopyKind::Stream { 1_000 } else { 5_000 };
        run(&mut c, 1 << 20, 8000, quiet);
        assert_eq!(c.state(1 << 20).0, CopyKind::Stream);
        // Loaded: the stream 4 us, CMA 2 us. CMA's figures from the quiet machine (5 us)
        // would keep the stream until the next probe, hundreds of epochs away.
        let loaded = |k: CopyKind| if k == CopyKind::Stream { 4_000 } else { 2_000 };
        let used = run(&mut c, 1 << 20, 2 * EPOCH_MESSAGES, loaded);
        assert!(used[CopyKind::Cma as usize] > 0, "probed: {used:?}");
        let used = run(&mut c, 1 << 20, 400, loaded);
        assert_eq!(c.state(1 << 20).0, CopyKind::Cma, "{used:?}");
        assert!(used[CopyKind::Cma as usize] > 300, "{used:?}");
    }

    #[test]
    fn a_finish_without_a_start_is_ignored() {
        let mut c = CopyChoice::measured();
        c.finish(4096, 10);
        assert_eq!(c.start(4096, 20), CopyKind::Stream);
        c.finish(4096, 30);
        c.finish(4096, 40);
        assert_eq!(c.start(4096, 50), CopyKind::Stream);
    }
}
