//! A corrupted FDE cannot make `elf`'s virtual unwinding run away (issue
//! 13, fourth reproduction): an FDE of a real `libc.so.6` given a
//! `pc_range` of 2.7 GB covers every address above it, so unwinding from
//! a synthetic state keeps finding callers in it. Each sampled unwinding
//! now stops at its frames budget (`elf::frames::SAMPLE_FRAMES`).

use object::{Object, ObjectSection};
use std::process::Command;

const LIBC: &str = "/usr/lib/x86_64-linux-gnu/libc.so.6";

/// `libc.so.6` with the `pc_range` of the FDE in the middle of its
/// `.eh_frame` set to 0xa000_0000, or `None` when the machine has no such
/// file. Assumes what Debian's libc uses: 32-bit entry lengths and FDE
/// addresses encoded in 4 bytes (`DW_EH_PE_pcrel | DW_EH_PE_sdata4`), so
/// that `pc_range` is the 4 bytes at FDE offset 12.
fn corrupted_libc() -> Option<Vec<u8>> {
    let mut bytes = std::fs::read(LIBC).ok()?;
    let file = object::File::parse(&*bytes).ok()?;
    let eh = file.section_by_name(".eh_frame")?;
    let (start, size) = eh.file_range()?;
    let data = &bytes[start as usize..(start + size) as usize];
    let mut fdes = Vec::new();
    let mut pos = 0usize;
    while pos + 8 <= data.len() {
        let len = u32::from_le_bytes(data[pos..pos + 4].try_into().unwrap()) as usize;
        if len == 0 || len == 0xffff_ffff {
            break;
        }
        let id = u32::from_le_bytes(data[pos + 4..pos + 8].try_into().unwrap());
        if id != 0 {
            fdes.push(pos);
        }
        pos += 4 + len;
    }
    let fde = *fdes.get(fdes.len() / 2)?;
    let at = start as usize + fde + 12;
    bytes[at..at + 4].copy_from_slice(&0xa000_0000u32.to_le_bytes());
    Some(bytes)
}

#[test]
fn a_corrupted_fde_ends_each_sampled_unwinding_at_its_frames_budget() {
    let Some(bytes) = corrupted_libc() else {
        eprintln!("skipped: {LIBC} not found");
        return;
    };
    let dir = std::env::temp_dir().join(format!("dwarfcheck-runaway-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("libc-corrupted.so");
    std::fs::write(&file, bytes).unwrap();
    // Contained: 1 GiB of virtual memory, killed after 300 s (before the
    // frames budget, 256 samples of 256 slow steps took 30 s and more).
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576; exec timeout -s KILL 300 \"$0\" elf --consumers none \"$1\"")
        .arg(env!("CARGO_BIN_EXE_dwarfcheck"))
        .arg(&file)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    // "reference unwinding: N steps; ends: ... budget frames K ...": the
    // corruption is seen (some sampled unwinding reaches the budget) and no
    // unwinding goes past it.
    let line = text.lines().find(|l| l.contains("reference unwinding:")).expect("an unwinding summary");
    let steps: u64 = line.split_whitespace().nth(2).and_then(|n| n.parse().ok()).expect("a step count");
    let samples: u64 = text
        .split("also unwound")
        .next()
        .and_then(|head| head.rsplit(';').next())
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("a sample count");
    let budget = u64::from(dwarfcheck::elf::frames::SAMPLE_FRAMES);
    assert!(line.contains("budget frames"), "{line}");
    assert!(samples > 0 && steps <= samples * budget, "{steps} steps for {samples} samples: {line}");
}
