//! Shared by the test binaries: libc's `.eh_frame` on this machine, read
//! with a minimal ELF64 section-header walk (the crate depends on no ELF
//! reader), and the pcs to unwind from.

#![allow(dead_code)]

use dwarfcheck_core::cfi::{CfiSection, FrameKind};
use dwarfcheck_core::target::presets;
use dwarfcheck_fast::unwind::FdeIndex;
use std::sync::Arc;

/// Where libc is (the tests are skipped without it).
pub const LIBC: &str = "/usr/lib/x86_64-linux-gnu/libc.so.6";

fn u16_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?)))
}

fn u32_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?)))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The `.eh_frame` of the little-endian ELF64 x86-64 file `path`, or `None`
/// when the file is missing or not one.
pub fn eh_frame(path: &str) -> Option<CfiSection> {
    let f = std::fs::read(path).ok()?;
    if f.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let shoff = u64_at(&f, 0x28)? as usize;
    let shentsize = u16_at(&f, 0x3a)? as usize;
    let shnum = u16_at(&f, 0x3c)? as usize;
    let shstrndx = u16_at(&f, 0x3e)? as usize;
    let header = |i: usize| shoff + i * shentsize;
    let strtab = u64_at(&f, header(shstrndx) + 24)? as usize;
    for i in 0..shnum {
        let h = header(i);
        let name = strtab + u32_at(&f, h)? as usize;
        if f.get(name..name + 10)? == b".eh_frame\0" {
            let (addr, off, size) = (u64_at(&f, h + 16)?, u64_at(&f, h + 24)? as usize, u64_at(&f, h + 32)? as usize);
            let bytes = f.get(off..off + size)?.to_vec();
            return Some(CfiSection::new(FrameKind::EhFrame, bytes, addr, Arc::new(presets::x86_64())));
        }
    }
    None
}

/// Program locations in every FDE of `index`: its first address, the
/// next few, its middle and its last.
pub fn pcs(index: &FdeIndex) -> Vec<u64> {
    let mut out = Vec::new();
    for f in &index.fdes {
        let len = (f.end - u128::from(f.begin)) as u64;
        if len == 0 {
            continue;
        }
        for d in [0, 1, 4, 9, len / 2, len - 1] {
            if d < len {
                out.push(f.begin + d);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}
