//! The terminal filter (stub: being written).

/// Text from somebody else, made safe for a terminal; newline and tab survive.
pub fn visible(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Like [`visible`], but newline and tab are shown too: one line.
pub fn on_one_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).replace('\n', "\\n")
}
