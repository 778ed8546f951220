//! Shared helpers for the integration tests: where the repository, the examples and the seeds are.
