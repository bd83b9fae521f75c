//! `hympi-sim`: predicts how long a collective algorithm takes on a machine we may not have,
//! by running the schedules the library builds for every rank under a LogGP model
//! (`hympi::sim`), and fits the model's parameters to this machine (`calibrate`).
//! See docs/simulator.md.

mod calibrate;

use hympi::coll::tuning::Coll;
use hympi::sim::cli::{coll, list, size};
use hympi::sim::{self, build, trace, Algorithm, Call, Machine, Model, Options};
use std::process::ExitCode;
use std::time::Instant;

const USAGE: &str = "\
usage: hympi-sim run   --coll C --algo NAME[:k=N] --bytes B [layout] [--root R] [--params F]
                        [--trace FILE] [--path]
       hympi-sim sweep --coll C [--algos A,B,...] [--k 2,4,8] --sizes S,S,... [layout] [--params F]
       hympi-sim params             print the built-in parameter set (the file format)
       hympi-sim calibrate --programs DIR [--exec hympiexec] [--reps N] [--out FILE] [--no-cma]
                        measure this machine with the programs of benches/c compiled into DIR
                        and fit a parameter set (benches/sim-validate/run does all of it)
layout: --nodes N --ppn P (default 2 x 2) or --node-sizes 2,3,1 (uneven nodes)
C: bcast reduce allreduce allgather alltoall gather scatter barrier
sizes take K/M suffixes (1K = 1024); the times printed are microseconds";

/// Command-line options shared by the subcommands.
#[derive(Default)]
struct Args {
    coll: Option<Coll>,
    algo: Option<String>,
    algos: Option<Vec<String>>,
    ks: Vec<u32>,
    bytes: Option<usize>,
    sizes: Vec<usize>,
    nodes: usize,
    ppn: usize,
    node_sizes: Option<Vec<usize>>,
    root: u32,
    params: Option<String>,
    trace: Option<String>,
    path: bool,
}

fn parse(argv: &[String]) -> Result<Args, String> {
    let mut a = Args {
        nodes: 2,
        ppn: 2,
        ks: vec![2, 4, 8],
        ..Args::default()
    };
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        if flag == "--path" {
            a.path = true;
            continue;
        }
        let v = it
            .next()
            .ok_or_else(|| format!("{flag} needs a value"))?
            .as_str();
        let num = |v: &str| {
            v.parse::<usize>()
                .map_err(|_| format!("{flag}: `{v}` is not a number"))
        };
        match flag.as_str() {
            "--coll" => a.coll = Some(coll(v)?),
            "--algo" => a.algo = Some(v.to_string()),
            "--algos" => a.algos = Some(list(v, |s| Ok(s.to_string()))?),
            "--k" => a.ks = list(v, |s| num(s).map(|n| n as u32))?,
            "--bytes" => a.bytes = Some(size(v)?),
            "--sizes" => a.sizes = list(v, size)?,
            "--nodes" => a.nodes = num(v)?,
            "--ppn" => a.ppn = num(v)?,
            "--node-sizes" => a.node_sizes = Some(list(v, num)?),
            "--root" => a.root = num(v)? as u32,
            "--params" => a.params = Some(v.to_string()),
            "--trace" => a.trace = Some(v.to_string()),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(a)
}

impl Args {
    fn machine(&self) -> Result<Machine, String> {
        let m = match &self.node_sizes {
            Some(s) => Machine::from_sizes(s),
            None => Machine::regular(self.nodes, self.ppn),
        };
        if m.ranks() == 0 || m.node_of.len() > 1 << 20 {
            return Err("the layout needs between 1 and 2^20 ranks".into());
        }
        Ok(m)
    }

    fn model(&self) -> Result<Model, String> {
        match &self.params {
            Some(f) => {
                let text = std::fs::read_to_string(f).map_err(|e| format!("{f}: {e}"))?;
                Model::from_json(&text).map_err(|e| format!("{f}: {e}"))
            }
            None => Ok(Model::default()),
        }
    }

    fn coll(&self) -> Result<Coll, String> {
        self.coll.ok_or_else(|| "--coll is required".to_string())
    }
}

fn describe(m: &Machine) -> String {
    let l = m.layout();
    if l.is_uniform() {
        format!("{} nodes x {} ranks", l.nodes(), l.max_per_node())
    } else {
        let sizes: Vec<String> = l.members.iter().map(|n| n.len().to_string()).collect();
        format!("{} nodes of {} ranks", l.nodes(), sizes.join("+"))
    }
}

fn cmd_run(a: &Args) -> Result<(), String> {
    let (machine, model) = (a.machine()?, a.model()?);
    let call = Call {
        coll: a.coll()?,
        algo: Algorithm::parse(a.algo.as_deref().ok_or("--algo is required")?)?,
        bytes: a.bytes.ok_or("--bytes is required")?,
        root: a.root,
    };
    let record = a.path || a.trace.is_some();
    let t0 = Instant::now();
    let programs = build::programs(&call, &machine)?;
    let built = t0.elapsed();
    let out = sim::simulate(&model, &machine, &programs, Options { record })
        .map_err(|e| e.to_string())?;
    let simulated = t0.elapsed() - built;
    println!(
        "{} {} of {} B on {} ({} ranks), model `{}`",
        call.coll.name(),
        call.algo,
        call.bytes,
        describe(&machine),
        machine.ranks(),
        model.name
    );
    let mut finish = out.finish.clone();
    finish.sort_by(f64::total_cmp);
    let pct = |q: f64| finish[((finish.len() - 1) as f64 * q).round() as usize] * 1e6;
    println!(
        "predicted time {:.3} us (last rank {}); rank finish times: min {:.3}, median {:.3}, max {:.3} us",
        out.time() * 1e6,
        out.last_rank(),
        pct(0.0),
        pct(0.5),
        pct(1.0)
    );
    println!(
        "{} messages ({} between nodes), {} bytes; built in {:.2} s, simulated in {:.2} s",
        out.messages,
        out.inter_messages,
        out.bytes,
        built.as_secs_f64(),
        simulated.as_secs_f64()
    );
    if a.path {
        let path = out.critical_path();
        println!("critical path ({} rounds):", path.len());
        for (r, i) in path {
            let s = out.rounds[r as usize][i as usize];
            println!(
                "  rank {r:>6} (node {:>4}) round {i:>4}: {:>10.3} .. {:>10.3} us",
                machine.node_of[r as usize],
                s.start * 1e6,
                s.end * 1e6
            );
        }
    }
    if let Some(f) = &a.trace {
        std::fs::write(f, trace::chrome_trace(&machine, &programs, &out))
            .map_err(|e| format!("{f}: {e}"))?;
        println!("trace written to {f} (open in chrome://tracing or ui.perfetto.dev)");
    }
    Ok(())
}

fn cmd_sweep(a: &Args) -> Result<(), String> {
    let (machine, model, coll) = (a.machine()?, a.model()?, a.coll()?);
    if a.sizes.is_empty() {
        return Err("--sizes is required".into());
    }
    let names: Vec<String> = match &a.algos {
        Some(v) => v.clone(),
        None => build::catalog(coll).iter().map(|s| s.to_string()).collect(),
    };
    let mut algos = Vec::new();
    for n in names {
        let base = Algorithm::parse(&n)?;
        if build::takes_radix(&base.name) && !n.contains("k=") {
            algos.extend(a.ks.iter().map(|&k| Algorithm { k, ..base.clone() }));
        } else {
            algos.push(base);
        }
    }
    println!(
        "{} on {} ({} ranks), model `{}`: predicted microseconds (- = not applicable)",
        coll.name(),
        describe(&machine),
        machine.ranks(),
        model.name
    );
    print!("{:>10}", "bytes");
    for al in &algos {
        print!(" {:>24}", al.to_string());
    }
    println!("  best");
    for &b in &a.sizes {
        print!("{b:>10}");
        let mut best: Option<(f64, String)> = None;
        for al in &algos {
            let call = Call {
                coll,
                algo: al.clone(),
                bytes: b,
                root: a.root,
            };
            match sim::run(&call, &machine, &model, Options::default()) {
                Ok(out) => {
                    let t = out.time() * 1e6;
                    print!(" {t:>24.3}");
                    if best.as_ref().is_none_or(|(bt, _)| t < *bt) {
                        best = Some((t, al.to_string()));
                    }
                }
                Err(_) => print!(" {:>24}", "-"),
            }
        }
        println!("  {}", best.map(|b| b.1).unwrap_or_default());
    }
    Ok(())
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let (cmd, rest) = match argv.split_first() {
        Some((c, r)) => (c.as_str(), r),
        None => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let result = match cmd {
        "params" => {
            println!("{}", Model::default().to_json());
            Ok(())
        }
        "run" | "sweep" => parse(rest).and_then(|a| {
            if cmd == "run" {
                cmd_run(&a)
            } else {
                cmd_sweep(&a)
            }
        }),
        "calibrate" => calibrate::parse(rest).and_then(|o| calibrate::run(&o)),
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(format!("unknown command `{cmd}`\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hympi-sim: {e}");
            ExitCode::FAILURE
        }
    }
}
