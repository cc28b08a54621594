//! Reference evaluation of DWARF operation expressions (hetero-2020 "DWARF Expressions").
