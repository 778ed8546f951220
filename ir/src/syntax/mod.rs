//! The textual format: lexer, parser, printer, and the custom op formats they share.

pub mod edit;
pub mod format;
pub mod lexer;
pub mod parser;
pub mod printer;
