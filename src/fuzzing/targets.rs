//! The eight fuzz targets as plain functions over their input bytes: the one
//! place each target's decoding and oracles live, called by the `fuzz/`
//! binaries, `dwarfcheck minimize`, `export-corpus` statistics and the
//! replay of `corpus/regressions/`.

use super::case::{preset, FuzzCase};
use super::{
    check_case_yaml, check_cfi, check_cfi_section, check_expr_oracles, check_expr_oracles_marked, check_spirv_oracles,
    expr_case, gen, rich_context, Violation,
};
use crate::visa::check::{fuzz_one, FUZZ_MAX_BYTES};
use arbitrary::Unstructured;
use dwarfcheck_core::cfi::{CfiSection, FrameKind};
use dwarfcheck_core::target::Target as Machine;
use std::sync::Arc;

/// The result of a byte-blob oracle (`visa_bytes`, `tru64_bytes`: the
/// format's `check::fuzz_one`): its first disagreement, rendered, as a
/// [`Violation::Differ`].
fn blob_oracle(r: Result<usize, String>) -> Result<(), Violation> {
    r.map(|_| ()).map_err(Violation::Differ)
}

/// A fuzz target of the `fuzz/` crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Target {
    /// Raw expression bytes in the fixed rich context.
    ExprBytes,
    /// A generated context and a structured expression for it.
    ExprOps,
    /// Raw frame-section bytes; the first byte picks the section kind (bit
    /// 0) and the target (the rest, modulo 3: x86-64, AArch64, AMDGPU).
    CfiBytes,
    /// A generated x86-64 frame section, unwound from synthetic states.
    CfiOps,
    /// Case-file text.
    CaseYaml,
    /// A generated context and a generated SPIR-V OpenCL.DebugInfo.100
    /// expression (`gen::spirv_case`): reference == fast, and the direct
    /// interpretation agrees with its lowering to DWARF
    /// ([`check_spirv_oracles`]).
    SpirvExpr,
    /// A vISA debug info blob (at most `visa::check::FUZZ_MAX_BYTES`):
    /// decoded under every layout, and each decoding's lowering checked
    /// reference == fast (`visa::check::fuzz_one`).
    VisaBytes,
    /// The PPODE stream of one Tru64 procedure (at most
    /// `tru64::check::FUZZ_MAX_BYTES`): decoded and validated, and what
    /// decodes lowered and checked reference == fast == the direct reading
    /// (`tru64::check::fuzz_one`).
    Tru64Bytes,
}

/// Every target, in the order the campaign runs them.
pub const ALL: [Target; 8] = [
    Target::ExprBytes,
    Target::ExprOps,
    Target::CfiBytes,
    Target::CfiOps,
    Target::CaseYaml,
    Target::SpirvExpr,
    Target::VisaBytes,
    Target::Tru64Bytes,
];

/// What one input of a target is, decoded.
#[derive(Debug, Clone)]
pub enum Input {
    /// An expression case (the expression targets).
    Expr(FuzzCase),
    /// A frame section (the CFI targets).
    Cfi {
        /// `.debug_frame` or `.eh_frame`.
        kind: FrameKind,
        /// The whole section.
        bytes: Vec<u8>,
        /// The machine.
        target: Arc<Machine>,
    },
    /// Case-file text.
    Yaml(String),
    /// A vISA debug info blob (the `visa_bytes` target).
    Visa(Vec<u8>),
    /// A Tru64 PPODE stream (the `tru64_bytes` target).
    Tru64(Vec<u8>),
}

impl Target {
    /// The target's name in `fuzz/Cargo.toml` and `corpus/<name>/`.
    pub fn name(self) -> &'static str {
        match self {
            Target::ExprBytes => "expr_bytes",
            Target::ExprOps => "expr_ops",
            Target::CfiBytes => "cfi_bytes",
            Target::CfiOps => "cfi_ops",
            Target::CaseYaml => "case_yaml",
            Target::SpirvExpr => "spirv_expr",
            Target::VisaBytes => "visa_bytes",
            Target::Tru64Bytes => "tru64_bytes",
        }
    }

    /// The target called `name`.
    pub fn by_name(name: &str) -> Option<Target> {
        ALL.into_iter().find(|t| t.name() == name)
    }

    /// Decodes `data` as the target does; `None` for input the target
    /// skips (generator bytes that run out, text that is not UTF-8, an
    /// empty CFI input).
    pub fn decode(self, data: &[u8]) -> Option<Input> {
        match self {
            Target::ExprBytes => Some(Input::Expr(FuzzCase::rich(data.to_vec()))),
            Target::ExprOps => gen::fuzz_case(&mut Unstructured::new(data)).ok().map(|(fc, _)| Input::Expr(fc)),
            Target::CfiBytes | Target::CfiOps => {
                let sec = self.section(data)?;
                Some(Input::Cfi { kind: sec.kind, bytes: sec.bytes.to_vec(), target: sec.target.clone() })
            }
            Target::CaseYaml => std::str::from_utf8(data).ok().map(|t| Input::Yaml(t.to_string())),
            Target::SpirvExpr => gen::spirv_fuzz_case(&mut Unstructured::new(data)).ok().map(Input::Expr),
            Target::VisaBytes => (!data.is_empty() && data.len() <= FUZZ_MAX_BYTES).then(|| Input::Visa(data.to_vec())),
            Target::Tru64Bytes => (!data.is_empty() && data.len() <= crate::tru64::check::FUZZ_MAX_BYTES)
                .then(|| Input::Tru64(data.to_vec())),
        }
    }

    /// The frame section a CFI target makes of `data`: for `cfi_bytes`,
    /// byte 0 selects the kind (bit 0) and the machine (the rest, modulo
    /// 3: x86-64, AArch64, AMDGPU gfx90a), the rest is the section; for
    /// `cfi_ops`, the generated x86-64 section. `None` for the other
    /// targets and for input the target skips.
    fn section(self, data: &[u8]) -> Option<Arc<CfiSection>> {
        match self {
            Target::CfiBytes => {
                let (&sel, bytes) = data.split_first()?;
                let kind = if sel & 1 == 0 { FrameKind::DebugFrame } else { FrameKind::EhFrame };
                let target = preset(["x86_64", "aarch64", "amdgpu-gfx90a"][usize::from(sel >> 1) % 3])?;
                Some(Arc::new(CfiSection::new(kind, bytes.to_vec(), 0x4000, target)))
            }
            Target::CfiOps => gen::cfi_section(&mut Unstructured::new(data), &preset("x86_64")?).ok()?,
            _ => None,
        }
    }

    /// Runs the target's oracles on `data`.
    ///
    /// Errors: the [`Violation`] (the fuzz binary panics with it).
    ///
    /// The same as [`Input::check`] on [`Target::decode`]'s input, without
    /// the copies: the expression targets evaluate in a context built once
    /// (the rich one) or straight from the generator's choices (shared with
    /// a recent input of the same context bytes, `gen::shared_case`), the
    /// CFI targets check the section they make.
    ///
    /// Inlined, so that a fuzz binary, which names one target, links
    /// (and instruments for coverage) that target's code alone: libFuzzer
    /// scans every coverage counter of the binary after each run.
    #[inline]
    pub fn check(self, data: &[u8]) -> Result<(), Violation> {
        self.check_marked(data, None)
    }

    /// [`Target::check`], calling `mark` on the expression targets with the
    /// coverage mark of each operation the reference executed
    /// (`fuzzing::marks`; the fuzz binaries turn them into libFuzzer extra
    /// counters).
    ///
    /// Errors: as [`Target::check`].
    #[inline]
    pub fn check_marked(self, data: &[u8], mark: Option<&mut dyn FnMut(usize)>) -> Result<(), Violation> {
        match self {
            Target::ExprBytes => check_expr_oracles_marked(&expr_case(data, &rich_context()), mark),
            Target::ExprOps => match gen::shared_case(data) {
                Ok(case) => check_expr_oracles_marked(&case, mark),
                Err(_) => Ok(()),
            },
            Target::CfiBytes | Target::CfiOps => self.section(data).map_or(Ok(()), |s| check_cfi_section(&s)),
            Target::CaseYaml => std::str::from_utf8(data).map_or(Ok(()), check_case_yaml),
            // No marks: the reference's trace is of DWARF operations, and
            // the edges of the SPIR-V interpreters are coverage enough.
            Target::SpirvExpr => {
                gen::spirv_case(&mut Unstructured::new(data)).map_or(Ok(()), |c| check_spirv_oracles(&c))
            }
            Target::VisaBytes => blob_oracle(fuzz_one(data)),
            Target::Tru64Bytes => blob_oracle(crate::tru64::check::fuzz_one(data)),
        }
    }
}

impl Input {
    /// The oracles of the input's target: reference == fast everywhere,
    /// gimli in a known class on expressions, the loader never panics.
    ///
    /// SPIR-V cases (`spirv_expr`) get [`check_spirv_oracles`] instead
    /// of gimli.
    ///
    /// Errors: the [`Violation`]. A case that does not load is a generator
    /// error for `Expr` ([`Violation::Load`]) and fine for `Yaml`.
    pub fn check(&self) -> Result<(), Violation> {
        match self {
            Input::Expr(fc) if fc.spirv.is_some() => check_spirv_oracles(&fc.load()?),
            Input::Expr(fc) => check_expr_oracles(&fc.load()?),
            Input::Cfi { kind, bytes, target } => check_cfi(*kind, bytes, target.clone()),
            Input::Yaml(text) => check_case_yaml(text),
            Input::Visa(bytes) => blob_oracle(fuzz_one(bytes)),
            Input::Tru64(bytes) => blob_oracle(crate::tru64::check::fuzz_one(bytes)),
        }
    }

    /// The input as the bytes of the plain target that takes it: expression
    /// bytes for `expr_bytes` (the expression only: the context is the
    /// rich one), a selector byte and the section for `cfi_bytes`, UTF-8
    /// for `case_yaml`, the blob for `visa_bytes`, the stream for
    /// `tru64_bytes`. `None` for a CFI target this encoding cannot name,
    /// and for a SPIR-V case (DWARF bytes cannot hold one).
    pub fn raw(&self) -> Option<(Target, Vec<u8>)> {
        match self {
            Input::Expr(fc) if fc.spirv.is_some() => None,
            Input::Expr(fc) => Some((Target::ExprBytes, fc.expr.clone())),
            Input::Cfi { kind, bytes, target } => {
                let t = match target.name.as_str() {
                    "x86_64" => 0u8,
                    "aarch64" => 1,
                    "amdgpu-gfx90a" => 2,
                    _ => return None,
                };
                let mut v = vec![(t << 1) | u8::from(*kind == FrameKind::EhFrame)];
                v.extend(bytes);
                Some((Target::CfiBytes, v))
            }
            Input::Yaml(t) => Some((Target::CaseYaml, t.as_bytes().to_vec())),
            Input::Visa(b) => Some((Target::VisaBytes, b.clone())),
            Input::Tru64(b) => Some((Target::Tru64Bytes, b.clone())),
        }
    }
}
