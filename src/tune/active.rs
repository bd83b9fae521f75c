//! ACCLAiM's active-learning loop (Wilkins, thesis §3.8-3.9; digest in
//! `../shared/papers/acclaim-autotuning-generalized-algorithms.md`): one random forest per
//! collective with the algorithm as a feature; the next point to measure is the unmeasured
//! power-of-two point where the trees disagree most on the winner plus a weighted share of
//! the jackknife variance of their predictions; every 5th point is a non-power-of-two size
//! near it; the loop has converged when the table it would write stops changing significantly.
//!
//! A *point* is a layout and a size; measuring it times every candidate algorithm there.
//! The forest learns `log10(t / t_best)`, each algorithm's time over the point's fastest
//! (ACCLAiM's output scaling).

use super::bench::Bench;
use super::forest::{jackknife, Forest};
use super::space::{Layout, Space};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::VecDeque;

/// Weight of a point's summed variance (over the grid's largest) beside the trees'
/// disagreement on its winner when choosing the next point: exploration where the trees
/// agree on the winner but not on the times. On the simulated grid of docs/tuner.md, 0.3
/// made fewer mistakes overall than pure variance (ACCLAiM's rule) or pure disagreement.
pub const VARIANCE_WEIGHT: f64 = 0.3;

/// A choice is a significant change when its predicted time is more than this factor over
/// the newest choice's: ACCLAiM's significant mistake (10 %).
pub const SIGNIFICANT: f64 = 1.1;

/// What the fitted forest says about every grid point.
struct Assessment {
    /// The summed jackknife variance of the applicable algorithms' predictions.
    variance: Vec<f64>,
    /// The share of the trees whose winner is not the trees' most frequent winner.
    disagreement: Vec<f64>,
    /// The row (of `predictions`) of the lowest mean prediction.
    choice: Vec<usize>,
    /// The mean prediction of every applicable (point, algorithm) row, in grid order.
    predictions: Vec<f64>,
}

/// The loop's knobs.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Trees per forest.
    pub trees: usize,
    /// Most points to measure (the loop also stops when every grid point is measured).
    pub budget: usize,
    /// Window of the convergence test (ACCLAiM: four iterations; 6 here): see
    /// [`Tuner::converged`].
    pub stable_iterations: usize,
    /// Share of the grid points at which the window's fits may still choose significantly
    /// differently from the newest one (0: never converges): see [`Tuner::converged`].
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
            stable_iterations: 6,
            tolerance: 0.01,
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
    /// The forest's choice per grid point after each of the last `stable_iterations + 1`
    /// fits (an index into `predictions`' rows).
    choices: VecDeque<Vec<usize>>,
    /// The newest fit's prediction of every row of [`Assessment::predictions`].
    predictions: Vec<f64>,
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
            choices: VecDeque::new(),
            predictions: Vec::new(),
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

    /// What the fitted forest says about every grid point ([`Assessment`]).
    fn assess(&self) -> Result<Assessment, String> {
        let forest = self.forest.as_ref().ok_or("not fitted")?;
        let points = self.space.points();
        let mut rows = Vec::new();
        let mut owner = Vec::new();
        for i in 0..points {
            let (l, b) = self.space.point(i);
            for a in 0..self.space.algos.len() {
                if self.space.applies(a, l, b) {
                    rows.push(self.space.features(l, b, a));
                    owner.push(i);
                }
            }
        }
        let each = forest.predict_each(&rows)?;
        let trees = forest.len();
        let mut variance = vec![0.0; points];
        // Per point: the row of the lowest mean, and per tree the row of its lowest prediction.
        let mut choice = vec![(f64::INFINITY, usize::MAX); points];
        let mut tree_low = vec![vec![(f64::INFINITY, usize::MAX); trees]; points];
        let mut predictions = Vec::with_capacity(each.len());
        for (r, (p, &i)) in each.iter().zip(&owner).enumerate() {
            let e = jackknife(p);
            predictions.push(e.mean);
            variance[i] += e.variance;
            if e.mean < choice[i].0 {
                choice[i] = (e.mean, r);
            }
            for (low, &y) in tree_low[i].iter_mut().zip(p) {
                if y < low.0 {
                    *low = (y, r);
                }
            }
        }
        let disagreement = tree_low
            .iter()
            .map(|lows| {
                let mut votes: Vec<(usize, usize)> = Vec::new();
                for &(_, r) in lows {
                    match votes.iter_mut().find(|v| v.0 == r) {
                        Some(v) => v.1 += 1,
                        None => votes.push((r, 1)),
                    }
                }
                let top = votes.iter().map(|v| v.1).max().unwrap_or(0);
                1.0 - top as f64 / trees.max(1) as f64
            })
            .collect();
        Ok(Assessment {
            variance,
            disagreement,
            choice: choice.iter().map(|c| c.1).collect(),
            predictions,
        })
    }

    /// One iteration: fit, record the cumulative variance and the choices, measure the
    /// unmeasured point where the trees disagree most on the winner, the summed variance
    /// (scaled to the grid's largest, weighted [`VARIANCE_WEIGHT`]) added (or, every
    /// `non_pow2_every`-th point, a non-power-of-two size near it). Returns `false` when no
    /// grid point is left to measure.
    pub fn step(&mut self, bench: &mut dyn Bench) -> Result<bool, String> {
        self.fit()?;
        let a = self.assess()?;
        self.history.push(a.variance.iter().sum());
        let largest = a.variance.iter().copied().fold(f64::MIN_POSITIVE, f64::max);
        let score = |i: usize| a.disagreement[i] + VARIANCE_WEIGHT * a.variance[i] / largest;
        let Some(next) = (0..a.variance.len())
            .filter(|&i| !self.measured[i])
            .max_by(|&a, &b| score(a).total_cmp(&score(b)))
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
        self.choices.push_back(a.choice);
        while self.choices.len() > self.settings.stable_iterations + 1 {
            self.choices.pop_front();
        }
        self.predictions = a.predictions;
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

    /// Whether the table stopped changing: none of the choices of the last
    /// `stable_iterations` fits before the newest one differs from the newest one
    /// significantly (its predicted time more than [`SIGNIFICANT`] over the newest choice's,
    /// by the newest fit) at `tolerance` of the grid points or more. ACCLAiM asks four
    /// consecutive changes of the cumulative variance below 1e-9; a forest refitted on
    /// fresh bootstrap resamples every iteration keeps that sum noisy, and a noisy sum's
    /// first plateau stopped the loop with a fifth of the grid's choices still wrong.
    /// `tolerance` 0 never converges.
    pub fn converged(&self) -> bool {
        let n = self.settings.stable_iterations;
        if n == 0 || self.choices.len() < n + 1 {
            return false;
        }
        let Some(newest) = self.choices.back() else {
            return false;
        };
        let p = &self.predictions;
        let significant = SIGNIFICANT.log10();
        let worst = self
            .choices
            .iter()
            .rev()
            .skip(1)
            .take(n)
            .map(|old| {
                old.iter()
                    .zip(newest)
                    .filter(|&(&o, &c)| o != c && p[o] - p[c] > significant)
                    .count()
            })
            .max()
            .unwrap_or(0);
        (worst as f64) < self.settings.tolerance * newest.len() as f64
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coll::tuning::Coll;

    /// A tuner whose last fits chose `choices` (100 points each; the space itself does not
    /// matter to the test).
    fn with_choices(window: usize, tolerance: f64, choices: &[Vec<usize>]) -> Tuner {
        let algos = ["knomial"].map(String::from);
        let space = Space::new(Coll::Bcast, &[1], &[2], 1, 8, Some(&algos), &[2]).unwrap();
        let mut t = Tuner::new(
            space,
            Settings {
                stable_iterations: window,
                tolerance,
                ..Settings::default()
            },
        );
        t.choices = choices.iter().cloned().collect();
        // Rows 0..100 predicted 0 (the best), rows 100..200 5 % over, 200.. 50 % over.
        t.predictions = (0..300)
            .map(|r| match r / 100 {
                0 => 0.0,
                1 => 1.05f64.log10(),
                _ => 1.5f64.log10(),
            })
            .collect();
        t
    }

    #[test]
    fn converges_when_no_choice_of_the_window_changed_significantly() {
        let newest: Vec<usize> = (0..100).collect();
        // Two choices of an older fit 5 % slower (not significant), one 50 % (significant).
        let mut old = newest.clone();
        old[3] = 103;
        old[4] = 104;
        let near = with_choices(2, 0.02, &[old.clone(), old.clone(), newest.clone()]);
        assert!(near.converged(), "changes within 10 % are not significant");
        old[5] = 205;
        // One significant change in 100 points: under 2 %, over 1 %.
        let one = with_choices(2, 0.02, &[old.clone(), newest.clone(), newest.clone()]);
        assert!(one.converged());
        let strict = with_choices(2, 0.01, &[old.clone(), newest.clone(), newest.clone()]);
        assert!(!strict.converged(), "1 of 100 is not under 1 %");
        // Too few fits for the window, and tolerance 0, never converge.
        assert!(
            !with_choices(3, 0.5, &[newest.clone(), newest.clone(), newest.clone()]).converged()
        );
        assert!(
            !with_choices(2, 0.0, &[newest.clone(), newest.clone(), newest.clone()]).converged()
        );
        // Only the last `window` fits before the newest count.
        let outside = with_choices(2, 0.01, &[old, newest.clone(), newest.clone(), newest]);
        assert!(outside.converged());
    }
}
