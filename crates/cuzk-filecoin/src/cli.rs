//! CLI (placeholder)
