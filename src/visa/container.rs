//! Finds vISA debug info and DWARF in what ocloc writes: a raw blob (magic
//! 0xdeadd010), an `INTC` program debug data container (the `.dbg` of the
//! default format: a header, then per kernel its name, its vISA debug data
//! and its Gen ISA debug data; layout of `SProgramDebugDataHeaderIGC` and
//! `SKernelDebugDataHeaderIGC` in IGC's
//! `IGC/AdaptorOCL/ocl_igc_shared/executable_format/program_debug_data.h`),
//! or an ELF (zebin: `e_machine` 205, EM_INTELGT; a kernel's debug ELF in
//! an INTC container: `e_machine` 0xb6).

use object::{Object as _, ObjectSection as _};

/// The little-endian word at the start of an INTC container ("CTNI" in
/// memory order).
pub const INTC_MAGIC: u32 = 0x494e_5443;

/// What a file is.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Contents {
    /// A raw vISA debug info blob.
    Blob,
    /// An INTC program debug data container.
    Intc {
        /// The header's device (IGC's product family number).
        device: u32,
        /// Per kernel, what it carries.
        kernels: Vec<IntcKernel>,
    },
    /// An ELF file.
    Elf(ElfInfo),
    /// None of the above.
    Unknown,
}

/// One kernel of an INTC container.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct IntcKernel {
    /// The kernel's name (without the padding zeros).
    pub name: String,
    /// Byte offset and size of its vISA debug data (an ELF with DWARF in
    /// the files ocloc writes).
    pub visa_debug: (usize, usize),
    /// Byte offset and size of its Gen ISA debug data.
    pub gen_debug: (usize, usize),
    /// The vISA debug data read as an ELF, when it is one.
    pub elf: Option<ElfInfo>,
}

/// What an ELF carries that matters here.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ElfInfo {
    /// `e_machine`.
    pub machine: u16,
    /// `.debug_*` sections: name and size in bytes.
    pub debug_sections: Vec<(String, u64)>,
    /// Sections whose contents are a vISA blob (start with its magic).
    pub visa_sections: Vec<String>,
}

/// Why a container could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerError {
    /// Byte offset of the field that does not fit.
    pub at: usize,
    /// What went wrong.
    pub detail: String,
}

impl std::fmt::Display for ContainerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at byte {:#x}: {}", self.at, self.detail)
    }
}

fn word(b: &[u8], at: usize) -> Result<u32, ContainerError> {
    b.get(at..at + 4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .ok_or_else(|| ContainerError { at, detail: "header word past the end".into() })
}

/// Says what `bytes` is and where its debug information is.
///
/// Errors: an INTC container whose header or kernel entries run past the
/// end, or an ELF that `object` cannot parse.
pub fn identify(bytes: &[u8]) -> Result<Contents, ContainerError> {
    match bytes.get(..4).map(|m| u32::from_le_bytes([m[0], m[1], m[2], m[3]])) {
        Some(super::decode::MAGIC) => Ok(Contents::Blob),
        Some(INTC_MAGIC) => intc(bytes),
        Some(0x464c_457f) => elf(bytes).map(Contents::Elf),
        _ => Ok(Contents::Unknown),
    }
}

/// Reads an INTC container: 7 header words (magic, version, size, device,
/// stepping, pointer size, kernel count), then per kernel 3 words (name
/// size, vISA debug size, Gen ISA debug size) and those three parts.
fn intc(b: &[u8]) -> Result<Contents, ContainerError> {
    let device = word(b, 12)?;
    let count = word(b, 24)?;
    let mut at = 28usize;
    let mut kernels = Vec::new();
    for _ in 0..count {
        let (name_size, visa_size, gen_size) =
            (word(b, at)? as usize, word(b, at + 4)? as usize, word(b, at + 8)? as usize);
        let name_at = at + 12;
        let visa_at = name_at.saturating_add(name_size);
        let gen_at = visa_at.saturating_add(visa_size);
        let end = gen_at.saturating_add(gen_size);
        if end > b.len() {
            return Err(ContainerError { at, detail: format!("kernel entry of {} bytes past the end", end - at) });
        }
        let name = String::from_utf8_lossy(&b[name_at..visa_at]).trim_end_matches('\0').to_string();
        let visa = &b[visa_at..gen_at];
        let elf = if visa.starts_with(b"\x7fELF") { elf(visa).ok() } else { None };
        kernels.push(IntcKernel { name, visa_debug: (visa_at, visa_size), gen_debug: (gen_at, gen_size), elf });
        at = end;
    }
    Ok(Contents::Intc { device, kernels })
}

/// Lists an ELF's debug sections (with `object`).
fn elf(b: &[u8]) -> Result<ElfInfo, ContainerError> {
    let machine = b.get(18..20).map_or(0, |m| u16::from_le_bytes([m[0], m[1]]));
    let f = object::File::parse(b).map_err(|e| ContainerError { at: 0, detail: format!("ELF: {e}") })?;
    let mut debug_sections = Vec::new();
    let mut visa_sections = Vec::new();
    for s in f.sections() {
        let Ok(name) = s.name() else { continue };
        if name.starts_with(".debug_") {
            debug_sections.push((name.to_string(), s.size()));
        }
        if s.data().is_ok_and(|d| d.starts_with(&super::decode::MAGIC.to_le_bytes())) {
            visa_sections.push(name.to_string());
        }
    }
    Ok(ElfInfo { machine, debug_sections, visa_sections })
}
