//! DWARF expression text <-> bytes.
