#[test]
fn timing() {
    let bytes =
        std::fs::read("/work/wt-fuzz/fuzz/artifacts/expr_bytes/timeout-d56f009c83e61cbb4a76afae90514eeec6745007")
            .unwrap();
    let input = dwarfcheck::fuzzing::targets::Target::ExprBytes;
    let _ = input;
    let ctx = dwarfcheck::fuzzing::rich_context();
    let case = dwarfcheck::fuzzing::expr_case(&bytes, &ctx);
    let t = std::time::Instant::now();
    let (r, _) = dwarfcheck::reference::expr::evaluate_case(&case);
    eprintln!("reference {:?} {r}", t.elapsed());
    let t = std::time::Instant::now();
    let f = dwarfcheck::fast::expr::evaluate_case(&case);
    eprintln!("fast {:?} {f}", t.elapsed());
    use dwarfcheck::consumer::Consumer;
    let t = std::time::Instant::now();
    let g = dwarfcheck::consumer::gimli::Gimli.evaluate(&case);
    eprintln!("gimli {:?} {g}", t.elapsed());
}
#[test]
fn dis() {
    let bytes =
        std::fs::read("/work/wt-fuzz/fuzz/artifacts/expr_bytes/timeout-d56f009c83e61cbb4a76afae90514eeec6745007")
            .unwrap();
    let ctx = dwarfcheck::fuzzing::rich_context();
    eprintln!("{}", dwarfcheck::asm::expr::disassemble(&bytes, &ctx.target, &ctx.vendor, Default::default(), 8));
}
