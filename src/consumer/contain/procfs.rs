//! The process table as Linux's `/proc` shows it: each process's parent,
//! session and state, for finding every process a consumer left behind.

/// One process of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proc {
    /// Its process id.
    pub pid: i32,
    /// Its parent's process id (after any re-parenting).
    pub ppid: i32,
    /// Its session id (the pid of the session's leader when it started it).
    pub sid: i32,
    /// Whether it has exited and waits to be reaped by its parent.
    pub zombie: bool,
}

/// Every process of `/proc` that could be read. A process that ends while
/// the table is read is left out; an unreadable `/proc` gives an empty
/// table.
pub fn table() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
        parse_stat(pid, &stat)
    })
    .collect()
}

/// Parses `/proc/PID/stat`: `pid (comm) state ppid pgrp session ...`. The
/// command name may hold spaces and parentheses, so the fields are read
/// after its last `)`.
pub fn parse_stat(pid: i32, stat: &str) -> Option<Proc> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut f = rest.split_ascii_whitespace();
    let state = f.next()?;
    let ppid = f.next()?.parse().ok()?;
    let _pgrp = f.next()?;
    let sid = f.next()?.parse().ok()?;
    Some(Proc { pid, ppid, sid, zombie: state == "Z" || state == "X" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_name_with_spaces_and_parentheses() {
        let p = parse_stat(42, "42 (a (b) c) S 7 42 40 0 -1 4194560 1 0").unwrap();
        assert_eq!(p, Proc { pid: 42, ppid: 7, sid: 40, zombie: false });
        assert!(parse_stat(1, "1 (x) Z 0 1 1").unwrap().zombie);
        assert_eq!(parse_stat(1, "garbage"), None);
    }

    #[test]
    fn this_process_is_in_the_table_with_its_parent_and_session() {
        // The kernel's own answers (getppid, getsid) are the oracle.
        let me = std::process::id() as i32;
        let row = table().into_iter().find(|p| p.pid == me).expect("this process is listed");
        // SAFETY: getppid and getsid have no preconditions.
        let (ppid, sid) = unsafe { (libc::getppid(), libc::getsid(0)) };
        assert_eq!(row, Proc { pid: me, ppid, sid, zombie: false });
    }
}
