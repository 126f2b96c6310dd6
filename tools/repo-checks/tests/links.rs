//! Every relative link of README.md, docs/ and the repository's other markdown pages points at
//! a file that exists and, for `#anchor`, at a heading of that file.

use trust_gate_repo_checks::{links, workspace_root};

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let root = workspace_root();
    let files = links::markdown_files(&root);
    for must in ["README.md", "docs/architecture.md"] {
        assert!(
            files.iter().any(|f| f.as_os_str() == must),
            "{must} not found under {}: the check would check nothing",
            root.display()
        );
    }
    let mut checked = 0;
    let mut broken = Vec::new();
    for f in &files {
        checked += links::links(&std::fs::read_to_string(root.join(f)).unwrap()).len();
        broken.extend(links::check_file(&root, f));
    }
    assert!(
        checked > 50,
        "only {checked} links found: the parser is off"
    );
    assert!(
        broken.is_empty(),
        "{} broken link(s) in {} markdown files:\n{}",
        broken.len(),
        files.len(),
        broken
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
}
