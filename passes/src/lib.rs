//! Pass library (see issue 5).
