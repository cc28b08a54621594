//! Fast one-pass construction of CFI row tables.
