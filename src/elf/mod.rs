//! Extraction of expressions, location lists and FDEs from ELF files.
