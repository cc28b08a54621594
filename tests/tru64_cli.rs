//! `dwarfcheck tru64` on the worked example of §12.3.2.4 (a `.tru64`
//! description) and on its bytes as a raw stream: the records with their
//! offsets, the children at the addresses derived by hand, `--at`, the
//! exit status, and a broken stream's fault.

use std::path::PathBuf;
use std::process::Command;

fn run(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_dwarfcheck")).arg("tru64").args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

fn example() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases/tru64/worked-example.tru64").display().to_string()
}

#[test]
fn describes_the_worked_example() {
    let (code, out) = run(&[&example(), "--at", "0x120001864"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0x0010 split, 1 description(s)"), "{out}");
    assert!(out.contains("0x0027 stLocal scVarRegister 0x11 for 1 instruction(s) from 0x120001860"), "{out}");
    assert!(out.contains("0x0035 stLocal scVarRegister 0x0 for 2 instruction(s) from 0x1200018c8"), "{out}");
    assert!(out.contains("local (0, 5): stLocal scVarRegister 0x0\n"), "{out}");
    // Five entries (tests/tru64_lower.rs has them by hand), evaluated at
    // each of the 52 instructions up to the last child.
    assert!(out.contains("lowering: 1 variable(s), 1 list(s), 5 entries (0 location(s) not lowered)"), "{out}");
    assert!(out.contains("52 point(s) over 52 instruction(s), 0 disagreement(s)"), "{out}");
}

#[test]
fn reads_raw_streams_and_reports_faults() {
    let c = &dwarfcheck::tru64::cases::load(std::path::Path::new(&example())).unwrap().cases[0];
    let bytes = dwarfcheck::tru64::cases::bytes_of(c).unwrap();
    let dir = std::env::temp_dir().join(format!("dwarfcheck-tru64-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let whole = dir.join("example.bin");
    std::fs::write(&whole, &bytes).unwrap();
    let (code, out) = run(&[whole.to_str().unwrap(), "--base", "0x120001800", "--json", "--at", "0x120001860"]);
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["entries"].as_array().unwrap().len(), 3);
    assert_eq!(v[0]["at"]["variables"][0][1]["children"][0]["value"], 0x11);
    // No symbols given for a raw stream: no default, three child entries.
    assert_eq!(v[0]["lowering"]["entries"], 3);
    assert_eq!(v[0]["lowering"]["disagreement_count"], 0);
    // Cut inside the split record: its ppode_len passes the data.
    let cut = dir.join("cut.bin");
    std::fs::write(&cut, &bytes[..0x30]).unwrap();
    let (code, out) = run(&[cut.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("tru64.ppode-len at byte 0x14"), "{out}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `dwarfcheck matrix` on `.tru64` files alone writes the Tru64 section:
/// GDB and LLDB on the lowering of `split.tru64`, LLDB missing the entry
/// that an overlapping later one hides (hand-derived in
/// src/matrix/tru64.rs). Skipped without LLDB.
#[test]
fn matrix_on_tru64_files_alone_asks_the_debuggers() {
    if dwarfcheck::consumer::external::process::find_program(&["lldb-19", "lldb"]).is_none() {
        eprintln!("lldb is not installed; skipped");
        return;
    }
    let split = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases/tru64/split.tru64");
    let dir = std::env::temp_dir().join(format!("dwarfcheck-tru64-matrix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let md = dir.join("matrix.md");
    let out = Command::new(env!("CARGO_BIN_EXE_dwarfcheck"))
        .args(["matrix", "--consumers", "lldb", split.to_str().unwrap(), "--out", md.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.contains("## Tru64 lowerings through debuggers"), "{text}");
    assert!(text.contains("| `tru64.split.overlap` | 1 | fail 1 |"), "{text}");
    assert!(text.contains("| lldb | `tru64-dbg.overlapping-entry-missed` | 1 |"), "{text}");
    assert!(text.contains("tru64_var_0 at 0x12000101c"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
