//! Relative links in markdown: each must name a file (or folder) of the repository that
//! exists and, with `#anchor`, a heading of that file, so that README.md and docs/ stay
//! navigable as pages move.
//!
//! Anchors are the slugs GitHub gives headings: lower case, punctuation other than `-` and `_`
//! dropped, each space a `-`, and `-1`, `-2`, ... for repeated headings.

use std::collections::HashSet;
use std::fs;
use std::path::{Component, Path, PathBuf};

/// One link found in a markdown text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// 1-based line of the link.
    pub line: usize,
    /// The target as written: `docs/x.md#part`, `#part`, `https://...`.
    pub target: String,
}

/// A link that does not resolve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Broken {
    /// The markdown file, relative to the root.
    pub file: PathBuf,
    pub line: usize,
    pub target: String,
    pub why: String,
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: ({}) {}",
            self.file.display(),
            self.line,
            self.target,
            self.why
        )
    }
}

/// Whether a line opens or closes a fenced code block (three or more backticks or tildes).
fn fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

/// `line` with inline code spans blanked out, so that `[a](b)` inside backticks is no link.
fn without_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
            out.push(' ');
        } else {
            out.push(if in_code { ' ' } else { c });
        }
    }
    out
}

/// The destination of a link body `(...)`: `<dest>` or the text up to the first space (a
/// title may follow).
fn destination(body: &str) -> String {
    let body = body.trim();
    if let Some(rest) = body.strip_prefix('<') {
        return rest.split('>').next().unwrap_or_default().to_string();
    }
    body.split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Every link of a markdown text: inline `[text](dest)` and `![alt](dest)`, and reference
/// definitions `[label]: dest`, outside code blocks and code spans.
pub fn links(markdown: &str) -> Vec<Link> {
    let mut out = Vec::new();
    let mut in_block = false;
    for (i, raw) in markdown.lines().enumerate() {
        if fence(raw) {
            in_block = !in_block;
            continue;
        }
        if in_block {
            continue;
        }
        let line = without_code_spans(raw);
        let trimmed = line.trim_start();
        // A reference definition: `[label]: dest`.
        if trimmed.starts_with('[') && !trimmed.starts_with("[^") {
            if let Some(close) = trimmed.find("]:") {
                if !trimmed[1..close].contains(']') {
                    out.push(Link {
                        line: i + 1,
                        target: destination(&trimmed[close + 2..]),
                    });
                    continue;
                }
            }
        }
        let bytes = line.as_bytes();
        let mut at = 0;
        while let Some(off) = line[at..].find("](") {
            let open = at + off + 2;
            // The destination ends at the matching `)` (destinations may hold balanced ones).
            let mut depth = 1;
            let mut end = None;
            for (j, b) in bytes.iter().enumerate().skip(open) {
                match b {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            end = Some(j);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let Some(end) = end else { break };
            let target = destination(&line[open..end]);
            if !target.is_empty() {
                out.push(Link {
                    line: i + 1,
                    target,
                });
            }
            at = end + 1;
        }
    }
    out
}

/// The GitHub anchor of a heading's text.
pub fn slug(heading: &str) -> String {
    // Links in a heading count by their text only.
    let mut text = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find('[') {
        let Some(mid) = rest[open..].find("](") else {
            break;
        };
        let Some(close) = rest[open + mid..].find(')') else {
            break;
        };
        text.push_str(&rest[..open]);
        text.push_str(&rest[open + 1..open + mid]);
        rest = &rest[open + mid + close + 1..];
    }
    text.push_str(rest);
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of every ATX heading (`#` to `######`) outside code blocks.
pub fn anchors(markdown: &str) -> HashSet<String> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut in_block = false;
    for line in markdown.lines() {
        if fence(line) {
            in_block = !in_block;
            continue;
        }
        if in_block {
            continue;
        }
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(line[hashes..].trim().trim_end_matches('#'));
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// Whether a target leaves the repository's files: a URL, a mail address.
fn external(target: &str) -> bool {
    target.contains("://") || target.starts_with("mailto:")
}

/// `path` without `.` and `..` components; None when it climbs above its start.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(p) => out.push(p),
            Component::RootDir | Component::Prefix(_) => {}
        }
    }
    Some(out)
}

/// The broken links of `file` (a markdown file under `root`, given relative to it).
pub fn check_file(root: &Path, file: &Path) -> Vec<Broken> {
    let text = match fs::read_to_string(root.join(file)) {
        Ok(t) => t,
        Err(e) => {
            return vec![Broken {
                file: file.to_path_buf(),
                line: 0,
                target: String::new(),
                why: format!("cannot read it: {e}"),
            }]
        }
    };
    let dir = file.parent().unwrap_or(Path::new(""));
    let mut out = Vec::new();
    for link in links(&text) {
        if external(&link.target) {
            continue;
        }
        let broken = |why: String| Broken {
            file: file.to_path_buf(),
            line: link.line,
            target: link.target.clone(),
            why,
        };
        let (path, anchor) = match link.target.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (link.target.as_str(), None),
        };
        let resolved = if path.is_empty() {
            Some(file.to_path_buf())
        } else if let Some(abs) = path.strip_prefix('/') {
            normalize(Path::new(abs))
        } else {
            normalize(&dir.join(path))
        };
        let Some(resolved) = resolved else {
            out.push(broken(
                "points outside the repository: link to a file of the repository".into(),
            ));
            continue;
        };
        let on_disk = root.join(&resolved);
        if !on_disk.exists() {
            out.push(broken(format!(
                "{} does not exist: fix the path or create the page",
                resolved.display()
            )));
            continue;
        }
        let Some(anchor) = anchor.filter(|a| !a.is_empty()) else {
            continue;
        };
        if on_disk.extension().is_some_and(|x| x == "md") {
            let target_text = fs::read_to_string(&on_disk).unwrap_or_default();
            if !anchors(&target_text).contains(anchor) {
                out.push(broken(format!(
                    "{} has no heading whose anchor is #{anchor}: fix the anchor or the heading",
                    resolved.display()
                )));
            }
        }
    }
    out
}

/// The markdown files of the repository, relative to `root`: README.md, docs/ and every other
/// `.md` outside build output, installed packages and hidden folders.
pub fn markdown_files(root: &Path) -> Vec<PathBuf> {
    const SKIP: [&str; 4] = ["target", "node_modules", "dist", "__pycache__"];
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = fs::read_dir(root.join(&rel)) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let path = rel.join(&name);
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                if !name.starts_with('.') && !SKIP.contains(&name.as_str()) {
                    stack.push(path);
                }
            } else if name.ends_with(".md") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_inline_image_and_reference_links_but_not_code() {
        let md = "See [a](docs/a.md#x) and ![i](img.png \"t\").\n\
                  `[not](code.md)` but [b](<b c.md>)\n\
                  ```\n[in](block.md)\n```\n\
                  [ref]: other.md#y\n\
                  [p](https://example.org/a_(b)) [q](x.md#(y))\n";
        let targets: Vec<(usize, String)> =
            links(md).into_iter().map(|l| (l.line, l.target)).collect();
        assert_eq!(
            targets,
            [
                (1, "docs/a.md#x".to_string()),
                (1, "img.png".to_string()),
                (2, "b c.md".to_string()),
                (6, "other.md#y".to_string()),
                (7, "https://example.org/a_(b)".to_string()),
                (7, "x.md#(y)".to_string()),
            ]
        );
    }

    #[test]
    fn slugs_follow_github() {
        assert_eq!(
            slug("What `/settle` checks before co-signing"),
            "what-settle-checks-before-co-signing"
        );
        assert_eq!(
            slug("The facilitator (`trust-gate-facilitator`)"),
            "the-facilitator-trust-gate-facilitator"
        );
        assert_eq!(
            slug("Replicas: several facilitator processes on Redis"),
            "replicas-several-facilitator-processes-on-redis"
        );
        assert_eq!(
            slug("gate_payment_strict, 6001..6016"),
            "gate_payment_strict-60016016"
        );
        assert_eq!(slug("See [the docs](x.md) now"), "see-the-docs-now");
        let a = anchors("# T\n## Same\n```\n## Not\n```\n## Same\n#NoSpace\n");
        let mut a: Vec<_> = a.into_iter().collect();
        a.sort();
        assert_eq!(a, ["same", "same-1", "t"]);
    }

    fn tree(files: &[(&str, &str)]) -> PathBuf {
        let root =
            std::env::temp_dir().join(format!("tg-links-{}-{}", std::process::id(), files.len()));
        let _ = fs::remove_dir_all(&root);
        for (path, text) in files {
            let p = root.join(path);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        }
        root
    }

    #[test]
    fn reports_a_missing_file_a_missing_heading_and_a_path_outside() {
        let root = tree(&[
            (
                "README.md",
                "# R\n[ok](docs/a.md#part-one) [dir](docs) [self](#r)\n\
                 [gone](docs/none.md)\n[bad](docs/a.md#part-two)\n[out](../x.md)\n\
                 [web](https://example.org/none.md)\n",
            ),
            ("docs/a.md", "# A\n## Part one\n[up](../README.md#r)\n"),
        ]);
        let readme = check_file(&root, Path::new("README.md"));
        let got: Vec<(usize, &str)> = readme.iter().map(|b| (b.line, b.target.as_str())).collect();
        assert_eq!(
            got,
            [
                (3, "docs/none.md"),
                (4, "docs/a.md#part-two"),
                (5, "../x.md")
            ],
            "{readme:?}"
        );
        assert!(readme[0].why.contains("docs/none.md does not exist"));
        assert!(readme[1]
            .why
            .contains("no heading whose anchor is #part-two"));
        assert!(readme[2].why.contains("outside the repository"));
        assert!(check_file(&root, Path::new("docs/a.md")).is_empty());
        assert_eq!(
            markdown_files(&root),
            [PathBuf::from("README.md"), PathBuf::from("docs/a.md")]
        );
        fs::remove_dir_all(root).unwrap();
    }
}
