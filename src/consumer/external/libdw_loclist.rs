//! elfutils libdw as a location-list consumer (`--consumers libdw-loclist`,
//! docs/consumers.md "libdw-loclist"): which entries of a location list
//! libdw selects at the program counter (`dwarf_getlocation_addr`).
//!
//! Each location-list case is synthesised into an executable ([`crate::synth`];
//! the list is re-written entry by entry, at the case's addresses) and the C
//! helper `libdw_loclist.c` reports, for the variable `v`, every entry libdw
//! reads (`dwarf_getlocations`: its `[start, end)`, addresses in bytes) and
//! which of them `dwarf_getlocation_addr` selects at the case's pc.
//!
//! libdw is judged on the selection only: its answer is what the reference
//! evaluates over the entries libdw selected ([`Selection::outcome`]). So the
//! answer equals the reference's exactly when libdw selects the entries the
//! reference's `loclist.bounded-match` and `loclist.default-entry` rules
//! select, or entries that locate the variable the same way.

use super::process::{self, RunBudget, TempDir};
use crate::case::ExprCase;
use crate::consumer::builtin::with_reference_state;
use crate::consumer::{Consumer, ConsumerError, Support};
use crate::edition::Edition;
use crate::synth::{self, VarShape};
use dwarfcheck_core::context::{AttrForm, AttrValue};
use dwarfcheck_core::outcome::{CfiOutcome, Failure, Outcome};
use dwarfcheck_core::rules::RuleId;
use dwarfcheck_reference::expr::loclist::{read_list, ListEntry};
use std::ffi::OsStr;
use std::path::PathBuf;

/// The helper's source.
const SOURCE: &str = include_str!("libdw_loclist.c");

/// The entry range libdw reports for a default entry (`DW_LLE_default_location`)
/// and for a single expression: the whole address space.
const WHOLE: (u64, u64) = (0, u64::MAX);

/// What the helper printed for one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// `dwarf_getlocation_addr`'s count; negative when libdw refused the
    /// list (then `error` says why).
    pub selected: i64,
    /// Every entry `dwarf_getlocations` reported, in order: `[start, end)`
    /// in bytes, and whether it was selected.
    pub entries: Vec<((u64, u64), bool)>,
    /// libdw's error message, if a call failed.
    pub error: Option<String>,
}

impl Selection {
    /// Parses the helper's output (the format is in `libdw_loclist.c`).
    /// `None` when the output has no `selected` line.
    pub fn parse(text: &str) -> Option<Selection> {
        let mut selected = None;
        let mut entries = Vec::new();
        let mut error = None;
        for line in text.lines() {
            let mut w = line.split_whitespace();
            match w.next() {
                Some("selected") => selected = w.next()?.parse::<i64>().ok(),
                Some("entry") => {
                    let mut num = || parse_u64(w.next()?);
                    let (start, end, sel) = (num()?, num()?, num()?);
                    entries.push(((start, end), sel == 1));
                }
                Some("error") => error = Some(line["error".len()..].trim().to_string()),
                _ => {}
            }
        }
        Some(Selection { selected: selected?, entries, error })
    }

    /// The ranges of the selected entries, in list order.
    pub fn ranges(&self) -> Vec<(u64, u64)> {
        self.entries.iter().filter(|(_, s)| *s).map(|(r, _)| *r).collect()
    }

    /// libdw's answer to `case` as an outcome:
    /// - libdw refused the list: ill-formed, rule `libdw:<message>`;
    /// - it selected the entries the reference's list matching selects
    ///   (same ranges): the reference's outcome for the case;
    /// - it selected no entry: the reference's evaluation of an empty
    ///   location description (undefined, DWARF 5 §2.6.1.1.1);
    /// - one entry the reference reads with that range: the reference's
    ///   evaluation of that entry's expression, as the attribute's single
    ///   expression;
    /// - otherwise (several entries, or a range the reference does not
    ///   read): an evaluation error `libdw:selected <ranges>`, which
    ///   disagrees with any result.
    pub fn outcome(&self, case: &ExprCase, reference: &Outcome) -> Outcome {
        if self.selected < 0 {
            let message = self.error.clone().unwrap_or_default();
            return Outcome::Failed(Failure::IllFormed { rule: RuleId::new(format!("libdw:{message}")), at: None });
        }
        let ours = self.ranges();
        let list = read_list(&*case.ctx, case.value()).unwrap_or_default();
        let pc = case.ctx.pc.unwrap_or(0);
        let matching: Vec<(u64, u64)> =
            dwarfcheck_reference::expr::loclist::matching(&list, pc).iter().map(|e| range_of(e)).collect();
        if ours == matching {
            return reference.clone();
        }
        let evaluate = |expr: &[u8]| {
            with_reference_state(&case.ctx, |state| {
                dwarfcheck_reference::expr::evaluate_attribute(case.attribute, AttrValue::Exprloc(expr), state).0
            })
        };
        match ours.as_slice() {
            [] => evaluate(&[]),
            [one] => match list.iter().find(|e| range_of(e) == *one) {
                Some(e) => evaluate(&e.expr),
                None => selected_error(&ours),
            },
            _ => selected_error(&ours),
        }
    }
}

/// The range libdw reports for `e` ([`WHOLE`] for a default entry).
fn range_of(e: &ListEntry) -> (u64, u64) {
    e.range.unwrap_or(WHOLE)
}

/// The evaluation error standing for a selection the reference cannot
/// evaluate as libdw's answer.
fn selected_error(ranges: &[(u64, u64)]) -> Outcome {
    let list: Vec<String> = ranges.iter().map(|(b, e)| format!("[{b:#x},{e:#x})")).collect();
    Outcome::Failed(Failure::EvalError { rule: RuleId::new(format!("libdw:selected {}", list.join(" "))), at: None })
}

fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// libdw (elfutils, libdw-dev) through the compiled helper.
pub struct LibdwLoclist {
    helper: PathBuf,
    _dir: TempDir,
    budget: RunBudget,
}

impl std::fmt::Debug for LibdwLoclist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LibdwLoclist").field("helper", &self.helper).finish()
    }
}

impl LibdwLoclist {
    /// Compiles the helper with the system's C compiler, `budget` per run
    /// (compiling and each case).
    ///
    /// Errors: [`ConsumerError::NotInstalled`] when there is no C compiler
    /// or the helper does not compile (no libdw-dev).
    pub fn new(budget: RunBudget) -> Result<Self, ConsumerError> {
        let missing = || ConsumerError::NotInstalled {
            consumer: "libdw-loclist",
            programs: &["cc ... -ldw -lelf"],
            package: "libdw-dev (elfutils) and a C compiler",
        };
        let compiler = process::find_program(&["cc", "gcc"]).ok_or_else(missing)?;
        let (dir, helper) = process::compile_c_helper(&compiler, "libdw_loclist", SOURCE, &["-ldw", "-lelf"], budget)
            .ok_or_else(missing)?;
        Ok(LibdwLoclist { helper, _dir: dir, budget })
    }

    /// libdw's selection for `case`, or the outcome the case gets instead
    /// (unsupported when it is not a location list or cannot be
    /// synthesised; a consumer fault when the helper fails).
    pub fn selection(&self, case: &ExprCase) -> Result<Selection, Outcome> {
        let unsupported = |what: String| Outcome::Failed(Failure::Unsupported { what });
        let fault = |what: String| Outcome::Failed(Failure::ConsumerFault { what });
        if !matches!(case.form, Some(AttrForm::LocList { .. } | AttrForm::LocListX { .. })) {
            return Err(unsupported("libdw-loclist is judged on location lists only".into()));
        }
        let pc = case.ctx.pc.ok_or_else(|| unsupported("no pc".into()))?;
        // The variable's shape does not change which entries match.
        let shape = VarShape::Bytes { byte_size: 8, stack_value: false };
        let debuggee = synth::synthesise(case, shape).map_err(|e| unsupported(e.to_string()))?;
        let dir = TempDir::new().map_err(|e| fault(format!("temporary directory: {e}")))?;
        let exe = dir.path().join("case");
        std::fs::write(&exe, &debuggee.executable).map_err(|e| fault(format!("writing the executable: {e}")))?;
        let pc = format!("{pc:#x}");
        let args = [exe.as_os_str(), OsStr::new(&pc)];
        let out = process::run(&self.helper, &args, dir.path(), self.budget).map_err(|e| fault(e.to_string()))?;
        Selection::parse(&out.text).ok_or_else(|| fault(format!("unexpected helper output: {}", out.text.trim())))
    }
}

impl Consumer for LibdwLoclist {
    fn name(&self) -> &str {
        "libdw-loclist"
    }

    fn version(&self) -> Option<String> {
        process::version_line(&self.helper)
    }

    /// Expression cases whose attribute is a location list, DWARF 5 and
    /// GNU input (libdw knows no hetero-2020 operation, but the selection
    /// does not decode the entries).
    fn supports(&self) -> Support {
        Support { editions: vec![Edition::Dwarf5, Edition::Dwarf5Gnu], expr: true, cfi: false }
    }

    fn evaluate(&self, case: &ExprCase) -> Outcome {
        let reference = crate::consumer::builtin::reference_outcome(case).0;
        match self.selection(case) {
            Ok(s) => s.outcome(case, &reference),
            Err(o) => o,
        }
    }

    /// LD1 of docs/consumers.md ("libdw-loclist"): libdw selected a
    /// default entry (`DW_LLE_default_location`, which it reports as
    /// covering every address) together with the bounded entries the
    /// reference selects.
    fn failure_class(
        &self,
        case: &crate::case::Case,
        _reference: crate::consumer::Answer<'_>,
        _answer: crate::consumer::Answer<'_>,
    ) -> Option<crate::consumer::FailureClass> {
        let crate::case::Case::Expr(e) = case else { return None };
        let ours = self.selection(e).ok()?.ranges();
        let list = read_list(&*e.ctx, e.value()).ok()?;
        let bounded: Vec<(u64, u64)> =
            dwarfcheck_reference::expr::loclist::matching(&list, e.ctx.pc?).iter().map(|e| range_of(e)).collect();
        let default = list.iter().any(|e| e.range.is_none());
        let ld1 = default
            && !bounded.contains(&WHOLE)
            && !bounded.is_empty()
            && ours.contains(&WHOLE)
            && ours.iter().filter(|r| **r != WHOLE).copied().collect::<Vec<_>>() == bounded;
        ld1.then(|| crate::consumer::FailureClass {
            id: "LD1".into(),
            explanation: "selects the default entry (DW_LLE_default_location) as well where a bounded entry \
                          covers the pc; DWARF 5 §2.6.2 uses the default only where none does"
                .into(),
            docs: Some("docs/consumers.md#libdw-loclist---consumers-libdw-loclist".into()),
            report: None,
        })
    }

    fn frame_table(&self, _case: &crate::case::CfiCase) -> CfiOutcome {
        CfiOutcome::Failed(Failure::Unsupported { what: "libdw-loclist reads location lists only".into() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_helper_output() {
        let s = Selection::parse("selected 1\nentry 0x400010 0x400020 1\nentry 0 0xffffffffffffffff 0\n").unwrap();
        assert_eq!(s.selected, 1);
        assert_eq!(s.ranges(), vec![(0x400010, 0x400020)]);
        assert_eq!(s.entries.len(), 2);
        let e = Selection::parse("selected -1\nerror invalid DWARF\n").unwrap();
        assert_eq!((e.selected, e.error.as_deref()), (-1, Some("invalid DWARF")));
        assert!(Selection::parse("nothing\n").is_none());
    }
}
