use clap::CommandFactory;

#[test]
fn the_command_line_definition_is_consistent() {
    crate::Cli::command().debug_assert();
}
