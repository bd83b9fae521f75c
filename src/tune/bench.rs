//! Where the tuner's measurements come from: anything that times one algorithm at one point
//! ([`Bench`]); the simulator ([`Simulated`]) for layouts this machine does not have. Real
//! runs on ranks of this machine live in `hympi-tune` (they launch jobs).

use super::space::Layout;
use crate::coll::tuning::Coll;
use crate::sim::{self, Algorithm, Call, Model, Options};

/// Times collective `coll` run by `algo` with `bytes` per rank on `layout`.
pub trait Bench {
    /// Microseconds per call (`None`: the algorithm cannot run there).
    fn measure(
        &mut self,
        coll: Coll,
        layout: Layout,
        bytes: usize,
        algo: &Algorithm,
    ) -> Result<Option<f64>, String>;
}

/// Measurements predicted by the schedule simulator under a machine model.
pub struct Simulated {
    /// The machine's parameters.
    pub model: Model,
}

impl Bench for Simulated {
    fn measure(
        &mut self,
        coll: Coll,
        layout: Layout,
        bytes: usize,
        algo: &Algorithm,
    ) -> Result<Option<f64>, String> {
        let call = Call {
            coll,
            algo: algo.clone(),
            bytes,
            root: 0,
        };
        let m = layout.machine();
        if sim::build::check(&call, &m).is_err() {
            return Ok(None);
        }
        sim::run(&call, &m, &self.model, Options::default()).map(|o| Some(o.time() * 1e6))
    }
}

/// Measurements by a function (tests, and cost models given as formulas).
pub struct Formula<F>(pub F);

impl<F: FnMut(Layout, usize, &Algorithm) -> Option<f64>> Bench for Formula<F> {
    fn measure(
        &mut self,
        _: Coll,
        layout: Layout,
        bytes: usize,
        algo: &Algorithm,
    ) -> Result<Option<f64>, String> {
        Ok((self.0)(layout, bytes, algo))
    }
}
