//! `hympi-sim calibrate`: measures this machine with hympi itself and fits the simulator's
//! parameter set (`hympi::sim::calibrate`):
//! 1. ping-pong on the node and between two virtual nodes (`latency`), the 8-byte message
//!    rate of a window (`bandwidth`), bidirectional against unidirectional bandwidth at
//!    64 KiB (`bibw`, `bandwidth`: how much the two directions slow each other down), `MPI_Reduce_local` and `memcpy` speeds
//!    (`reduce_local`, `memcpy_ceiling`), and the contention-aware CMA model
//!    (`platform::cma_calibrate`: concurrent single-copy reads of one process's pages);
//! 2. the links, the single-copy line and the local steps from those;
//! 3. the software cost per call and per round by least squares over 8-byte to 1-KiB
//!    collectives with forced algorithms on 2 ranks of the node (one rank per core: more
//!    ranks than cores time the scheduler, not the library).

use hympi::coll::tuning::Coll;
use hympi::platform::config::{self, Knob};
use hympi::sim::calibrate::{self, Measured, Timed};
use hympi::sim::{Algorithm, Call, Machine, Model};
use hympi::tune::real::{median, output, rows, Real};
use hympi::tune::{Bench, Layout};
use std::path::PathBuf;
use std::process::Command;

/// The programs of `benches/c` calibrate runs, compiled into `--programs`.
const PROGRAMS: [&str; 7] = [
    "latency",
    "bandwidth",
    "bibw",
    "reduce_local",
    "memcpy_ceiling",
    "coll_move",
    "allreduce",
];

/// Ping-pong sizes: the eager range and the single-copy range.
const SIZES: &str = "0,8,64,512,1024,4096,16384,65536,262144,1048576";

/// The collectives the software costs are fitted to (2 ranks on the node): one-round and
/// multi-round schedules, 8 B and 1 KiB.
const SOFTWARE: [(Coll, &str, usize); 10] = [
    (Coll::Bcast, "knomial", 8),
    (Coll::Bcast, "scatter_allgather", 1024),
    (Coll::Allreduce, "knomial", 8),
    (Coll::Allreduce, "recursive_doubling", 8),
    (Coll::Allreduce, "ring", 1024),
    (Coll::Allgather, "ring", 8),
    (Coll::Allgather, "bruck", 1024),
    (Coll::Gather, "binomial", 8),
    (Coll::Scatter, "binomial", 1024),
    (Coll::Alltoall, "pairwise", 8),
];

/// `calibrate`'s options.
pub struct Options {
    programs: PathBuf,
    exec: PathBuf,
    reps: usize,
    out: Option<String>,
    cma: bool,
}

/// Parses `--programs DIR [--exec PATH] [--reps N] [--out FILE] [--no-cma]`.
pub fn parse(argv: &[String]) -> Result<Options, String> {
    let mut o = Options {
        programs: PathBuf::new(),
        exec: std::env::current_exe()
            .map_err(|e| e.to_string())?
            .with_file_name("hympiexec"),
        reps: 3,
        out: None,
        cma: true,
    };
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        if flag == "--no-cma" {
            o.cma = false;
            continue;
        }
        let v = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--programs" => o.programs = PathBuf::from(v),
            "--exec" => o.exec = PathBuf::from(v),
            "--reps" => {
                o.reps = v
                    .parse()
                    .map_err(|_| format!("--reps: `{v}` is not a number"))?
            }
            "--out" => o.out = Some(v.clone()),
            _ => return Err(format!("unknown option {flag} for calibrate")),
        }
    }
    if o.programs.as_os_str().is_empty() {
        return Err("calibrate needs --programs DIR (benches/sim-validate/run builds it)".into());
    }
    for p in PROGRAMS {
        if !o.programs.join(p).exists() {
            return Err(format!(
                "{} has no `{p}` (compile benches/c/{p}.c into it)",
                o.programs.display()
            ));
        }
    }
    Ok(o)
}

impl Options {
    /// `hympiexec -n ranks [-ppn 1] program args...`'s output rows, one run.
    fn job(
        &self,
        ranks: usize,
        nodes: bool,
        program: &str,
        args: &[&str],
    ) -> Result<Vec<Vec<f64>>, String> {
        let mut c = Command::new(&self.exec);
        c.arg("-n").arg(ranks.to_string());
        if nodes {
            c.arg("-ppn").arg("1");
        }
        c.arg(self.programs.join(program)).args(args);
        Ok(rows(&output(c, program)?))
    }

    /// Column `col` of each row, the median over `reps` runs, keyed by the first column.
    fn medians(
        &self,
        ranks: usize,
        nodes: bool,
        program: &str,
        args: &[&str],
        col: usize,
    ) -> Result<Vec<(f64, f64)>, String> {
        let mut runs = Vec::new();
        for _ in 0..self.reps.max(1) {
            runs.push(self.job(ranks, nodes, program, args)?);
        }
        let keys: Vec<f64> = runs[0]
            .iter()
            .filter(|r| r.len() > col)
            .map(|r| r[0])
            .collect();
        Ok(keys
            .into_iter()
            .map(|k| {
                let v = runs
                    .iter()
                    .filter_map(|run| run.iter().find(|r| r[0] == k && r.len() > col))
                    .map(|r| r[col])
                    .collect();
                (k, median(v))
            })
            .collect())
    }

    /// The single value of a one-row measurement.
    fn one(
        &self,
        ranks: usize,
        nodes: bool,
        program: &str,
        args: &[&str],
        col: usize,
    ) -> Result<f64, String> {
        self.medians(ranks, nodes, program, args, col)?
            .first()
            .map(|p| p.1)
            .ok_or_else(|| format!("{program} printed no result"))
    }
}

/// Microseconds per 8-byte message from a window's MB/s.
fn per_message_us(mbs: f64) -> f64 {
    if mbs > 0.0 {
        8.0 / mbs
    } else {
        0.0
    }
}

/// Runs the calibration and prints (and writes with `--out`) the parameter set.
pub fn run(o: &Options) -> Result<(), String> {
    eprintln!("measuring links (ping-pong, 8-byte message rate) ...");
    let sizes = ["-s", SIZES];
    let latency_intra = o.medians(2, false, "latency", &sizes, 1)?;
    let latency_inter = o.medians(2, true, "latency", &sizes, 1)?;
    let message_intra_us = per_message_us(o.one(2, false, "bandwidth", &["-s", "8"], 1)?);
    let message_inter_us = per_message_us(o.one(2, true, "bandwidth", &["-s", "8"], 1)?);
    eprintln!("measuring bidirectional bandwidth ...");
    let mut bidirectional = [0.0; 2];
    for (i, nodes) in [false, true].into_iter().enumerate() {
        let big = ["-s", "65536"];
        let one = o.one(2, nodes, "bandwidth", &big, 1)?;
        let both = o.one(2, nodes, "bibw", &big, 1)?;
        bidirectional[i] = if one > 0.0 { both / one } else { 2.0 };
    }
    eprintln!("measuring local reductions and copies ...");
    let reduce_gbs = o.one(1, false, "reduce_local", &["-s", "1048576"], 1)?;
    let copy = Command::new(o.programs.join("memcpy_ceiling"));
    let copy_gbs = rows(&output(copy, "memcpy_ceiling")?)
        .first()
        .and_then(|r| r.get(2).copied())
        .ok_or("memcpy_ceiling printed no result")?;
    let contention = if o.cma {
        eprintln!("measuring single-copy contention ...");
        let readers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8);
        match hympi::platform::cma_calibrate::calibrate(1024, readers, 10) {
            Ok(c) => Some(c.model),
            Err(e) => {
                eprintln!("single-copy reads do not work here ({e}): the CMA paper's contention");
                None
            }
        }
    } else {
        None
    };
    let measured = Measured {
        latency_intra,
        latency_inter,
        message_intra_us,
        message_inter_us,
        eager: config::int(Knob::EagerMax).max(0) as usize,
        reduce_gbs,
        copy_gbs,
        contention,
        bidirectional_intra: bidirectional[0],
        bidirectional_inter: bidirectional[1],
    };
    let mut model = calibrate::model("this machine (hympi-sim calibrate)", &measured)?;

    eprintln!("timing collectives for the software costs ...");
    let mut real = Real {
        exec: o.exec.clone(),
        programs: o.programs.clone(),
        reps: o.reps,
    };
    let layout = Layout { nodes: 1, ppn: 2 };
    let mut timed = Vec::new();
    for (coll, algo, bytes) in SOFTWARE {
        let algo = Algorithm::parse(algo)?;
        if let Some(us) = real.measure(coll, layout, bytes, &algo)? {
            timed.push(Timed {
                call: Call {
                    coll,
                    algo,
                    bytes,
                    root: 0,
                },
                machine: Machine::regular(1, 2),
                measured_us: us,
            });
        }
    }
    let fit = calibrate::software_costs(&model, &timed)?;
    model.call_overhead = fit.call_us * 1e-6;
    model.round_overhead = fit.round_us * 1e-6;
    report(&measured, &model, &timed, &fit);
    let json = model.to_json();
    match &o.out {
        Some(f) => {
            std::fs::write(f, format!("{json}\n")).map_err(|e| format!("{f}: {e}"))?;
            println!("parameter set written to {f} (hympi-sim run --params {f})");
        }
        None => println!("{json}"),
    }
    Ok(())
}

/// Prints what was measured and how well the fitted model explains the collectives.
fn report(m: &Measured, model: &Model, timed: &[Timed], fit: &calibrate::SoftwareFit) {
    let us = |s: f64| s * 1e6;
    let gbs = |pb: f64| if pb > 0.0 { 1e-9 / pb } else { 0.0 };
    for (name, l, bi) in [
        ("on the node", &model.intra, model.intra_bidirectional),
        ("between nodes", &model.inter, model.inter_bidirectional),
    ] {
        println!(
            "{name}: L {:.3} us, o = g {:.3} us, {:.2} GB/s, bidirectional {bi:.2}x (an exchange takes {:.2}x a one-way transfer)",
            us(l.latency),
            us(l.overhead),
            gbs(l.per_byte),
            1.0 + hympi::sim::model::reverse_share(bi)
        );
    }
    let c = &model.cma;
    println!(
        "single copies above {} B: start-up {:.2} us, {:.2} GB/s, l {:.3} us per page, gamma(c) = {:.3} c^2 + {:.3} c{}",
        m.eager,
        us(c.startup),
        gbs(c.per_byte),
        us(c.lock_per_page),
        c.quadratic,
        c.linear,
        if m.contention.is_some() { "" } else { " (the CMA paper's)" }
    );
    println!(
        "reduction {:.2} GB/s, copy {:.2} GB/s",
        m.reduce_gbs, m.copy_gbs
    );
    println!(
        "software cost: {:.3} us per call, {:.3} us per round (least squares over {} collectives on 2 ranks):",
        fit.call_us,
        fit.round_us,
        timed.len()
    );
    println!(
        "  {:<10} {:<20} {:>6} {:>7} {:>11} {:>11} {:>9}",
        "coll", "algorithm", "bytes", "rounds", "measured", "predicted", "pred/meas"
    );
    for (t, p) in timed.iter().zip(&fit.points) {
        let pred = p.messages_us + fit.call_us * p.calls + fit.round_us * p.rounds;
        println!(
            "  {:<10} {:<20} {:>6} {:>7.0} {:>11.3} {:>11.3} {:>9.2}",
            t.call.coll.name(),
            t.call.algo.to_string(),
            t.call.bytes,
            p.rounds,
            p.measured_us,
            pred,
            pred / p.measured_us
        );
    }
}
