//! A random forest regressor whose trees answer one by one: bagged CART trees from
//! `smartcore` (each fitted on a bootstrap resample of the data), so that the tuner can take
//! the jackknife variance over the trees (Wager, Hastie and Efron 2014), which ACCLAiM uses to
//! pick the next point to measure. `smartcore`'s own `RandomForestRegressor` only returns the
//! mean.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use smartcore::linalg::basic::matrix::DenseMatrix;
use smartcore::tree::decision_tree_regressor::{
    DecisionTreeRegressor, DecisionTreeRegressorParameters,
};

type Tree = DecisionTreeRegressor<f64, f64, DenseMatrix<f64>, Vec<f64>>;

/// A fitted forest.
pub struct Forest {
    trees: Vec<Tree>,
}

/// Mean and jackknife variance of the trees' predictions for one input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// The forest's prediction: the mean over the trees.
    pub mean: f64,
    /// `sum_i (mean - mean_without_i)^2 / (n - 1)` over the `n` trees.
    pub variance: f64,
}

impl Forest {
    /// Fits `n_trees` trees to rows `x` (all of one width) and targets `y`, each on a
    /// bootstrap resample drawn with `seed`.
    pub fn fit(x: &[Vec<f64>], y: &[f64], n_trees: usize, seed: u64) -> Result<Forest, String> {
        if x.is_empty() || x.len() != y.len() {
            return Err(format!("{} rows and {} targets", x.len(), y.len()));
        }
        let mut rng = SmallRng::seed_from_u64(seed);
        let n = x.len();
        let mut trees = Vec::with_capacity(n_trees);
        for _ in 0..n_trees.max(2) {
            let pick: Vec<usize> = (0..n).map(|_| rng.gen_range(0..n)).collect();
            let rows: Vec<Vec<f64>> = pick.iter().map(|&i| x[i].clone()).collect();
            let targets: Vec<f64> = pick.iter().map(|&i| y[i]).collect();
            let m = DenseMatrix::from_2d_vec(&rows).map_err(|e| e.to_string())?;
            let params = DecisionTreeRegressorParameters::default().with_min_samples_leaf(1);
            trees.push(Tree::fit(&m, &targets, params).map_err(|e| e.to_string())?);
        }
        Ok(Forest { trees })
    }

    /// Number of trees.
    pub fn len(&self) -> usize {
        self.trees.len()
    }

    /// Whether the forest has no trees (never, once fitted).
    pub fn is_empty(&self) -> bool {
        self.trees.is_empty()
    }

    /// Every tree's prediction for every row of `x`: `out[row][tree]`.
    pub fn predict_each(&self, x: &[Vec<f64>]) -> Result<Vec<Vec<f64>>, String> {
        if x.is_empty() {
            return Ok(Vec::new());
        }
        let m = DenseMatrix::from_2d_vec(&x.to_vec()).map_err(|e| e.to_string())?;
        let mut out = vec![Vec::with_capacity(self.trees.len()); x.len()];
        for t in &self.trees {
            let p = t.predict(&m).map_err(|e| e.to_string())?;
            for (row, v) in out.iter_mut().zip(p) {
                row.push(v);
            }
        }
        Ok(out)
    }

    /// Mean and jackknife variance for every row of `x`.
    pub fn estimate(&self, x: &[Vec<f64>]) -> Result<Vec<Estimate>, String> {
        Ok(self.predict_each(x)?.iter().map(|p| jackknife(p)).collect())
    }
}

/// Mean and jackknife variance of the predictions `p` of `n` trees: with `x_i` the mean
/// without tree `i`, `sum_i (mean - x_i)^2 / (n - 1)`.
pub fn jackknife(p: &[f64]) -> Estimate {
    let n = p.len();
    if n < 2 {
        return Estimate {
            mean: p.first().copied().unwrap_or(0.0),
            variance: 0.0,
        };
    }
    let sum: f64 = p.iter().sum();
    let mean = sum / n as f64;
    let variance = p
        .iter()
        .map(|v| {
            let without = (sum - v) / (n - 1) as f64;
            (mean - without).powi(2)
        })
        .sum::<f64>()
        / (n - 1) as f64;
    Estimate { mean, variance }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jackknife_matches_the_closed_form() {
        // x_i - mean = (mean - p_i) / (n - 1), so the variance is
        // sum (p_i - mean)^2 / (n - 1)^3.
        let p = [1.0, 2.0, 4.0, 9.0];
        let e = jackknife(&p);
        assert!((e.mean - 4.0).abs() < 1e-12);
        let ss: f64 = p.iter().map(|v| (v - 4.0) * (v - 4.0)).sum();
        assert!((e.variance - ss / 27.0).abs() < 1e-12, "{}", e.variance);
        assert_eq!(jackknife(&[3.0, 3.0, 3.0]).variance, 0.0);
    }

    #[test]
    fn forest_learns_a_step_and_is_unsure_away_from_data() {
        // y = 0 below x = 5, 1 above; data only at the ends.
        let x: Vec<Vec<f64>> = (0..10).map(|i| vec![i as f64]).collect();
        let y: Vec<f64> = (0..10).map(|i| if i < 5 { 0.0 } else { 1.0 }).collect();
        let f = Forest::fit(&x, &y, 30, 7).unwrap();
        assert_eq!(f.len(), 30);
        let e = f.estimate(&[vec![1.0], vec![8.0]]).unwrap();
        assert!(e[0].mean < 0.2 && e[1].mean > 0.8, "{e:?}");
        // Near the step the bootstraps disagree more than far from it.
        let near = f.estimate(&[vec![4.5]]).unwrap()[0];
        assert!(near.variance > e[0].variance, "{near:?} vs {:?}", e[0]);
    }
}
