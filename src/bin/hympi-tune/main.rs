//! `hympi-tune`: ACCLAiM's collective autotuner (`hympi::tune`). For each collective it
//! measures points chosen by a random forest's jackknife variance, on real ranks of this
//! machine or on the schedule simulator, until the variance settles, and writes the
//! selection table `HYMPI_COLL_TUNING_FILE` reads, optionally with an SVG map of the choices
//! and a score against exhaustive measurement. See docs/tuner.md.

use hympi::coll::tuning::{Coll, Table, DEFAULT_TABLE};
use hympi::sim::cli::{coll, list, size};
use hympi::sim::Model;
use hympi::tune::{eval, plot, table, Bench, Settings, Simulated, Space, Stop, Tuner};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

const USAGE: &str = "\
usage: hympi-tune --cma [--pages N] [--readers N] [--reps N] [--out FILE]
       hympi-tune --colls C,C,... [--nodes 1,2,4] [--ppn 1,2,4] [--sizes MIN:MAX]
                  [--algos A,B,...] [--k 2,4,8] [--budget N] [--seed S] [--trees N]
                  [--tolerance X]
                  (--sim [--params FILE] | --real --programs DIR [--exec hympiexec] [--reps N])
                  [--out table.json] [--plot choices.svg] [--exhaustive [--mistakes N]]
                  [--quiet]
C: bcast allreduce allgather gather scatter alltoall (reduce, barrier: --sim only)
--sim measures on hympi-sim's model (built-in 100 Gb/s fabric or --params FILE);
--real launches jobs here (virtual nodes when a layout has several nodes), timed by the
  programs of benches/c compiled into DIR (benches/tune/run does all of it);
--exhaustive also measures every point and scores the tuned and the built-in tables
  (ACCLAiM's average slowdown and significant-mistake proportion), listing the N worst
  picks with --mistakes N
--cma measures the contention-aware CMA model here (single-copy reads by 1..N threads of a
  child's pages) and prints it with the Scatter/Gather throttle it implies";

struct Args {
    colls: Vec<Coll>,
    nodes: Vec<usize>,
    ppn: Vec<usize>,
    min: usize,
    max: usize,
    algos: Option<Vec<String>>,
    ks: Vec<u32>,
    budget: usize,
    seed: u64,
    tolerance: f64,
    trees: usize,
    sim: bool,
    params: Option<String>,
    programs: Option<PathBuf>,
    exec: Option<PathBuf>,
    reps: usize,
    out: Option<String>,
    plot: Option<String>,
    exhaustive: bool,
    show_mistakes: usize,
    quiet: bool,
}

fn number(flag: &str, v: &str) -> Result<usize, String> {
    v.parse()
        .map_err(|_| format!("{flag}: `{v}` is not a number"))
}

fn parse(argv: &[String]) -> Result<Args, String> {
    let mut a = Args {
        colls: Vec::new(),
        nodes: vec![1, 2, 4],
        ppn: vec![1, 2, 4],
        min: 1,
        max: 1 << 20,
        algos: None,
        ks: vec![2, 4, 8],
        budget: usize::MAX,
        seed: 1,
        tolerance: Settings::default().tolerance,
        trees: Settings::default().trees,
        sim: false,
        params: None,
        programs: None,
        exec: None,
        reps: 3,
        out: None,
        plot: None,
        exhaustive: false,
        show_mistakes: 0,
        quiet: false,
    };
    let mut real = false;
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--sim" => a.sim = true,
            "--real" => real = true,
            "--exhaustive" => a.exhaustive = true,
            "--quiet" => a.quiet = true,
            "-h" | "--help" => return Err(String::new()),
            _ => {
                let v = it
                    .next()
                    .ok_or_else(|| format!("{flag} needs a value"))?
                    .as_str();
                match flag.as_str() {
                    "--colls" => a.colls = list(v, coll)?,
                    "--nodes" => a.nodes = list(v, |s| number(flag, s))?,
                    "--ppn" => a.ppn = list(v, |s| number(flag, s))?,
                    "--sizes" => {
                        let (lo, hi) = v
                            .split_once(':')
                            .ok_or("--sizes takes MIN:MAX (for example 8:1M)")?;
                        a.min = size(lo)?;
                        a.max = size(hi)?;
                    }
                    "--algos" => a.algos = Some(list(v, |s| Ok(s.to_string()))?),
                    "--k" => a.ks = list(v, |s| number(flag, s).map(|n| n as u32))?,
                    "--budget" => a.budget = number(flag, v)?,
                    "--mistakes" => a.show_mistakes = number(flag, v)?,
                    "--seed" => a.seed = number(flag, v)? as u64,
                    "--trees" => a.trees = number(flag, v)?,
                    "--tolerance" => {
                        a.tolerance = v
                            .parse()
                            .map_err(|_| format!("{flag}: `{v}` is not a number"))?
                    }
                    "--params" => a.params = Some(v.to_string()),
                    "--programs" => a.programs = Some(PathBuf::from(v)),
                    "--exec" => a.exec = Some(PathBuf::from(v)),
                    "--reps" => a.reps = number(flag, v)?,
                    "--out" => a.out = Some(v.to_string()),
                    "--plot" => a.plot = Some(v.to_string()),
                    _ => return Err(format!("unknown option {flag}")),
                }
            }
        }
    }
    if a.colls.is_empty() {
        return Err("--colls is required".into());
    }
    if a.sim == real {
        return Err("give one of --sim and --real".into());
    }
    if real && a.programs.is_none() {
        return Err("--real needs --programs DIR (benches/tune/run builds it)".into());
    }
    Ok(a)
}

fn bench(a: &Args) -> Result<Box<dyn Bench>, String> {
    if a.sim {
        let model = match &a.params {
            Some(f) => {
                let text = std::fs::read_to_string(f).map_err(|e| format!("{f}: {e}"))?;
                Model::from_json(&text).map_err(|e| format!("{f}: {e}"))?
            }
            None => Model::default(),
        };
        return Ok(Box::new(Simulated { model }));
    }
    let exec = match &a.exec {
        Some(e) => e.clone(),
        None => std::env::current_exe()
            .map_err(|e| e.to_string())?
            .with_file_name("hympiexec"),
    };
    Ok(Box::new(hympi::tune::real::Real {
        exec,
        programs: a.programs.clone().unwrap_or_default(),
        reps: a.reps,
    }))
}

fn bar(len: usize, quiet: bool, what: &str) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new(len as u64);
    if let Ok(style) = ProgressStyle::with_template(
        "{prefix:>10} [{bar:30}] {pos}/{len} points  {elapsed} elapsed, ETA {eta}  {msg}",
    ) {
        b.set_style(style.progress_chars("=> "));
    }
    b.set_prefix(what.to_string());
    b
}

fn tune_one(a: &Args, coll: Coll, bench: &mut dyn Bench) -> Result<(Tuner, String), String> {
    let mut algos = a.algos.clone();
    // Real runs on one node also time the shared-memory algorithm where the collective has
    // one (the simulator does not model it).
    if !a.sim && a.nodes.contains(&1) && coll.algorithms().iter().any(|s| s.name == "shm") {
        let mut list = algos.unwrap_or_else(|| {
            hympi::sim::build::catalog(coll)
                .iter()
                .map(|s| s.to_string())
                .collect()
        });
        list.push("shm".into());
        algos = Some(list);
    }
    let min = if coll == Coll::Allreduce {
        a.min.max(8)
    } else {
        a.min
    };
    let space = Space::new(coll, &a.nodes, &a.ppn, min, a.max, algos.as_deref(), &a.ks)?;
    let settings = Settings {
        budget: a.budget,
        seed: a.seed,
        tolerance: a.tolerance,
        trees: a.trees,
        ..Settings::default()
    };
    let mut t = Tuner::new(space.clone(), settings);
    let pb = bar(space.points().min(a.budget), a.quiet, coll.name());
    let start = Instant::now();
    let stop = t.run(bench, |t| {
        pb.set_position(t.samples.len() as u64);
        if let Some(v) = t.history.last() {
            pb.set_message(format!("variance {v:.3e}"));
        }
    })?;
    pb.finish_and_clear();
    let mut report = format!(
        "{}: {} after {} of {} points ({} off the power-of-two grid), {:.1} s, {:.0} µs of collective time measured\n",
        coll.name(),
        match stop {
            Stop::Converged => "converged",
            Stop::Budget => "budget spent",
            Stop::Exhausted => "grid exhausted",
        },
        t.samples.len(),
        space.points(),
        t.samples.iter().filter(|s| !s.bytes.is_power_of_two()).count(),
        start.elapsed().as_secs_f64(),
        t.cost_us
    );
    if a.exhaustive {
        let pb = bar(space.points(), a.quiet, "exhaustive");
        let start = Instant::now();
        let (truth, cost) = eval::oracle(&space, bench, |d, _| pb.set_position(d as u64))?;
        pb.finish_and_clear();
        let tuned = Table::parse(&table::table(&[&t])?)?;
        let default = Table::parse(DEFAULT_TABLE)?;
        for (name, tb) in [("tuned", &tuned), ("built-in", &default)] {
            let s = eval::score(tb, &space, &truth);
            report += &format!(
                "  {name:>8} table: average slowdown {:.3}, significant mistakes {:.1} %, accuracy {:.1} %\n",
                s.avg_slowdown,
                100.0 * s.significant_mistakes,
                100.0 * s.accuracy
            );
        }
        for (x, picked, best, slow) in eval::mistakes(&tuned, &space, &truth)
            .iter()
            .take(a.show_mistakes)
        {
            report += &format!(
                "    {} B on {}: {picked} is {slow:.2}x {best}\n",
                x.bytes, x.layout
            );
        }
        report += &format!(
            "  tuning measured {:.1} % of the points and {:.1} % of the collective time of exhaustive search ({:.1} s)\n",
            100.0 * t.samples.len() as f64 / space.points() as f64,
            100.0 * t.cost_us / cost.max(f64::MIN_POSITIVE),
            start.elapsed().as_secs_f64()
        );
    }
    Ok((t, report))
}

fn run(a: &Args) -> Result<(), String> {
    let mut b = bench(a)?;
    let mut tuners = Vec::new();
    for &c in &a.colls {
        let (t, report) = tune_one(a, c, b.as_mut())?;
        print!("{report}");
        tuners.push(t);
    }
    let refs: Vec<&Tuner> = tuners.iter().collect();
    let json = table::table(&refs)?;
    let parsed = Table::parse(&json).map_err(|e| format!("the written table: {e}"))?;
    match &a.out {
        Some(f) => {
            std::fs::write(f, &json).map_err(|e| format!("{f}: {e}"))?;
            println!("table written to {f} (use it with HYMPI_COLL_TUNING_FILE={f})");
        }
        None => print!("{json}"),
    }
    if let Some(f) = &a.plot {
        let mut svgs = Vec::new();
        for t in &tuners {
            svgs.push(plot::choices_svg(
                &parsed,
                &t.space,
                &format!("{}: chosen algorithm", t.space.coll.name()),
            ));
        }
        for (i, svg) in svgs.iter().enumerate() {
            let name = if svgs.len() == 1 {
                f.clone()
            } else {
                let (stem, ext) = f.rsplit_once('.').unwrap_or((f.as_str(), "svg"));
                format!("{stem}-{}.{ext}", tuners[i].space.coll.name())
            };
            std::fs::write(&name, svg).map_err(|e| format!("{name}: {e}"))?;
            println!("plot written to {name}");
        }
    }
    Ok(())
}

/// `hympi-tune --cma [--pages N] [--readers N] [--reps N] [--out FILE]`: measures the
/// contention-aware CMA model here (`hympi::platform::cma_calibrate`), prints it, the
/// throttle it implies and the simulator's `cma` section (written to FILE with `--out`).
fn cma(argv: &[String]) -> Result<(), String> {
    let (mut pages, mut readers, mut reps, mut out) = (2048usize, 0usize, 10usize, None);
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        let v = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--pages" => pages = number(flag, v)?,
            "--readers" => readers = number(flag, v)?,
            "--reps" => reps = number(flag, v)?,
            "--out" => out = Some(v.clone()),
            _ => return Err(format!("unknown option {flag} for --cma")),
        }
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if readers == 0 {
        readers = cpus.min(8);
    }
    let c = hympi::platform::cma_calibrate::calibrate(pages, readers, reps)
        .map_err(|e| format!("single-copy reads do not work here: {e}"))?;
    let (model, per_page) = (c.model, c.per_page);
    println!("CMA model of this machine ({pages} pages per read, {reps} reads per point):");
    println!(
        "  alpha {:.2} us, memcpy {:.2} GB/s, page {} B",
        model.startup * 1e6,
        1e-9 / model.per_byte,
        model.page
    );
    for (i, t) in per_page.iter().enumerate() {
        println!("  {} reader(s): {:.3} us per page", i + 1, t * 1e6);
    }
    println!(
        "  l = {:.3} us per page, gamma(c) = {:.3} c^2 + {:.3} c",
        model.lock_per_page * 1e6,
        model.quadratic,
        model.linear
    );
    // An unbounded best (contention linear in the readers) lets every reader go at once;
    // the knob's range ends at 1024.
    let k = model.best_throttle().min(1024);
    println!(
        "throttle: HYMPI_CMA_THROTTLE={k} (the model's best number of concurrent readers{})",
        if model.best_throttle() == usize::MAX {
            ": unbounded"
        } else {
            ""
        }
    );
    let section = serde_json::json!({
        "threshold_bytes": model.threshold,
        "startup_us": model.startup * 1e6,
        "bandwidth_gbs": 1e-9 / model.per_byte,
        "lock_per_page_us": model.lock_per_page * 1e6,
        "page_bytes": model.page,
        "gamma_quadratic": model.quadratic,
        "gamma_linear": model.linear,
        "throttle": k,
    });
    let text = serde_json::to_string_pretty(&serde_json::json!({ "cma": section }))
        .map_err(|e| e.to_string())?;
    match out {
        Some(f) => std::fs::write(&f, text + "\n").map_err(|e| format!("{f}: {e}"))?,
        None => println!("{text}"),
    }
    Ok(())
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().is_some_and(|a| a == "--cma") {
        return match cma(&argv[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("hympi-tune --cma: {e}");
                ExitCode::from(2)
            }
        };
    }
    match parse(&argv).and_then(|a| run(&a)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_empty() => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("hympi-tune: {e}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
