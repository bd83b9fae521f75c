//! Runs the real `hympiexec` on `hympi-pmi-probe` (a PMI client built on
//! `hympi::platform::pmi::PmiClient`), and the probe under MPICH's `mpiexec.hydra`.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

const HYMPIEXEC: &str = env!("CARGO_BIN_EXE_hympiexec");
const PROBE: &str = env!("CARGO_BIN_EXE_hympi-pmi-probe");

/// How long any launch may take before the test kills it and fails.
const HANG_LIMIT: Duration = Duration::from_secs(30);

struct Run {
    status: ExitStatus,
    stdout: String,
    stderr: String,
    elapsed: Duration,
    /// CLOCK_MONOTONIC when the launcher's exit was seen.
    end_ns: u128,
}

/// CLOCK_MONOTONIC in nanoseconds (shared by all processes, as the probe prints it).
fn monotonic_ns() -> u128 {
    // SAFETY: an all-zero timespec is valid; clock_gettime fills it.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u128 * 1_000_000_000 + ts.tv_nsec as u128
}

impl Run {
    fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Time from the probe's `<event> at <ns>` line to the launcher's exit.
    fn since(&self, event: &str) -> Duration {
        let marker = format!("{event} at ");
        let ns: u128 = self
            .stdout
            .lines()
            .find_map(|l| {
                l.split_once(&marker)
                    .map(|(_, n)| n.trim().parse().unwrap())
            })
            .unwrap_or_else(|| panic!("no `{marker}` line: {self:?}"));
        Duration::from_nanos((self.end_ns - ns) as u64)
    }

    /// Output lines of stdout that start with `prefix`.
    fn lines_with(&self, prefix: &str) -> Vec<&str> {
        self.stdout
            .lines()
            .filter(|l| l.starts_with(prefix))
            .collect()
    }
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "status {:?} after {:?}\n--- stdout\n{}--- stderr\n{}",
            self.status, self.elapsed, self.stdout, self.stderr
        )
    }
}

/// Waits for `child` at most [`HANG_LIMIT`], then collects its output.
fn finish(mut child: Child, start: Instant) -> Run {
    let out_pipe = child.stdout.take();
    let mut err_pipe = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut p) = out_pipe {
            p.read_to_string(&mut s).unwrap();
        }
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        err_pipe.read_to_string(&mut s).unwrap();
        s
    });
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > HANG_LIMIT {
            child.kill().ok();
            child.wait().ok();
            panic!("launcher still running after {HANG_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let elapsed = start.elapsed();
    let end_ns = monotonic_ns();
    Run {
        status,
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
        elapsed,
        end_ns,
    }
}

fn run_cmd(mut cmd: Command) -> Run {
    let start = Instant::now();
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    finish(child, start)
}

fn hympiexec(args: &[&str]) -> Run {
    let mut cmd = Command::new(HYMPIEXEC);
    cmd.args(args);
    run_cmd(cmd)
}

/// True when no process has this pid any more (or it is a zombie of someone else).
fn gone(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
    match stat {
        Err(_) => true,
        Ok(s) => s
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// The pids printed by the probe as `... pid N`.
fn probe_pids(run: &Run) -> Vec<i32> {
    run.stdout
        .lines()
        .filter_map(|l| {
            l.rsplit_once(" pid ")
                .and_then(|(_, p)| p.trim().parse().ok())
        })
        .collect()
}

#[test]
fn kvs_exchange_at_1_2_4_and_6_ranks() {
    for n in [1usize, 2, 4, 6] {
        let r = hympiexec(&["-n", &n.to_string(), PROBE]);
        assert_eq!(r.code(), Some(0), "n={n}: {r:?}");
        for rank in 0..n {
            let lines = r.lines_with(&format!("rank {rank} of {n}: kvs exchange ok"));
            assert_eq!(lines.len(), 1, "n={n} rank {rank}: {r:?}");
            let line = lines[0];
            assert!(
                line.contains(&format!("mapping (vector,(0,1,{n}))")),
                "{line}"
            );
            assert!(line.contains(&format!("universe {n}")), "{line}");
            assert!(line.contains("appnum 0"), "{line}");
        }
        assert!(r.stderr.is_empty(), "n={n}: {r:?}");
    }
}

#[test]
fn np_spelling_and_singleton_probe() {
    let r = hympiexec(&["-np", "2", PROBE]);
    assert_eq!(r.code(), Some(0), "{r:?}");
    assert_eq!(
        r.lines_with("rank 1 of 2: kvs exchange ok").len(),
        1,
        "{r:?}"
    );
    // Without a launcher the probe is a singleton.
    let mut cmd = Command::new(PROBE);
    for v in ["PMI_FD", "PMI_PORT", "PMI_RANK", "PMI_SIZE", "PMI_ID"] {
        cmd.env_remove(v);
    }
    let r = run_cmd(cmd);
    assert_eq!(r.code(), Some(0), "{r:?}");
    assert!(r.stdout.contains("rank 0 of 1: singleton"), "{r:?}");
}

#[test]
fn nonzero_exit_after_finalize_is_the_job_status_and_kills_nobody() {
    let r = hympiexec(&["-n", "3", PROBE, "exit-after-finalize", "1", "5"]);
    assert_eq!(r.code(), Some(5), "{r:?}");
    for rank in 0..3 {
        assert_eq!(
            r.lines_with(&format!("rank {rank} of 3: done")).len(),
            1,
            "{r:?}"
        );
    }
    assert!(
        r.stderr.contains("rank 1 (pid ")
            && r.stderr.contains("exited with status 5 after MPI_Finalize"),
        "{r:?}"
    );
    assert!(!r.stderr.contains("terminating"), "{r:?}");
}

#[test]
fn nonzero_exit_before_finalize_ends_the_job() {
    let r = hympiexec(&["-n", "3", PROBE, "exit-before-finalize", "2", "7"]);
    assert_eq!(r.code(), Some(7), "{r:?}");
    assert!(
        r.stderr.contains("rank 2 (pid ")
            && r.stderr
                .contains("exited with status 7 before MPI_Finalize; terminating the job"),
        "{r:?}"
    );
    assert!(r.elapsed < Duration::from_secs(10), "{r:?}");
}

#[test]
fn exit_zero_without_finalize_after_pmi_init_ends_the_job() {
    let r = hympiexec(&["-n", "3", PROBE, "exit-before-finalize", "0", "0"]);
    assert_eq!(r.code(), Some(1), "{r:?}");
    assert!(
        r.stderr.contains("rank 0 (pid ")
            && r.stderr
                .contains("exited with status 0 without calling MPI_Finalize"),
        "{r:?}"
    );
}

#[test]
fn sigkill_of_one_rank_ends_the_job_within_two_seconds() {
    let r = hympiexec(&["-n", "4", PROBE, "kill", "2"]);
    assert_eq!(r.code(), Some(128 + 9), "{r:?}");
    assert!(r.since("dying") < Duration::from_secs(2), "{r:?}");
    assert!(
        r.stderr.contains("rank 2 (pid ")
            && r.stderr
                .contains("killed by signal 9 (SIGKILL) before MPI_Finalize; terminating the job"),
        "{r:?}"
    );
    // Exactly one report: the collateral deaths are not blamed.
    assert_eq!(r.stderr.matches("hympiexec: rank").count(), 1, "{r:?}");
    let pids = probe_pids(&r);
    assert_eq!(pids.len(), 4, "{r:?}");
    assert!(pids.iter().all(|&p| gone(p)), "ranks left behind: {pids:?}");
}

#[test]
fn ranks_ignoring_sigterm_are_sigkilled() {
    let r = hympiexec(&["-n", "3", PROBE, "kill-stubborn", "0"]);
    assert_eq!(r.code(), Some(128 + 9), "{r:?}");
    assert!(r.stderr.contains("rank 0 (pid "), "{r:?}");
    let since = r.since("dying");
    assert!(since < Duration::from_secs(2), "{r:?}");
    // The survivors outlived SIGTERM: only the SIGKILL after the grace period ended them.
    assert!(since >= Duration::from_millis(450), "{since:?}: {r:?}");
    let pids = probe_pids(&r);
    assert_eq!(pids.len(), 3, "{r:?}");
    assert!(pids.iter().all(|&p| gone(p)), "{r:?}");
}

#[test]
fn abort_ends_the_job_with_its_code() {
    let r = hympiexec(&["-n", "3", PROBE, "abort", "1", "3"]);
    assert_eq!(r.code(), Some(3), "{r:?}");
    assert!(
        r.stderr.contains(
            "hympiexec: rank 1 called MPI_Abort(MPI_COMM_WORLD, 3): probe abort from rank 1"
        ),
        "{r:?}"
    );
    // The aborting rank sleeps instead of exiting: it is killed too.
    assert!(r.since("aborting") < Duration::from_secs(2), "{r:?}");
}

#[test]
fn tag_output_prefixes_every_line() {
    let r = hympiexec(&["-n", "2", "--tag-output", PROBE, "lines", "20"]);
    assert_eq!(r.code(), Some(0), "{r:?}");
    let out: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(out.len(), 40, "{r:?}");
    for line in &out {
        let (tag, rest) = line.split_once(' ').unwrap();
        let rank = tag.trim_start_matches('[').trim_end_matches(']');
        assert!(rest.ends_with(&format!("of rank {rank}")), "{line}");
        assert!(rest.starts_with("out "), "{line}");
    }
    let err: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(err.len(), 40, "{r:?}");
    for line in &err {
        let (tag, rest) = line.split_once(' ').unwrap();
        let rank = tag.trim_start_matches('[').trim_end_matches(']');
        assert!(
            rest.starts_with("err ") && rest.ends_with(&format!("of rank {rank}")),
            "{line}"
        );
    }
    // Without the option, lines are relayed untouched.
    let r = hympiexec(&["-n", "2", PROBE, "lines", "2"]);
    assert!(r.stdout.lines().all(|l| l.starts_with("out ")), "{r:?}");
}

#[test]
fn environment_is_passed_and_x_sets_variables() {
    let mut cmd = Command::new(HYMPIEXEC);
    cmd.args([
        "-n",
        "2",
        "-x",
        "HYMPI_T_A=foo bar",
        "-x",
        "HYMPI_T_B",
        PROBE,
        "env",
    ])
    .args([
        "HYMPI_T_A",
        "HYMPI_T_B",
        "HYMPI_T_C",
        "HYMPI_LOCAL_RANK",
        "HYMPI_LOCAL_SIZE",
    ])
    .args(["PMI_PORT", "PMI_SIZE"])
    .env("HYMPI_T_B", "from-launcher")
    .env("HYMPI_T_C", "inherited")
    .env("HYMPI_T_A", "overridden")
    // A foreign launcher's variable must not reach the ranks.
    .env("PMI_PORT", "127.0.0.1:1");
    let r = run_cmd(cmd);
    assert_eq!(r.code(), Some(0), "{r:?}");
    for rank in 0..2 {
        for want in [
            "HYMPI_T_A=foo bar".to_string(),
            "HYMPI_T_B=from-launcher".to_string(),
            "HYMPI_T_C=inherited".to_string(),
            format!("HYMPI_LOCAL_RANK={rank}"),
            "HYMPI_LOCAL_SIZE=2".to_string(),
            "PMI_PORT unset".to_string(),
            "PMI_SIZE=2".to_string(),
        ] {
            let line = format!("rank {rank}: {want}");
            assert!(
                r.stdout.lines().any(|l| l == line),
                "missing {line:?}: {r:?}"
            );
        }
    }
    // -x of an unset variable warns and passes nothing.
    let mut cmd = Command::new(HYMPIEXEC);
    cmd.args(["-x", "HYMPI_T_UNSET", PROBE, "env", "HYMPI_T_UNSET"])
        .env_remove("HYMPI_T_UNSET");
    let r = run_cmd(cmd);
    assert_eq!(r.code(), Some(0), "{r:?}");
    assert!(r.stderr.contains("HYMPI_T_UNSET"), "{r:?}");
    assert!(r.stdout.contains("HYMPI_T_UNSET unset"), "{r:?}");
}

#[test]
fn programs_without_pmi_and_missing_programs() {
    assert_eq!(hympiexec(&["-n", "3", "true"]).code(), Some(0));
    let r = hympiexec(&["-n", "2", "false"]);
    assert_eq!(r.code(), Some(1), "{r:?}");
    let r = hympiexec(&["-n", "2", "/nonexistent/hympi-prog"]);
    assert_eq!(r.code(), Some(127), "{r:?}");
    assert!(r.stderr.contains("cannot start rank 0"), "{r:?}");
    let r = hympiexec(&["-n", "2", "sh", "-c", "kill -SEGV $$"]);
    assert_eq!(r.code(), Some(128 + 11), "{r:?}");
    assert!(r.stderr.contains("killed by signal 11 (SIGSEGV)"), "{r:?}");
}

#[test]
fn usage_errors_help_and_version() {
    let r = hympiexec(&[]);
    assert_eq!(r.code(), Some(2), "{r:?}");
    assert!(r.stderr.contains("no program given"), "{r:?}");
    assert_eq!(hympiexec(&["-n", "0", "true"]).code(), Some(2));
    assert_eq!(
        hympiexec(&["--bind-to", "hwthread", "true"]).code(),
        Some(2)
    );
    let r = hympiexec(&["--help"]);
    assert_eq!(r.code(), Some(0));
    assert!(r.stdout.contains("Usage: hympiexec"), "{r:?}");
    let r = hympiexec(&["--version"]);
    assert!(r.stdout.contains(env!("CARGO_PKG_VERSION")), "{r:?}");
}

#[test]
fn sigterm_to_the_launcher_is_forwarded() {
    let start = Instant::now();
    let mut child = Command::new(HYMPIEXEC)
        .args(["-n", "2", PROBE, "sleep"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until both ranks sleep.
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    while seen.matches("sleeping").count() < 2 {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap() == 0 || start.elapsed() > HANG_LIMIT {
            child.kill().ok();
            panic!("ranks never slept: {seen}");
        }
        seen.push_str(&line);
    }
    let signalled = Instant::now();
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    child.stdout = Some(stdout.into_inner());
    let r = finish(child, start);
    assert_eq!(r.code(), Some(128 + 15), "{r:?}");
    assert!(signalled.elapsed() < Duration::from_secs(2), "{r:?}");
    assert!(
        r.stderr
            .contains("received SIGTERM; forwarding it to the ranks"),
        "{r:?}"
    );
    let pids: Vec<i32> = seen
        .lines()
        .filter_map(|l| {
            l.rsplit_once(" pid ")
                .and_then(|(_, p)| p.trim().parse().ok())
        })
        .collect();
    assert_eq!(pids.len(), 2);
    assert!(pids.iter().all(|&p| gone(p)), "{pids:?}");
}

/// This process's CPU list as the probe prints it.
fn own_cpus() -> String {
    // SAFETY: an all-zero cpu_set_t is valid; sched_getaffinity fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    assert_eq!(
        // SAFETY: set is a valid cpu_set_t of the size passed.
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) },
        0
    );
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: cpu < CPU_SETSIZE.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn rank_cpus(r: &Run, rank: usize) -> Vec<usize> {
    let prefix = format!("rank {rank} cpus: ");
    let line = r.lines_with(&prefix);
    assert_eq!(line.len(), 1, "{r:?}");
    line[0][prefix.len()..]
        .split(',')
        .map(|c| c.parse().unwrap())
        .collect()
}

#[test]
fn bind_to_core_pins_ranks_to_distinct_cpus() {
    let r = hympiexec(&[
        "-n",
        "2",
        "--bind-to",
        "core",
        "--report-bindings",
        PROBE,
        "affinity",
    ]);
    assert_eq!(r.code(), Some(0), "{r:?}");
    if r.stderr.contains("not bound") {
        eprintln!("skipped: hwloc could not bind here: {}", r.stderr);
        return;
    }
    let (a, b) = (rank_cpus(&r, 0), rank_cpus(&r, 1));
    assert!(r.stderr.contains("rank 0 bound to CPUs"), "{r:?}");
    let own: Vec<usize> = own_cpus().split(',').map(|c| c.parse().unwrap()).collect();
    assert!(a.iter().chain(&b).all(|c| own.contains(c)), "{r:?}");
    if own.len() >= 2 && a.len() < own.len() {
        // More than one core: two ranks get different cores.
        assert!(
            a.iter().all(|c| !b.contains(c)),
            "overlapping bindings: {r:?}"
        );
    }
    // --bind-to none leaves the inherited affinity.
    let r = hympiexec(&["-n", "2", "--bind-to", "none", PROBE, "affinity"]);
    let own = own_cpus();
    for rank in 0..2 {
        assert_eq!(
            r.lines_with(&format!("rank {rank} cpus: {own}")).len(),
            1,
            "{r:?}"
        );
    }
    // Oversubscribed by default: not bound.
    let r = hympiexec(&["-n", "64", "--report-bindings", "true"]);
    assert_eq!(r.code(), Some(0), "{r:?}");
    assert!(r.stderr.contains("rank 63 not bound"), "{r:?}");
}

/// The path of `mpiexec.hydra`, if installed.
fn hydra() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("mpiexec.hydra"))
        .find(|p| p.is_file())
}

#[test]
fn probe_runs_under_mpich_hydra_in_fd_and_port_modes() {
    let Some(hydra) = hydra() else {
        eprintln!("skipped: mpiexec.hydra not found in PATH (Debian package mpich)");
        return;
    };
    for extra in [&[][..], &["-pmi-port"][..]] {
        let mut cmd = Command::new(&hydra);
        cmd.args(extra).args(["-n", "3", PROBE]);
        let r = run_cmd(cmd);
        assert_eq!(r.code(), Some(0), "hydra {extra:?}: {r:?}");
        for rank in 0..3 {
            let lines = r.lines_with(&format!("rank {rank} of 3: kvs exchange ok"));
            assert_eq!(lines.len(), 1, "hydra {extra:?} rank {rank}: {r:?}");
            assert!(lines[0].contains("mapping (vector,"), "{r:?}");
        }
    }
}

#[test]
fn binding_stays_within_the_launchers_own_cpus() {
    let own: Vec<String> = own_cpus().split(',').map(str::to_string).collect();
    let last = own.last().unwrap().clone();
    if Command::new("taskset").arg("--version").output().is_err() {
        eprintln!("skipped: taskset not available");
        return;
    }
    let mut cmd = Command::new("taskset");
    cmd.args([
        "-c",
        &last,
        HYMPIEXEC,
        "-n",
        "2",
        "--bind-to",
        "core",
        PROBE,
        "affinity",
    ]);
    let r = run_cmd(cmd);
    assert_eq!(r.code(), Some(0), "{r:?}");
    for rank in 0..2 {
        let cpus = rank_cpus(&r, rank);
        assert_eq!(cpus, vec![last.parse::<usize>().unwrap()], "{r:?}");
    }
}

#[test]
fn a_closed_stdout_ends_the_job_like_a_pipeline() {
    let start = Instant::now();
    let mut child = Command::new(HYMPIEXEC)
        .args(["-n", "2", "yes"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "y\n");
    drop(stdout);
    let r = finish(child, start);
    assert_eq!(r.code(), Some(128 + libc::SIGPIPE), "{r:?}");
    assert!(r.stderr.contains("(SIGPIPE)"), "{r:?}");
}
