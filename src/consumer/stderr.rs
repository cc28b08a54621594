//! A consumer's stderr, kept in a bounded log: the first and the last
//! bytes it wrote, and how many there were in all (docs/protocol.md,
//! "Faults, timeouts, restarts").

use serde::Serialize;
use std::collections::VecDeque;
use std::io::Read;
use std::sync::Mutex;

/// Bytes of stderr kept per consumer by default: 64 KiB, half from the
/// start and half from the end.
pub const DEFAULT_CAP: usize = 64 << 10;

/// What a consumer wrote to stderr, within a cap of bytes kept.
#[derive(Debug)]
pub struct StderrLog {
    cap: usize,
    inner: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

/// A log as text, for reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Excerpt {
    /// Bytes written in all.
    pub bytes: u64,
    /// Whether bytes in the middle were left out.
    pub truncated: bool,
    /// The kept bytes (decoded lossily as UTF-8); where bytes were left
    /// out, a line `[... N bytes left out ...]` between head and tail.
    pub text: String,
}

impl StderrLog {
    /// An empty log keeping at most `cap` bytes (`cap / 2` of the head, the
    /// rest of the tail).
    pub fn new(cap: usize) -> Self {
        StderrLog { cap, inner: Mutex::new(Kept::default()) }
    }

    /// Appends `bytes`: into the head while it has room, else into the
    /// tail, whose oldest bytes are dropped beyond its share.
    pub fn push(&self, mut bytes: &[u8]) {
        let mut k = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        k.total += bytes.len() as u64;
        let head_cap = self.cap / 2;
        let room = head_cap.saturating_sub(k.head.len());
        if room > 0 && k.tail.is_empty() {
            let n = room.min(bytes.len());
            k.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        let tail_cap = self.cap - head_cap;
        if bytes.len() >= tail_cap {
            k.tail.clear();
            bytes = &bytes[bytes.len() - tail_cap..];
        }
        let over = (k.tail.len() + bytes.len()).saturating_sub(tail_cap);
        k.tail.drain(..over);
        k.tail.extend(bytes);
    }

    /// Reads `from` to its end (or a read error) into the log; for a
    /// thread of its own per child.
    pub fn drain(&self, mut from: impl Read) {
        let mut buf = [0u8; 8192];
        while let Ok(n @ 1..) = from.read(&mut buf) {
            self.push(&buf[..n]);
        }
    }

    /// The log as text, or `None` when nothing was written.
    pub fn excerpt(&self) -> Option<Excerpt> {
        let k = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if k.total == 0 {
            return None;
        }
        let kept = (k.head.len() + k.tail.len()) as u64;
        let mut text = String::from_utf8_lossy(&k.head).into_owned();
        if kept < k.total {
            text.push_str(&format!("\n[... {} bytes left out ...]\n", k.total - kept));
        }
        let (a, b) = k.tail.as_slices();
        text.push_str(&String::from_utf8_lossy(&[a, b].concat()));
        Some(Excerpt { bytes: k.total, truncated: kept < k.total, text })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_log_is_kept_whole() {
        let log = StderrLog::new(16);
        assert_eq!(log.excerpt(), None);
        log.push(b"abc");
        log.push(b"defgh");
        assert_eq!(log.excerpt(), Some(Excerpt { bytes: 8, truncated: false, text: "abcdefgh".into() }));
    }

    #[test]
    fn a_long_log_keeps_its_head_and_tail() {
        // 26 letters, one push each, into 10 bytes: the first 5 and last 5.
        let log = StderrLog::new(10);
        for c in b'a'..=b'z' {
            log.push(&[c]);
        }
        let e = log.excerpt().unwrap();
        assert_eq!((e.bytes, e.truncated), (26, true));
        assert_eq!(e.text, "abcde\n[... 16 bytes left out ...]\nvwxyz");
        // One big push does the same.
        let log = StderrLog::new(10);
        log.push(&(b'a'..=b'z').collect::<Vec<u8>>());
        assert_eq!(log.excerpt().unwrap().text, e.text);
    }
}
