//! Gives meaning to a parsed case file: target, vendor profile, each
//! expression or CFI case with its context and expectation, with located
//! errors.

use super::context::{assemble, context, expectation, problem, reparse, with_near, Problem, R};
use super::locate::CaseLines;
use super::schema::{CaseSpec, FileSpec};
use super::CaseFileError;
use crate::case::{Case, ExprCase};
use dwarfcheck_core::context::AttrForm;
use dwarfcheck_core::encoding::hex::parse_hex;
use dwarfcheck_core::encoding::VendorProfile;
use dwarfcheck_core::target::Target;
use std::collections::BTreeSet;
use std::sync::Arc;
use yaml_serde::Value as Yaml;

/// Every case of a parsed file, or every located error.
pub fn convert_file(file: &str, text: &str, spec: FileSpec) -> Result<Vec<Case>, Vec<CaseFileError>> {
    let mut errors = Vec::new();
    // One index of the text for every case: locating stays linear.
    let lines = CaseLines::new(text);
    let at = |case: &str, p: Problem| {
        let needles: Vec<&str> = p.near.iter().map(|s| s.as_str()).collect();
        let (line, column) = if case.is_empty() { (1, 1) } else { lines.find_in_case(case, &needles) };
        CaseFileError { file: file.to_string(), line, column, message: p.message }
    };
    let target = match target_of(&spec.target) {
        Ok(t) => Arc::new(t),
        Err(p) => {
            let line = lines.top_key("target");
            return Err(vec![CaseFileError { file: file.to_string(), line, column: 1, message: p.message }]);
        }
    };
    let file_vendor = match &spec.vendor {
        None => target.vendor.clone(),
        Some(v) => match vendor(v) {
            Ok(v) => v,
            Err(p) => {
                let line = lines.top_key("vendor");
                return Err(vec![CaseFileError { file: file.to_string(), line, column: 1, message: p.message }]);
            }
        },
    };
    let mut seen = BTreeSet::new();
    let mut cases = Vec::new();
    for c in spec.cases {
        if !seen.insert(c.name.clone()) {
            errors.push(at(&c.name, problem(format!("case name `{}` is used twice in this file", c.name), &[])));
            continue;
        }
        let name = c.name.clone();
        let line = lines.case_line(&name);
        match convert_case(&target, &file_vendor, c, format!("{file}:{line}")) {
            Ok(case) => cases.push(case),
            Err(p) => errors.push(at(&name, p)),
        }
    }
    if errors.is_empty() {
        Ok(cases)
    } else {
        Err(errors)
    }
}

fn target_of(t: &crate::case::yaml::target::TargetRef) -> R<Target> {
    t.resolve().map_err(|e| problem(format!("target: {e}"), &[]))
}

fn vendor(name: &str) -> R<VendorProfile> {
    VendorProfile::by_name(name).ok_or_else(|| {
        problem(
            format!("unknown vendor profile `{name}`; expected one of {}", VendorProfile::NAMES.join(", ")),
            &["vendor"],
        )
    })
}

fn convert_case(target: &Arc<Target>, file_vendor: &VendorProfile, c: CaseSpec, origin: String) -> R<Case> {
    if c.rules.is_empty() {
        return Err(problem("a case lists the rule IDs it exercises in `rules:` (at least one)", &["name:"]));
    }
    let catalogue = crate::catalogue::Catalogue::get();
    for r in &c.rules {
        if catalogue.kind(r).is_none() {
            return Err(problem(catalogue.unknown(r), &[r.as_str(), "rules"]));
        }
    }
    let vendor = match &c.vendor {
        Some(v) => vendor(v)?,
        None => file_vendor.clone(),
    };
    if let Some(cfi) = &c.cfi {
        return cfi_case(target, vendor, cfi, &c, origin);
    }
    if c.unwind.is_some() {
        return Err(problem("`unwind:` goes with a `cfi:` case", &["unwind:"]));
    }
    if c.spirv.is_some() {
        return super::spirv::spirv_case(target, c, origin);
    }
    let ctx = context(target, vendor, &c.context)?;
    let form = match (c.loclist, c.loclistx, c.constant) {
        (None, None, None) => None,
        (Some(offset), None, None) => Some(AttrForm::LocList { offset }),
        (None, Some(index), None) => Some(AttrForm::LocListX { index }),
        (None, None, Some(k)) => Some(AttrForm::Constant(k)),
        _ => return Err(problem("give at most one of `loclist:`, `loclistx:`, `constant:`", &["name:"])),
    };
    let expr = match (&c.expr, &c.expr_bytes, &form) {
        (Some(text), None, None) => assemble(text, &ctx, "expr:")?,
        (None, Some(hex), None) => parse_hex(hex).map_err(|m| problem(format!("expr_bytes: {m}"), &["expr_bytes"]))?,
        (None, None, Some(_)) => Vec::new(),
        _ => {
            return Err(problem(
                "a case has exactly one of `expr:`, `expr_bytes:`, `loclist:`, `loclistx:`, `constant:` or `cfi:`",
                &["name:"],
            ))
        }
    };
    let expect = match &c.expect {
        None => None,
        Some(y) => Some(expectation(y, &ctx)?),
    };
    Ok(Case::Expr(ExprCase {
        name: c.name,
        origin,
        expr: expr.into(),
        attribute: c.attribute,
        form,
        spirv: None,
        ctx: Arc::new(ctx),
        rules: c.rules,
        expect,
    }))
}

/// A CFI case: `cfi:` is a [`crate::case::yaml::cfi::CfiSpec`], `expect:` a
/// [`crate::case::yaml::cfi::CfiExpect`].
fn cfi_case(target: &Arc<Target>, vendor: VendorProfile, cfi: &Yaml, c: &CaseSpec, origin: String) -> R<Case> {
    use crate::case::yaml::cfi::{CfiExpect, CfiSpec};
    if c.expr.is_some() || c.expr_bytes.is_some() {
        return Err(problem("a case has exactly one of `expr:`, `expr_bytes:` or `cfi:`", &["cfi:"]));
    }
    let spec: CfiSpec = reparse(cfi).map_err(|e| problem(format!("cfi: {}", super::serde_message(&e)), &["cfi:"]))?;
    let (section, offsets) = spec.build_all(target).map_err(|e| problem(format!("cfi: {e}"), &["cfi:"]))?;
    let fde_offset = offsets[0];
    let expect = match &c.expect {
        None => None,
        Some(y) => {
            let e: CfiExpect =
                reparse(y).map_err(|e| problem(format!("expect: {}", super::serde_message(&e)), &["expect:"]))?;
            Some(e.to_outcome_at(target, fde_offset).map_err(|m| problem(m.to_string(), &["expect:"]))?)
        }
    };
    let unwind = match &c.unwind {
        Some(u) => Some(
            super::unwind::unwind_case(target, vendor, &section, &offsets, u).map_err(|p| with_near(p, "unwind"))?,
        ),
        None => None,
    };
    Ok(Case::Cfi(crate::case::CfiCase {
        name: c.name.clone(),
        origin,
        section,
        fde_offset,
        rules: c.rules.clone(),
        expect,
        unwind,
    }))
}
