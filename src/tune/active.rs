//! ACCLAiM's active-learning loop (Wilkins, thesis §3.8-3.9; digest in
//! `../shared/papers/acclaim-autotuning-generalized-algorithms.md`): one random forest per
//! collective with the algorithm as a feature; the next point to measure is the unmeasured
//! power-of-two point whose predictions vary most over the trees (jackknife variance);
//! every 5th point is a non-power-of-two size near it; the loop has converged when the
//! cumulative variance over the grid stops changing.
//!
//! A *point* is a layout and a size; measuring it times every candidate algorithm there.
//! The forest learns `log10(t / t_best)`, each algorithm's time over the point's fastest
//! (ACCLAiM's output scaling).

use super::bench::Bench;
use super::forest::Forest;
use super::space::{Layout, Space};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// The loop's knobs.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Trees per forest.
    pub trees: usize,
    /// Most points to measure (the loop also stops when every grid point is measured).
    pub budget: usize,
    /// Window of the convergence test (ACCLAiM: four iterations): see [`Tuner::converged`].
    pub stable_iterations: usize,
    /// Relative change of the cumulative variance between two windows that counts as none.
    pub tolerance: f64,
    /// Every this many points, a non-power-of-two size (ACCLAiM: 5; 0: never).
    pub non_pow2_every: usize,
    /// Seed of the bootstrap and of the non-power-of-two sizes.
    pub seed: u64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            trees: 32,
            budget: usize::MAX,
            stable_iterations: 4,
            tolerance: 0.03,
            non_pow2_every: 5,
            seed: 1,
        }
    }
}

/// One measured point: every candidate's time (µs; `None` where it cannot run).
#[derive(Clone, Debug)]
pub struct Sample {
    /// Layout.
    pub layout: Layout,
    /// Bytes per rank.
    pub bytes: usize,
    /// Time of each of [`Space::algos`].
    pub times: Vec<Option<f64>>,
}

impl Sample {
    /// The fastest time measured here.
    pub fn best(&self) -> Option<f64> {
        self.times.iter().flatten().copied().reduce(f64::min)
    }
}

/// Why the loop stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The cumulative variance settled.
    Converged,
    /// The point budget ran out.
    Budget,
    /// Every point of the grid is measured.
    Exhausted,
}

/// The tuner of one collective: the samples so far and the forest fitted to them.
pub struct Tuner {
    /// The feature space.
    pub space: Space,
    /// The knobs.
    pub settings: Settings,
    /// Measured points, in measurement order.
    pub samples: Vec<Sample>,
    /// Cumulative variance after each fit.
    pub history: Vec<f64>,
    /// Microseconds of collective time spent measuring (the sum of the timed calls).
    pub cost_us: f64,
    measured: Vec<bool>,
    forest: Option<Forest>,
    rng: SmallRng,
}

impl Tuner {
    /// A tuner with nothing measured.
    pub fn new(space: Space, settings: Settings) -> Tuner {
        let n = space.points();
        let rng = SmallRng::seed_from_u64(settings.seed);
        Tuner {
            space,
            settings,
            samples: Vec::new(),
            history: Vec::new(),
            cost_us: 0.0,
            measured: vec![false; n],
            forest: None,
            rng,
        }
    }

    /// Grid points measured so far.
    pub fn grid_measured(&self) -> usize {
        self.measured.iter().filter(|&&m| m).count()
    }

    /// Measures every candidate algorithm at `bytes` on `layout`.
    pub fn measure(
        &mut self,
        bench: &mut dyn Bench,
        layout: Layout,
        bytes: usize,
    ) -> Result<(), String> {
        let mut times = Vec::with_capacity(self.space.algos.len());
        for a in 0..self.space.algos.len() {
            let t = if self.space.applies(a, layout, bytes) {
                bench.measure(self.space.coll, layout, bytes, &self.space.algos[a])?
            } else {
                None
            };
            self.cost_us += t.unwrap_or(0.0);
            times.push(t.filter(|t| t.is_finite() && *t > 0.0));
        }
        if let Some(i) = self.grid_index(layout, bytes) {
            self.measured[i] = true;
        }
        self.samples.push(Sample {
            layout,
            bytes,
            times,
        });
        Ok(())
    }

    fn grid_index(&self, layout: Layout, bytes: usize) -> Option<usize> {
        let l = self.space.layouts.iter().position(|&x| x == layout)?;
        let s = self.space.sizes.iter().position(|&x| x == bytes)?;
        Some(l * self.space.sizes.len() + s)
    }

    /// Fits the forest to the samples.
    pub fn fit(&mut self) -> Result<(), String> {
        let mut x = Vec::new();
        let mut y = Vec::new();
        for s in &self.samples {
            let Some(best) = s.best() else { continue };
            for (a, t) in s.times.iter().enumerate() {
                if let Some(t) = t {
                    x.push(self.space.features(s.layout, s.bytes, a));
                    y.push((t / best).log10());
                }
            }
        }
        if x.is_empty() {
            return Err("no measurement yet".into());
        }
        let seed = self.settings.seed ^ (self.samples.len() as u64) << 20;
        self.forest = Some(Forest::fit(&x, &y, self.settings.trees, seed)?);
        Ok(())
    }

    /// Per grid point, the summed jackknife variance of the applicable algorithms.
    fn variances(&self) -> Result<Vec<f64>, String> {
        let forest = self.forest.as_ref().ok_or("not fitted")?;
        let mut rows = Vec::new();
        let mut owner = Vec::new();
        for i in 0..self.space.points() {
            let (l, b) = self.space.point(i);
            for a in 0..self.space.algos.len() {
                if self.space.applies(a, l, b) {
                    rows.push(self.space.features(l, b, a));
                    owner.push(i);
                }
            }
        }
        let mut v = vec![0.0; self.space.points()];
        for (e, i) in forest.estimate(&rows)?.iter().zip(owner) {
            v[i] += e.variance;
        }
        Ok(v)
    }

    /// One iteration: fit, record the cumulative variance, measure the point of highest
    /// variance (or, every `non_pow2_every`-th point, a non-power-of-two size near it).
    /// Returns `false` when no grid point is left to measure.
    pub fn step(&mut self, bench: &mut dyn Bench) -> Result<bool, String> {
        self.fit()?;
        let v = self.variances()?;
        self.history.push(v.iter().sum());
        let Some(next) = (0..v.len())
            .filter(|&i| !self.measured[i])
            .max_by(|&a, &b| v[a].total_cmp(&v[b]))
        else {
            return Ok(false);
        };
        let (layout, mut bytes) = self.space.point(next);
        let every = self.settings.non_pow2_every;
        if every > 0 && (self.samples.len() + 1).is_multiple_of(every) {
            if let Some(b) = self.near(bytes) {
                bytes = b;
            }
        }
        self.measure(bench, layout, bytes)?;
        Ok(true)
    }

    /// A random size that is not a power of two between 3/4 and 3/2 of `bytes`.
    fn near(&mut self, bytes: usize) -> Option<usize> {
        let (lo, hi) = (bytes * 3 / 4, bytes * 3 / 2);
        let options: Vec<usize> = (lo.max(1)..=hi).filter(|s| !s.is_power_of_two()).collect();
        if options.is_empty() {
            return None;
        }
        Some(options[self.rng.gen_range(0..options.len())])
    }

    /// Whether the cumulative variance stopped changing: the mean of its last
    /// `stable_iterations` values is within `tolerance` of the mean of the ones before.
    /// (ACCLAiM asks four consecutive changes below 1e-9; a forest refitted on bootstrap
    /// resamples every iteration makes the sum noisy, so the means of two windows are
    /// compared instead.)
    pub fn converged(&self) -> bool {
        let n = self.settings.stable_iterations;
        if n == 0 || self.history.len() < 2 * n {
            return false;
        }
        let h = &self.history[self.history.len() - 2 * n..];
        let before: f64 = h[..n].iter().sum::<f64>() / n as f64;
        let after: f64 = h[n..].iter().sum::<f64>() / n as f64;
        (after - before).abs() <= self.settings.tolerance * before.abs().max(1e-12)
    }

    /// Runs the loop: a first measurement at the corners of the grid, then [`Tuner::step`]
    /// until convergence, the budget or the end of the grid; `progress(tuner)` after each
    /// point. Leaves the forest fitted to every sample.
    pub fn run(
        &mut self,
        bench: &mut dyn Bench,
        mut progress: impl FnMut(&Tuner),
    ) -> Result<Stop, String> {
        let (first, last) = (self.space.layouts[0], *self.space.layouts.last().unwrap());
        let (small, big) = (self.space.sizes[0], *self.space.sizes.last().unwrap());
        let mut corners = vec![(first, small), (last, big), (first, big), (last, small)];
        corners.dedup();
        for (l, b) in corners {
            if self.samples.len() >= self.settings.budget {
                break;
            }
            if self.grid_index(l, b).is_some_and(|i| !self.measured[i]) {
                self.measure(bench, l, b)?;
                progress(self);
            }
        }
        let stop = loop {
            if self.samples.len() >= self.settings.budget {
                break Stop::Budget;
            }
            if self.converged() {
                break Stop::Converged;
            }
            if !self.step(bench)? {
                break Stop::Exhausted;
            }
            progress(self);
        };
        self.fit()?;
        Ok(stop)
    }

    /// The predicted `log10(t / t_best)` of every algorithm at `bytes` on `layout`, `None`
    /// for those that cannot run there. A measured point answers with its measurements.
    pub fn predict(&self, layout: Layout, bytes: usize) -> Result<Vec<Option<f64>>, String> {
        if let Some(s) = self
            .samples
            .iter()
            .rev()
            .find(|s| s.layout == layout && s.bytes == bytes)
        {
            if let Some(best) = s.best() {
                return Ok(s
                    .times
                    .iter()
                    .map(|t| t.map(|t| (t / best).log10()))
                    .collect());
            }
        }
        let forest = self.forest.as_ref().ok_or("not fitted")?;
        let apply: Vec<usize> = (0..self.space.algos.len())
            .filter(|&a| self.space.applies(a, layout, bytes))
            .collect();
        let rows: Vec<Vec<f64>> = apply
            .iter()
            .map(|&a| self.space.features(layout, bytes, a))
            .collect();
        let mut out = vec![None; self.space.algos.len()];
        for (e, a) in forest.estimate(&rows)?.iter().zip(apply) {
            out[a] = Some(e.mean);
        }
        Ok(out)
    }

    /// The algorithm the tuner picks at `bytes` on `layout` among those for which `allow`
    /// holds (index into [`Space::algos`]).
    pub fn best(
        &self,
        layout: Layout,
        bytes: usize,
        allow: impl Fn(usize) -> bool,
    ) -> Result<Option<usize>, String> {
        let p = self.predict(layout, bytes)?;
        Ok((0..p.len())
            .filter(|&a| allow(a))
            .filter_map(|a| p[a].map(|v| (a, v)))
            .min_by(|x, y| x.1.total_cmp(&y.1))
            .map(|(a, _)| a))
    }
}
