//! Page paths from ids. Ids come from rule files; whatever they hold, the
//! path stays a plain file name inside its folder of the site.

/// The page of a symptom, relative to the site's root.
pub fn symptom(id: &str) -> String {
    format!("symptoms/{}.md", file_name(id))
}

/// The page of a cause, relative to the site's root.
pub fn cause(id: &str) -> String {
    format!("causes/{}.md", file_name(id))
}

/// A file name made of `[A-Za-z0-9._-]` only, never starting with a dot, so
/// no id can name a folder, a parent (`..`), a hidden file or an absolute path.
pub fn file_name(id: &str) -> String {
    let mut name: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() || name.starts_with('.') {
        name.insert(0, '_');
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_cannot_leave_their_folder() {
        assert_eq!(
            cause("pending.insufficient-resources"),
            "causes/pending.insufficient-resources.md"
        );
        assert_eq!(cause("../../etc/x"), "causes/_.._.._etc_x.md");
        assert_eq!(symptom("/abs"), "symptoms/_abs.md");
        assert_eq!(symptom(".hidden"), "symptoms/_.hidden.md");
        assert_eq!(symptom(""), "symptoms/_.md");
        assert_eq!(file_name("a\\b\0c"), "a_b_c");
    }
}
