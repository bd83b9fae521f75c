//! Dynamic processes: `MPI_Comm_spawn` (`core::objects::spawn`); establishing
//! communication: ports, `MPI_Comm_accept`, `MPI_Comm_connect`, `MPI_Comm_join` (the work
//! is in `core::objects::dynamic`).

use super::comm::c_string;
use super::util::{out, put_string};
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::core::error::{fail, MpiResult};
use crate::core::objects::spawn::{self, SpawnRequest};
use crate::core::objects::{dynamic, names};
use crate::core::runtime;
use core::ffi::{c_char, c_int};

/// Checks info handle `info` (`MPI_INFO_NULL` allowed); hympi reads no key of it here.
fn info_arg(info: MPI_Info) -> MpiResult<()> {
    crate::core::objects::info::lookup_opt(info as usize).map(|_| ())
}

pub(crate) unsafe fn MPI_Open_port(info: MPI_Info, port_name: *mut c_char) -> MpiResult<()> {
    runtime::with(|_| Ok(()))?;
    info_arg(info)?;
    if port_name.is_null() {
        return fail(MPI_ERR_ARG, "port_name must not be NULL");
    }
    let name = dynamic::open_port()?;
    // SAFETY: the caller's buffer holds MPI_MAX_PORT_NAME bytes (the standard's contract).
    unsafe {
        put_string(
            &name,
            port_name,
            MPI_MAX_PORT_NAME as usize,
            std::ptr::null_mut(),
        )
    }
}

pub(crate) unsafe fn MPI_Close_port(port_name: *const c_char) -> MpiResult<()> {
    // SAFETY: the caller's NUL-terminated string.
    let name = unsafe { c_string(port_name, "port_name")? };
    dynamic::close_port(&name)
}

/// The port name argument of accept and connect: significant at the root only (elsewhere
/// it may be anything, even NULL).
unsafe fn port_arg(port_name: *const c_char, root: c_int, comm: MPI_Comm) -> MpiResult<String> {
    let rank = runtime::with(|rt| Ok(rt.comm_plain(comm as usize)?.1.rank))?;
    if rank != root {
        return Ok(String::new());
    }
    // SAFETY: the caller's NUL-terminated string.
    Ok(unsafe { c_string(port_name, "port_name")? }.into_owned())
}

pub(crate) unsafe fn MPI_Comm_accept(
    port_name: *const c_char,
    info: MPI_Info,
    root: c_int,
    comm: MPI_Comm,
    newcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    let slot = out(newcomm, "newcomm")?;
    info_arg(info)?;
    // SAFETY: the caller's argument, forwarded.
    let port = unsafe { port_arg(port_name, root, comm)? };
    *slot = dynamic::establish(&port, root, comm as usize, true)? as MPI_Comm;
    Ok(())
}

pub(crate) unsafe fn MPI_Comm_connect(
    port_name: *const c_char,
    info: MPI_Info,
    root: c_int,
    comm: MPI_Comm,
    newcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    let slot = out(newcomm, "newcomm")?;
    info_arg(info)?;
    // SAFETY: the caller's argument, forwarded.
    let port = unsafe { port_arg(port_name, root, comm)? };
    *slot = dynamic::establish(&port, root, comm as usize, false)? as MPI_Comm;
    Ok(())
}

/// Sends all of `bytes` on socket `fd`.
fn write_all(fd: c_int, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is readable for its length; a bad descriptor only fails the call.
        // MSG_NOSIGNAL: a peer that closed its end gives EPIPE, not SIGPIPE.
        let n = unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}

/// Reads exactly `out.len()` bytes from socket `fd`.
fn read_exact(fd: c_int, out: &mut [u8]) -> std::io::Result<()> {
    let mut got = 0;
    while got < out.len() {
        // SAFETY: the rest of `out` is writable; a bad descriptor only fails the call.
        let n = unsafe { libc::read(fd, out[got..].as_mut_ptr().cast(), out.len() - got) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        got += n as usize;
    }
    Ok(())
}

/// `MPI_Comm_join`: both processes open a port and send its name (length first, 4 bytes
/// little-endian) over the socket; the one whose name sorts first accepts.
pub(crate) unsafe fn MPI_Comm_join(fd: c_int, intercomm: *mut MPI_Comm) -> MpiResult<()> {
    let slot = out(intercomm, "intercomm")?;
    runtime::with(|_| Ok(()))?;
    let mine = dynamic::open_port()?;
    let swapped = (|| {
        write_all(fd, &(mine.len() as u32).to_le_bytes())?;
        write_all(fd, mine.as_bytes())?;
        let mut len = [0u8; 4];
        read_exact(fd, &mut len)?;
        let len = u32::from_le_bytes(len) as usize;
        if len > MPI_MAX_PORT_NAME as usize {
            return Err(std::io::Error::other("the other side sent no port name"));
        }
        let mut theirs = vec![0u8; len];
        read_exact(fd, &mut theirs)?;
        Ok(String::from_utf8_lossy(&theirs).into_owned())
    })();
    let made = match swapped {
        Ok(theirs) => dynamic::join(&mine, &theirs),
        Err(e) => fail(
            MPI_ERR_ARG,
            format!(
                "MPI_Comm_join: socket {fd}: {e} (is the other process calling MPI_Comm_join?)"
            ),
        ),
    };
    dynamic::close_port(&mine)?;
    *slot = made? as MPI_Comm;
    Ok(())
}

/// The strings of a NULL-terminated C array (`MPI_ARGV_NULL`: none).
unsafe fn c_strings(argv: *mut *mut c_char) -> MpiResult<Vec<String>> {
    let mut v = Vec::new();
    if argv.is_null() {
        return Ok(v);
    }
    for i in 0.. {
        // SAFETY: a non-NULL argv is a NULL-terminated array of C strings (the standard's
        // contract), read up to its terminator.
        let s = unsafe { *argv.add(i) };
        if s.is_null() {
            break;
        }
        // SAFETY: each element is a NUL-terminated string.
        v.push(unsafe { c_string(s, "argv[i]")? }.into_owned());
    }
    Ok(v)
}

/// What the root of `MPI_Comm_spawn` asks for, from its C arguments.
unsafe fn spawn_request(
    command: *const c_char,
    argv: *mut *mut c_char,
    maxprocs: c_int,
    info: MPI_Info,
) -> MpiResult<SpawnRequest> {
    let info = crate::core::objects::info::lookup_opt(info as usize)?.unwrap_or_default();
    let key = |k: &str| info.get(k).map(str::to_string);
    Ok(SpawnRequest {
        // SAFETY: the caller's NUL-terminated string.
        command: unsafe { c_string(command, "command")? }.into_owned(),
        // SAFETY: the caller's NULL-terminated array.
        argv: unsafe { c_strings(argv)? },
        maxprocs,
        host: key("host"),
        wdir: key("wdir"),
        path: key("path"),
    })
}

pub(crate) unsafe fn MPI_Comm_spawn(
    command: *const c_char,
    argv: *mut *mut c_char,
    maxprocs: c_int,
    info: MPI_Info,
    root: c_int,
    comm: MPI_Comm,
    intercomm: *mut MPI_Comm,
    array_of_errcodes: *mut c_int,
) -> MpiResult<()> {
    let slot = out(intercomm, "intercomm")?;
    let (rank, size) = runtime::with(|rt| {
        let (_, c) = rt.comm_plain(comm as usize)?;
        Ok((c.rank, c.size))
    })?;
    if root < 0 || root >= size {
        return fail(
            MPI_ERR_ROOT,
            format!("invalid root {root} (the communicator has {size} ranks)"),
        );
    }
    // Arguments are significant at the root only.
    let reqs = if rank == root {
        // SAFETY: the caller's arguments, forwarded.
        vec![unsafe { spawn_request(command, argv, maxprocs, info)? }]
    } else {
        Vec::new()
    };
    let made = spawn::comm_spawn(&reqs, root, comm as usize);
    // SAFETY: the caller's array, one code per process.
    unsafe { set_errcodes(&made, rank == root, maxprocs.max(0), array_of_errcodes)? };
    *slot = made? as MPI_Comm;
    Ok(())
}

/// Fills `MPI_Comm_spawn`'s error codes (unless `MPI_ERRCODES_IGNORE`): one per process,
/// `at_root` the `total` asked for, elsewhere the remote group's size.
unsafe fn set_errcodes(
    made: &MpiResult<usize>,
    at_root: bool,
    total: i32,
    array_of_errcodes: *mut c_int,
) -> MpiResult<()> {
    let n = match (made, at_root) {
        (_, true) => total,
        (Ok(h), false) => runtime::with(|rt| {
            let (_, c) = rt.comm_plain(*h)?;
            Ok(c.remote.as_ref().map_or(0, |r| r.size))
        })?,
        (Err(_), false) => 0,
    };
    if !array_of_errcodes.is_null() {
        let code = match &made {
            Ok(_) => MPI_SUCCESS,
            Err(e) => e.class(),
        };
        // A program built for MPICH (libmpich.so.12) reads MPICH's error classes.
        #[cfg(feature = "mpich-abi")]
        let code = crate::abi::mpich::err_out(code);
        for i in 0..n as usize {
            // SAFETY: the caller's array holds one code per process (maxprocs at the root).
            unsafe { *array_of_errcodes.add(i) = code };
        }
    }
    Ok(())
}

pub(crate) unsafe fn MPI_Comm_spawn_multiple(
    count: c_int,
    array_of_commands: *mut *mut c_char,
    array_of_argv: *mut *mut *mut c_char,
    array_of_maxprocs: *const c_int,
    array_of_info: *const MPI_Info,
    root: c_int,
    comm: MPI_Comm,
    intercomm: *mut MPI_Comm,
    array_of_errcodes: *mut c_int,
) -> MpiResult<()> {
    let slot = out(intercomm, "intercomm")?;
    let (rank, size) = runtime::with(|rt| {
        let (_, c) = rt.comm_plain(comm as usize)?;
        Ok((c.rank, c.size))
    })?;
    if root < 0 || root >= size {
        return fail(
            MPI_ERR_ROOT,
            format!("invalid root {root} (the communicator has {size} ranks)"),
        );
    }
    let mut reqs = Vec::new();
    if rank == root {
        if count <= 0 {
            return fail(
                MPI_ERR_ARG,
                format!("count is {count} (it must be positive)"),
            );
        }
        if array_of_commands.is_null() || array_of_maxprocs.is_null() || array_of_info.is_null() {
            return fail(
                MPI_ERR_ARG,
                "array_of_commands, array_of_maxprocs and array_of_info must not be NULL",
            );
        }
        for i in 0..count as usize {
            // SAFETY: the caller's arrays hold `count` entries (MPI_ARGVS_NULL: no argv).
            let req = unsafe {
                let argv = if array_of_argv.is_null() {
                    std::ptr::null_mut()
                } else {
                    *array_of_argv.add(i)
                };
                spawn_request(
                    *array_of_commands.add(i),
                    argv,
                    *array_of_maxprocs.add(i),
                    *array_of_info.add(i),
                )?
            };
            reqs.push(req);
        }
    }
    let total = reqs.iter().map(|r| r.maxprocs.max(0)).sum();
    let made = spawn::comm_spawn(&reqs, root, comm as usize);
    // SAFETY: the caller's array, one code per process.
    unsafe { set_errcodes(&made, rank == root, total, array_of_errcodes)? };
    *slot = made? as MPI_Comm;
    Ok(())
}

pub(crate) unsafe fn MPI_Publish_name(
    service_name: *const c_char,
    info: MPI_Info,
    port_name: *const c_char,
) -> MpiResult<()> {
    info_arg(info)?;
    // SAFETY: the caller's NUL-terminated strings.
    let (service, port) = unsafe {
        (
            c_string(service_name, "service_name")?,
            c_string(port_name, "port_name")?,
        )
    };
    names::publish(&service, &port)
}

pub(crate) unsafe fn MPI_Unpublish_name(
    service_name: *const c_char,
    info: MPI_Info,
    port_name: *const c_char,
) -> MpiResult<()> {
    runtime::with(|_| Ok(()))?;
    info_arg(info)?;
    // SAFETY: the caller's NUL-terminated strings.
    let (service, port) = unsafe {
        (
            c_string(service_name, "service_name")?,
            c_string(port_name, "port_name")?,
        )
    };
    names::unpublish(&service, &port)
}

pub(crate) unsafe fn MPI_Lookup_name(
    service_name: *const c_char,
    info: MPI_Info,
    port_name: *mut c_char,
) -> MpiResult<()> {
    runtime::with(|_| Ok(()))?;
    info_arg(info)?;
    // SAFETY: the caller's NUL-terminated string.
    let service = unsafe { c_string(service_name, "service_name")? };
    if port_name.is_null() {
        return fail(MPI_ERR_ARG, "port_name must not be NULL");
    }
    let port = names::lookup(&service)?;
    // SAFETY: the caller's buffer holds MPI_MAX_PORT_NAME bytes (the standard's contract).
    unsafe {
        put_string(
            &port,
            port_name,
            MPI_MAX_PORT_NAME as usize,
            std::ptr::null_mut(),
        )
    }
}
