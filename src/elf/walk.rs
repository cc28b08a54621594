//! Which units of a file have their locations extracted: the ordinary
//! units; the split units of a `.dwo` file or `.dwp` package given as the
//! input; and for each skeleton unit its split unit, from the package
//! beside the input or from its `.dwo` file (see [`super::split`]). Each
//! is a unit of extraction ([`super::fold`]); those not started by the
//! extraction deadline are counted as not read.

use super::dwarf::Extractor;
use super::fold::{self, Fold};
use super::split::{self, Layout, R};
use super::{ElfError, Options};
use dwarfcheck_core::target::{Endian, Target};
use gimli::{EndianSlice, RunTimeEndian};
use std::path::Path;
use std::sync::Arc;

/// Extracts the expression cases of `file` (named `origin`, read from
/// `input` when it is a path, which is where `.dwo` files and a `.dwp`
/// package are looked for) into `fold`, one unit of extraction per
/// compilation unit (with the split unit of a skeleton) or package row.
///
/// Errors only if a DWARF section cannot be read or decompressed; a unit
/// that fails to parse adds a warning and is skipped from that point on; a
/// skeleton unit whose split unit is not found is counted in
/// [`super::Counts::skeletons_without_split`] with a warning.
pub(super) fn extract_exprs<F: Fold>(
    file: &object::File<'_>,
    origin: &str,
    input: Option<&Path>,
    target: &Arc<Target>,
    opts: &Options,
    fold: &F,
) -> Result<F::Acc, ElfError> {
    let endian = if target.endian == Endian::Big { RunTimeEndian::Big } else { RunTimeEndian::Little };
    let reader = |s| EndianSlice::new(s, endian);
    let no_addr: Arc<[u8]> = Arc::from(&[][..]);
    Ok(match split::layout(file) {
        Layout::Main => {
            let sections = split::sections(file, origin, false)?;
            let dwarf = sections.borrow(|s| reader(s));
            let debug_addr: Arc<[u8]> = Arc::from(gimli::Section::reader(&dwarf.debug_addr).slice());
            // The package beside the input, read once for every skeleton.
            let package_path = input.and_then(split::package_beside);
            let package_data = package_path.as_ref().and_then(|p| std::fs::read(p).ok());
            let package_file = package_data.as_deref().and_then(|d| object::File::parse(d).ok());
            let package_sections = package_file.as_ref().and_then(|f| split::package_sections(f, origin).ok());
            let package = package_sections.as_ref().and_then(|s| s.borrow(|s| reader(s), reader(&[])).ok());
            let package = package_path.as_deref().zip(package.as_ref());
            let dir = input.and_then(Path::parent);
            let (headers, err) = unit_headers(&dwarf);
            let units = fold::over(fold, headers, |header, out| {
                let mut x = Extractor::new(origin, target, opts, debug_addr.clone(), out);
                if let Some(unit) = read_unit(&mut x, &dwarf, header, opts) {
                    skeleton(&mut x, &dwarf, &unit, header.offset().0 as u64, package, dir, opts, endian);
                }
            });
            match err {
                Some(e) => fold.merge(
                    units,
                    fold::warning(fold, format!("{origin}: unit headers: {e}; rest of the section skipped")),
                ),
                None => units,
            }
        }
        Layout::Dwo => {
            let sections = split::sections(file, origin, true)?;
            let mut dwarf = sections.borrow(|s| reader(s));
            dwarf.file_type = gimli::DwarfFileType::Dwo;
            // Unit headers that do not parse end the walk silently, as
            // for the split units of a skeleton.
            let (headers, _) = unit_headers(&dwarf);
            fold::over(fold, headers, |header, out| {
                let mut x = Extractor::new(origin, target, opts, no_addr.clone(), out);
                x.lone = true;
                split_unit(&mut x, &dwarf, header, None, opts);
            })
        }
        Layout::Package => {
            let sections = split::package_sections(file, origin)?;
            let package = match sections.borrow(|s| reader(s), reader(&[])) {
                Ok(p) => p,
                Err(e) => return Ok(fold::warning(fold, format!("{origin}: .debug_cu_index: {e}; package skipped"))),
            };
            let parent = gimli::Dwarf::default();
            let rows: Vec<u32> = (1..=package.cu_index.unit_count()).collect();
            fold::over(fold, rows, |row, out| {
                let mut x = Extractor::new(origin, target, opts, no_addr.clone(), out);
                x.lone = true;
                match package.cu_sections(row, &parent) {
                    Ok(d) => {
                        x.origin = format!("{origin} (package row {row})");
                        split_units(&mut x, &d, None, opts);
                    }
                    Err(e) => x.out.warnings.push(format!("{origin}: package row {row}: {e}; unit skipped")),
                }
            })
        }
    })
}

/// The headers of every unit of `dwarf` in order, and the error that
/// stopped reading them, if any.
fn unit_headers<'d>(dwarf: &gimli::Dwarf<R<'d>>) -> (Vec<gimli::UnitHeader<R<'d>>>, Option<gimli::Error>) {
    let mut out = Vec::new();
    let mut headers = dwarf.units();
    loop {
        match headers.next() {
            Ok(Some(h)) => out.push(h),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

/// Reads the unit of `header` and extracts its locations, returning it;
/// past the deadline, counts it as not read instead.
fn read_unit<'d>(
    x: &mut Extractor<'_>,
    dwarf: &gimli::Dwarf<R<'d>>,
    header: gimli::UnitHeader<R<'d>>,
    opts: &Options,
) -> Option<gimli::Unit<R<'d>>> {
    if opts.past_deadline() {
        x.out.unfinished_mut().units_not_read += 1;
        return None;
    }
    let unit_off = header.offset().0 as u64;
    match dwarf.unit(header) {
        Ok(unit) => {
            x.out.counts.units += 1;
            if let Err(e) = x.unit(dwarf, &unit, unit_off) {
                let o = &x.origin;
                x.out.warnings.push(format!("{o}: unit at {unit_off:#x}: {e}; rest of the unit skipped"));
            }
            Some(unit)
        }
        Err(e) => {
            x.out.warnings.push(format!("{}: unit at {unit_off:#x}: {e}; unit skipped", x.origin));
            None
        }
    }
}

/// The split units of `dwarf` (a `.dwo` file, or one package row), in
/// order, each as [`split_unit`] reads it. Returns how many units were
/// walked.
fn split_units<'d>(
    x: &mut Extractor<'_>,
    dwarf: &gimli::Dwarf<R<'d>>,
    skeleton: Option<&gimli::Unit<R<'d>>>,
    opts: &Options,
) -> usize {
    let mut found = 0;
    let mut headers = dwarf.units();
    while let Ok(Some(header)) = headers.next() {
        found += usize::from(split_unit(x, dwarf, header, skeleton, opts));
    }
    found
}

/// One split unit: with `skeleton`, only if it has the skeleton's DWO id,
/// taking the skeleton's relocated attributes (`DW_AT_addr_base`,
/// `DW_AT_low_pc`); without, read without addresses
/// ([`Extractor::lone`]). Past the deadline it is counted as not read.
/// Returns whether the unit was walked.
fn split_unit<'d>(
    x: &mut Extractor<'_>,
    dwarf: &gimli::Dwarf<R<'d>>,
    header: gimli::UnitHeader<R<'d>>,
    skeleton: Option<&gimli::Unit<R<'d>>>,
    opts: &Options,
) -> bool {
    if opts.past_deadline() {
        x.out.unfinished_mut().units_not_read += 1;
        return false;
    }
    let unit_off = header.offset().0 as u64;
    let mut unit = match dwarf.unit(header) {
        Ok(u) => u,
        Err(e) => {
            x.out.warnings.push(format!("{}: split unit at {unit_off:#x}: {e}; unit skipped", x.origin));
            return false;
        }
    };
    if let Some(s) = skeleton {
        if unit.dwo_id != s.dwo_id {
            return false;
        }
        unit.copy_relocated_attributes(s);
    }
    x.out.counts.units += 1;
    x.out.counts.split_units += 1;
    if let Err(e) = x.unit(dwarf, &unit, unit_off) {
        let o = &x.origin;
        x.out.warnings.push(format!("{o}: split unit at {unit_off:#x}: {e}; rest of the unit skipped"));
    }
    true
}

/// After a unit of an ordinary file: when it is a skeleton, finds its split
/// unit, in `package` first, then in the `.dwo` files its `DW_AT_dwo_name`
/// may name (beside the input: `dir`), and walks it with the skeleton's
/// addresses; otherwise counts it in `skeletons_without_split`.
#[allow(clippy::too_many_arguments)]
fn skeleton<'d>(
    x: &mut Extractor<'_>,
    dwarf: &gimli::Dwarf<R<'d>>,
    skel: &gimli::Unit<R<'d>>,
    skel_off: u64,
    package: Option<(&Path, &gimli::DwarfPackage<R<'_>>)>,
    dir: Option<&Path>,
    opts: &Options,
    endian: RunTimeEndian,
) {
    let Some(id) = skel.dwo_id else { return };
    let name = skel.dwo_name().ok().flatten().and_then(|v| dwarf.attr_string(skel, v).ok());
    let name = name.map(|n| n.to_string_lossy().into_owned());
    let is_skeleton = matches!(skel.header.type_(), gimli::UnitType::Skeleton(_)) || name.is_some();
    if !is_skeleton {
        return;
    }
    let origin = std::mem::take(&mut x.origin);
    let mut done = false;
    if let Some((path, p)) = package {
        if let Ok(Some(d)) = p.find_cu(id, dwarf) {
            x.origin = format!("{origin} ({}, dwo_id {:#x})", path.display(), id.0);
            done = split_units(x, &d, Some(skel), opts) > 0;
        }
    }
    let comp_dir = skel.comp_dir.map(|d| d.to_string_lossy().into_owned());
    let candidates = name.as_deref().map(|n| split::dwo_candidates(n, comp_dir.as_deref(), dir)).unwrap_or_default();
    for path in &candidates {
        if done {
            break;
        }
        let Ok(data) = std::fs::read(path) else { continue };
        let Ok(file) = object::File::parse(&*data) else { continue };
        let Ok(sections) = split::sections(&file, &path.display().to_string(), true) else { continue };
        let mut d = sections.borrow(|s| EndianSlice::new(s, endian));
        d.make_dwo(dwarf);
        x.origin = format!("{origin} ({}, dwo_id {:#x})", path.display(), id.0);
        done = split_units(x, &d, Some(skel), opts) > 0;
    }
    x.origin = origin;
    if !done {
        x.out.counts.skeletons_without_split += 1;
        let looked: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
        x.out.warnings.push(format!(
            "{}: skeleton unit at {skel_off:#x}: split unit {} (dwo_id {:#x}) not found{}; its locations are not checked",
            x.origin,
            name.as_deref().unwrap_or("without DW_AT_dwo_name"),
            id.0,
            if looked.is_empty() { String::new() } else { format!(" (looked for {})", looked.join(", ")) },
        ));
    }
}
