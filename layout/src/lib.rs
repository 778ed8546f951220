//! Layout algebra (issue 4).
