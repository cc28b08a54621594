//! The runner: evaluates cases with every consumer in parallel, compares, reports.
