//! Model text to one canonical [`seam_protocol::Action`], with every repair named.
