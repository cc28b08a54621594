//! Fast evaluation of DWARF operation expressions.
