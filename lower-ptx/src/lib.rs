//! Backends (see issues 6 and 7).
