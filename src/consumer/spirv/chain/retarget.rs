//! The rewrite of `llvm-spirv-15 -r`'s LLVM IR text (a `spir64`/`spir`
//! module) into a module `llc-15` compiles for x86_64 or amdgcn.

/// The targets of the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arch {
    /// `x86_64-unknown-linux-gnu`.
    X86_64,
    /// `amdgcn-amd-amdhsa`, compiled with `-mcpu=gfx900`.
    Amdgcn,
}

impl Arch {
    /// Both targets, in report order.
    pub const ALL: [Arch; 2] = [Arch::X86_64, Arch::Amdgcn];

    /// The target triple.
    pub fn triple(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64-unknown-linux-gnu",
            Arch::Amdgcn => "amdgcn-amd-amdhsa",
        }
    }

    /// The data layout `llc-15` uses for the triple (what it prints for an
    /// empty module), so that `llvm-as-15` and `llc-15` read the module
    /// with the same one.
    pub fn datalayout(self) -> &'static str {
        match self {
            Arch::X86_64 => "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128",
            Arch::Amdgcn => {
                "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-i64:64-v16:16-v24:32-v32:32-v48:64-\
                 v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7"
            }
        }
    }

    /// `llc-15`'s processor option, if any.
    pub fn mcpu(self) -> Option<&'static str> {
        match self {
            Arch::X86_64 => None,
            Arch::Amdgcn => Some("-mcpu=gfx900"),
        }
    }

    /// Short name for file names and reports: `x86_64`, `amdgcn`.
    pub fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Amdgcn => "amdgcn",
        }
    }
}

/// `ir` retargeted to `arch`, line by line, and nothing else:
/// - `target triple = ...` and `target datalayout = ...` become
///   [`Arch::triple`] and [`Arch::datalayout`] (a module without a
///   datalayout line keeps none: llc fills in its own);
/// - the SPIR calling conventions `spir_kernel` and `spir_func` are
///   removed from definitions, declarations and calls (llc-15 refuses a
///   call with a calling convention its target does not lower, and the C
///   one is what both targets have for a plain function).
///
/// Address spaces are left as they are: SPIR's numbers (1 global, 2
/// constant, 3 local, 4 generic) are valid address spaces of both data
/// layouts, and an `alloca` keeps address space 0 (amdgcn's data layout
/// says 5, `A5`; llvm-as-15 and llc-15 accept the module all the same).
/// OpenCL builtins llvm-spirv declares (`_Z13get_global_idj`, ...) stay
/// external declarations.
pub fn retarget(ir: &str, arch: Arch) -> String {
    let mut out = String::with_capacity(ir.len());
    for line in ir.lines() {
        if line.starts_with("target triple = ") {
            out.push_str(&format!("target triple = \"{}\"", arch.triple()));
        } else if line.starts_with("target datalayout = ") {
            out.push_str(&format!("target datalayout = \"{}\"", arch.datalayout()));
        } else if line.contains("spir_kernel ") || line.contains("spir_func ") {
            out.push_str(&line.replace("spir_kernel ", "").replace("spir_func ", ""));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triple_layout_and_calling_conventions() {
        let ir = "target datalayout = \"e-p:64:64:64\"\ntarget triple = \"spir64-unknown-unknown\"\n\
                  define spir_kernel void @k() {\n  %1 = call spir_func i64 @f()\n  ret void\n}\n";
        let x = retarget(ir, Arch::X86_64);
        assert!(x.contains("target triple = \"x86_64-unknown-linux-gnu\"\n"));
        assert!(x.contains("target datalayout = \"e-m:e-p270"));
        assert!(x.contains("define void @k() {\n  %1 = call i64 @f()\n"));
        assert!(!x.contains("spir"));
        let a = retarget(ir, Arch::Amdgcn);
        assert!(a.contains("target triple = \"amdgcn-amd-amdhsa\"\n"));
        assert!(a.contains("-A5-G1-ni:7\"\n"));
    }
}
