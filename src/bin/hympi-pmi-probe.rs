//! `hympi-pmi-probe`: checks that a launcher serves PMI-1 the way hympi needs it.
//!
//! Run it under a launcher (`hympiexec -n 4 hympi-pmi-probe`, `mpiexec.hydra -n 4
//! hympi-pmi-probe`): every rank puts a key, waits in the PMI barrier, reads every other rank's
//! key and prints one line. Exit status 0 means the exchange worked.
//!
//! Other modes exercise a launcher's failure handling (used by hympi's tests):
//! - `exit-after-finalize R C` / `exit-before-finalize R C`: rank R exits with status C after
//!   (or without) PMI finalize; the other ranks finalize (or wait in a barrier);
//! - `kill R`: rank R prints `dying at <CLOCK_MONOTONIC ns>` and sends itself SIGKILL; the
//!   others wait in a barrier;
//! - `kill-stubborn R`: as `kill`, but the others ignore SIGTERM;
//! - `abort R C`: rank R prints `aborting at <ns>`, asks PMI to abort with code C, then sleeps;
//!   the others wait;
//! - `env VAR...`: prints `rank R: VAR=value` (or `VAR unset`) for each variable;
//! - `affinity`: prints the CPUs the rank may run on;
//! - `lines N`: prints N numbered lines on stdout and on stderr;
//! - `sleep`: exchanges, then sleeps 30 s (to be interrupted).

use std::io::Write;
use std::process::exit;
use std::time::Duration;

use hympi::platform::pmi::PmiClient;

fn fail(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("hympi-pmi-probe: {what}: {e}");
    exit(1)
}

/// The value rank `r` of a job of `size` puts.
fn value_of(r: i32, size: i32) -> String {
    format!("hello-from-{r}-of-{size}")
}

/// Puts this rank's key, waits in the barrier, checks every rank's key; returns a summary.
fn exchange(pmi: &mut Option<PmiClient>) -> String {
    let Some(pmi) = pmi.as_mut() else {
        return "singleton (no PMI launcher)".to_string();
    };
    let (rank, size) = (pmi.rank(), pmi.size());
    pmi.put(&format!("probe-{rank}"), &value_of(rank, size))
        .unwrap_or_else(|e| fail("put", e));
    pmi.barrier().unwrap_or_else(|e| fail("barrier", e));
    for r in 0..size {
        match pmi.get(&format!("probe-{r}")) {
            Ok(Some(v)) if v == value_of(r, size) => {}
            Ok(other) => fail(&format!("get probe-{r}"), format!("wrong value {other:?}")),
            Err(e) => fail(&format!("get probe-{r}"), e),
        }
    }
    let mapping = pmi
        .get("PMI_process_mapping")
        .unwrap_or_else(|e| fail("get PMI_process_mapping", e))
        .unwrap_or_default();
    format!(
        "kvs exchange ok, kvs {}, appnum {}, universe {}, mapping {mapping}",
        pmi.kvsname(),
        pmi.appnum(),
        pmi.universe_size()
    )
}

fn finalize(pmi: &mut Option<PmiClient>) {
    if let Some(p) = pmi.as_mut() {
        p.finalize().unwrap_or_else(|e| fail("finalize", e));
    }
}

/// Waits in a PMI barrier that the failing rank never reaches (until the launcher kills us).
fn wait_forever(pmi: &mut Option<PmiClient>) -> ! {
    if let Some(p) = pmi.as_mut() {
        let r = p.barrier();
        fail("barrier returned although a rank is gone", format!("{r:?}"));
    }
    std::thread::sleep(Duration::from_secs(30));
    exit(1)
}

fn int_arg(args: &[String], i: usize) -> i32 {
    args.get(i)
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| fail("usage", format!("argument {i} must be an integer")))
}

/// CLOCK_MONOTONIC in nanoseconds (the same clock in every process of the machine), so a test
/// can time the launcher's reaction from the moment a rank fails.
fn monotonic_ns() -> u128 {
    // SAFETY: an all-zero timespec is valid; clock_gettime fills it.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u128 * 1_000_000_000 + ts.tv_nsec as u128
}

fn affinity() -> String {
    // SAFETY: an all-zero cpu_set_t is the empty set; sched_getaffinity fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: set is a valid cpu_set_t of the size passed.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        fail("sched_getaffinity", std::io::Error::last_os_error());
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: cpu < CPU_SETSIZE, inside the set.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .map(|cpu| cpu.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map_or("exchange", String::as_str);
    let mut pmi = PmiClient::from_env().unwrap_or_else(|e| fail("PMI connect", e));
    let (rank, size) = pmi.as_ref().map_or((0, 1), |p| (p.rank(), p.size()));
    let out = std::io::stdout();
    match mode {
        "exchange" => {
            let summary = exchange(&mut pmi);
            println!("rank {rank} of {size}: {summary}");
            finalize(&mut pmi);
        }
        "exit-after-finalize" | "exit-before-finalize" => {
            let (who, code) = (int_arg(&args, 1), int_arg(&args, 2));
            exchange(&mut pmi);
            let after = mode == "exit-after-finalize";
            if after {
                finalize(&mut pmi);
            }
            println!("rank {rank} of {size}: done");
            out.lock().flush().ok();
            if rank == who {
                exit(code);
            }
            if !after {
                wait_forever(&mut pmi);
            }
        }
        "kill" | "kill-stubborn" => {
            let who = int_arg(&args, 1);
            if mode == "kill-stubborn" && rank != who {
                // SAFETY: ignoring SIGTERM installs no handler code.
                unsafe { libc::signal(libc::SIGTERM, libc::SIG_IGN) };
            }
            exchange(&mut pmi);
            println!("rank {rank} of {size}: ready pid {}", std::process::id());
            out.lock().flush().ok();
            // Every rank has printed (and is stubborn) before the victim dies.
            if let Some(p) = pmi.as_mut() {
                p.barrier().unwrap_or_else(|e| fail("barrier", e));
            }
            if rank == who {
                println!("rank {rank}: dying at {}", monotonic_ns());
                out.lock().flush().ok();
                // SAFETY: raise(2) only sends a signal to this process.
                unsafe { libc::raise(libc::SIGKILL) };
            }
            wait_forever(&mut pmi);
        }
        "abort" => {
            let (who, code) = (int_arg(&args, 1), int_arg(&args, 2));
            exchange(&mut pmi);
            if rank == who {
                println!("rank {rank}: aborting at {}", monotonic_ns());
                out.lock().flush().ok();
                if let Some(p) = pmi.as_mut() {
                    p.abort(code, &format!("probe abort from rank {rank}"))
                        .unwrap_or_else(|e| fail("abort", e));
                }
                // A well-behaved caller exits now; this one waits to be killed.
                std::thread::sleep(Duration::from_secs(30));
                exit(1);
            }
            wait_forever(&mut pmi);
        }
        "env" => {
            for var in &args[1..] {
                match std::env::var(var) {
                    Ok(v) => println!("rank {rank}: {var}={v}"),
                    Err(_) => println!("rank {rank}: {var} unset"),
                }
            }
            finalize(&mut pmi);
        }
        "affinity" => {
            println!("rank {rank} cpus: {}", affinity());
            finalize(&mut pmi);
        }
        "lines" => {
            for i in 0..int_arg(&args, 1) {
                println!("out {i} of rank {rank}");
                eprintln!("err {i} of rank {rank}");
            }
            finalize(&mut pmi);
        }
        "sleep" => {
            exchange(&mut pmi);
            println!("rank {rank} of {size}: sleeping pid {}", std::process::id());
            out.lock().flush().ok();
            std::thread::sleep(Duration::from_secs(30));
            finalize(&mut pmi);
        }
        other => fail("usage", format!("unknown mode {other:?}")),
    }
}
