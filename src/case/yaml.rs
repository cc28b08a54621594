//! YAML case format v1 (DESIGN §6). Errors carry `file:line:column`.
