//! Reference construction of CFI row tables (DWARF 5 §6.4, hetero-2020 "Call Frame Information").
