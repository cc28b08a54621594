//! The `dwarfcheck` command line.
fn main() {
    println!("dwarfcheck");
}
