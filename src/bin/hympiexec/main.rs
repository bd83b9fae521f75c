//! `hympiexec`: starts the ranks of an MPI job on this node and serves them PMI-1.
//!
//! Modules, one job each: [`args`] (command line), [`binding`] (hwloc CPU sets), [`launch`]
//! (starting one rank), [`server`] (PMI-1 protocol state), [`job`] (the event loop),
//! [`output`] (line relay), [`signals`] (self-pipe), [`status`] (exit statuses).

mod args;
mod binding;
mod job;
mod launch;
mod output;
mod server;
mod signals;
mod status;

use args::Command;

fn main() {
    let code = match args::parse(std::env::args_os().skip(1)) {
        Ok(Command::Help) => {
            println!("{}", args::USAGE);
            0
        }
        Ok(Command::Version) => {
            println!(
                "hympiexec (hympi {}): PMI-1 launcher for one node",
                env!("CARGO_PKG_VERSION")
            );
            0
        }
        Ok(Command::Run(opts)) => job::run(&opts),
        Err(e) => {
            eprintln!("hympiexec: {e}\nTry 'hympiexec --help' for more information.");
            2
        }
    };
    std::process::exit(code);
}
