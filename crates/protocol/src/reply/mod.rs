//! What the NameServer answers with: response bodies as Java writes them (`body`), and replies
//! framed from a template around their opaque (`template`).

pub mod body;
pub mod template;
