//! Containment of the processes consumers run (protocol children, debuggers,
//! external tools): every process one of them starts, even one that leaves
//! its session, is killed when dwarfcheck is done with it.
//!
//! How (Linux; docs/protocol.md, "Containment"):
//! - [`spawn`] starts the program as the leader of a session of its own
//!   (`setsid`), so that its session id is its pid, and makes it a *child
//!   subreaper* (`PR_SET_CHILD_SUBREAPER`): a descendant orphaned while it
//!   lives is re-parented to it, not to init, and stays in its tree even
//!   after `setsid`. dwarfcheck makes itself a subreaper too, so that
//!   whatever a contained process leaves when it exits comes to dwarfcheck.
//! - [`Contained::kill_all`] kills, with `SIGKILL`, the program, every
//!   process of its session, every descendant of those, and every process
//!   re-parented to dwarfcheck that is in none of dwarfcheck's own sessions
//!   and is not another live contained program; it reaps what became
//!   dwarfcheck's, and scans again until nothing is left (bounded).
//! - The program itself is reaped last: until then its pid, which is also
//!   its session id, cannot be reused by an unrelated process. So its exit
//!   is observed without reaping it ([`Contained::exited`]).
//!
//! Spawning and killing take one lock, so that a sweep never mistakes a
//! program being started for an orphan.

pub mod procfs;

use std::collections::{BTreeSet, HashMap};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus};
use std::sync::{Mutex, MutexGuard, Once};
use std::time::{Duration, Instant};

/// Pids of the contained programs not yet reaped.
static LIVE: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// Scans of one sweep at most: each kills everything it finds, so more
/// are needed only for processes that fork while being killed.
const MAX_SWEEPS: usize = 32;

fn live() -> MutexGuard<'static, BTreeSet<i32>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// A program started by [`spawn`]; dropping it kills everything it started
/// ([`Contained::kill_all`]).
#[derive(Debug)]
pub struct Contained {
    child: Child,
    pid: i32,
    reaped: Option<ExitStatus>,
}

/// Starts `cmd` contained (see the module docs). `cmd` must not set a
/// process group of its own (the new session gives one).
///
/// Errors: the program cannot be started, or `setsid` fails in the child.
pub fn spawn(cmd: &mut Command) -> std::io::Result<Contained> {
    static SUBREAPER: Once = Once::new();
    SUBREAPER.call_once(|| {
        #[cfg(target_os = "linux")]
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a flag of
        // this process.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        }
    });
    // SAFETY: the closure runs between fork and exec and makes only the
    // async-signal-safe system calls setsid and prctl.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            #[cfg(target_os = "linux")]
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
            Ok(())
        });
    }
    let mut live = live();
    let child = cmd.spawn()?;
    let pid = child.id() as i32;
    live.insert(pid);
    Ok(Contained { child, pid, reaped: None })
}

impl Contained {
    /// The program's pid (also its session and process group id).
    pub fn id(&self) -> u32 {
        self.pid as u32
    }

    /// The standard streams to take (`stdin.take()`, ...). Never wait on
    /// the child through it: [`Contained::exited`] and
    /// [`Contained::kill_all`] do.
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// How the program ended, if it has, without reaping it (its
    /// descendants may still run). `None` while it runs.
    pub fn exited(&self) -> Option<ExitStatus> {
        if self.reaped.is_some() {
            return self.reaped;
        }
        // SAFETY: waitid writes only into `info`; WNOWAIT leaves the child
        // waitable, so its pid stays reserved.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
            if libc::waitid(libc::P_PID, self.pid as libc::id_t, &mut info, flags) != 0 || info.si_pid() == 0 {
                return None;
            }
            let status = info.si_status();
            let raw = match info.si_code {
                libc::CLD_EXITED => (status & 0xff) << 8,
                libc::CLD_KILLED => status & 0x7f,
                libc::CLD_DUMPED => (status & 0x7f) | 0x80,
                _ => return None,
            };
            Some(ExitStatus::from_raw(raw))
        }
    }

    /// Kills the program and everything it started (see the module docs),
    /// reaps it, and returns how it ended. Idempotent.
    pub fn kill_all(&mut self) -> Option<ExitStatus> {
        if self.reaped.is_some() {
            return self.reaped;
        }
        let mut live = live();
        sweep(self.pid, &live);
        // SAFETY: kill has no memory effects; the pid is our unreaped child.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
        }
        self.reaped = self.child.wait().ok();
        live.remove(&self.pid);
        self.reaped
    }
}

impl Drop for Contained {
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// Kills program `leader`'s session, the descendants of its members, and
/// the orphans re-parented to dwarfcheck that belong to no live contained
/// program, until a scan finds none alive; reaps those that are
/// dwarfcheck's children (but not `leader`).
fn sweep(leader: i32, live: &BTreeSet<i32>) {
    // SAFETY: getpid and getsid have no preconditions.
    let (me, my_session) = unsafe { (libc::getpid(), libc::getsid(0)) };
    for _ in 0..MAX_SWEEPS {
        let table = procfs::table();
        let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
        for p in &table {
            children.entry(p.ppid).or_default().push(p.pid);
        }
        let mut found: BTreeSet<i32> = std::iter::once(leader)
            .chain(table.iter().filter(|p| p.sid == leader).map(|p| p.pid))
            .chain(
                table.iter().filter(|p| p.ppid == me && p.sid != my_session && !live.contains(&p.pid)).map(|p| p.pid),
            )
            .collect();
        let mut todo: Vec<i32> = found.iter().copied().collect();
        while let Some(pid) = todo.pop() {
            for &c in children.get(&pid).into_iter().flatten() {
                if found.insert(c) {
                    todo.push(c);
                }
            }
        }
        let rows: Vec<&procfs::Proc> = table.iter().filter(|p| found.contains(&p.pid)).collect();
        let alive: Vec<i32> = rows.iter().filter(|p| !p.zombie).map(|p| p.pid).collect();
        let ours: Vec<i32> = rows.iter().filter(|p| p.ppid == me && p.pid != leader).map(|p| p.pid).collect();
        if alive.is_empty() && ours.is_empty() {
            return;
        }
        for pid in alive {
            // SAFETY: kill has no memory effects.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        for pid in ours {
            reap(pid);
        }
    }
}

/// Waits up to 100 ms for dwarfcheck's child `pid` to end, reaping it.
fn reap(pid: i32) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(100) {
        let mut status = 0;
        // SAFETY: waitpid writes only into `status`.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r != 0 {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}
