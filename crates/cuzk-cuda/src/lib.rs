//! cuzk-cuda: placeholder crate root; see the issue that builds it.
