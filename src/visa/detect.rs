//! Which layout a blob is in: the one layout under which it decodes whole
//! (rule `visa.layout.detect`), or none.

use super::decode::decode;
use super::layout::Layout;
use super::model::Blob;
use super::read::Fault;
use dwarfcheck_core::rules::id;

/// The result of trying every layout on a blob.
#[derive(Debug, Clone)]
pub struct Detection {
    /// Every layout tried, with its decoding or first fault.
    pub tried: Vec<(Layout, Result<Blob, Fault>)>,
}

impl Detection {
    /// The layouts under which the blob decodes.
    pub fn decoding(&self) -> Vec<Layout> {
        self.tried.iter().filter(|(_, r)| r.is_ok()).map(|(l, _)| *l).collect()
    }

    /// The blob, when exactly one layout decodes it; else a
    /// `visa.layout.detect` fault at offset 0 naming what each gave.
    pub fn chosen(self) -> Result<Blob, Fault> {
        let n = self.tried.iter().filter(|(_, r)| r.is_ok()).count();
        if n == 1 {
            let (_, r) = self.tried.into_iter().find(|(_, r)| r.is_ok()).expect("one decodes");
            return r;
        }
        let what: Vec<String> = self
            .tried
            .iter()
            .map(|(l, r)| match r {
                Ok(_) => format!("{l}: decodes"),
                Err(f) => format!("{l}: {f}"),
            })
            .collect();
        let head = if n == 0 { "no layout decodes the blob" } else { "several layouts decode the blob" };
        Err(Fault::new(id::VISA_LAYOUT_DETECT, 0, format!("{head} (give --layout): {}", what.join("; "))))
    }
}

/// Decodes `bytes` under every layout.
pub fn detect(bytes: &[u8]) -> Detection {
    Detection { tried: Layout::ALL.into_iter().map(|l| (l, decode(bytes, l))).collect() }
}

/// Decodes under `layout` when given, else under the detected layout.
pub fn decode_with(bytes: &[u8], layout: Option<Layout>) -> Result<Blob, Fault> {
    match layout {
        Some(l) => decode(bytes, l),
        None => detect(bytes).chosen(),
    }
}
