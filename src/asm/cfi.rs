//! Call frame instruction text <-> bytes.
