#![expect(clippy::unwrap_used, reason = "tests")]

#[test]
fn the_builtin_templates_compile() {
    crate::Templates::with_overrides(&Default::default()).unwrap();
}
