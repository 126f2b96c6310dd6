//! The docs corpus: the repository's `docs/` pages, bundled into the binary (or read from
//! `MCP_DOCS_DIR`), served as `gate://docs/{page}` and searched by `gate_docs`.

use crate::envelope::{codes, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The bundled pages: (page name, markdown).
const BUNDLED: &[(&str, &str)] = &[
    ("architecture", include_str!("../../docs/architecture.md")),
    ("policies", include_str!("../../docs/policies.md")),
    ("deny-codes", include_str!("../../docs/deny-codes.md")),
    ("settlement", include_str!("../../docs/settlement.md")),
    ("holdback", include_str!("../../docs/holdback.md")),
    ("validation", include_str!("../../docs/validation.md")),
    ("mcp", include_str!("../../docs/mcp.md")),
    ("facilitator", include_str!("../../docs/facilitator.md")),
    ("demo", include_str!("../../docs/demo.md")),
    ("cli", include_str!("../../docs/cli.md")),
    ("sdk-rust", include_str!("../../docs/sdk-rust.md")),
    (
        "sdk-typescript",
        include_str!("../../docs/sdk-typescript.md"),
    ),
    ("localnet", include_str!("../../docs/localnet.md")),
    ("externals", include_str!("../../docs/externals.md")),
    ("channels", include_str!("../../docs/channels.md")),
    ("subscriptions", include_str!("../../docs/subscriptions.md")),
    ("deploying", include_str!("../../docs/deploying.md")),
    ("security", include_str!("../../docs/security.md")),
    ("reliability", include_str!("../../docs/reliability.md")),
    ("compute-units", include_str!("../../docs/compute-units.md")),
    ("performance", include_str!("../../docs/performance.md")),
    ("testing", include_str!("../../docs/testing.md")),
    ("dashboard", include_str!("../../docs/dashboard.md")),
    (
        "walkthroughs/facilitator-x402",
        include_str!("../../docs/walkthroughs/facilitator-x402.md"),
    ),
    (
        "walkthroughs/mount-verify",
        include_str!("../../docs/walkthroughs/mount-verify.md"),
    ),
    (
        "walkthroughs/multisig-killswitch",
        include_str!("../../docs/walkthroughs/multisig-killswitch.md"),
    ),
    (
        "walkthroughs/agent-setup",
        include_str!("../../docs/walkthroughs/agent-setup.md"),
    ),
    (
        "walkthroughs/validation-flow",
        include_str!("../../docs/walkthroughs/validation-flow.md"),
    ),
];

/// Where walkthrough pages live in the corpus.
pub const WALKTHROUGH_PREFIX: &str = "walkthroughs/";

#[derive(Clone, Debug)]
pub struct Page {
    pub name: String,
    pub title: String,
    pub text: String,
}

#[derive(Clone, Debug)]
pub struct Corpus {
    pub pages: Vec<Page>,
    /// Where it came from: "bundled" or the directory.
    pub source: String,
}

/// A documentation section that matches a query.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    /// The page's name.
    pub page: String,
    /// The page's resource URI (gate://docs/...).
    pub uri: String,
    /// The section's heading.
    pub section: String,
    /// How well it matches (higher is better).
    pub score: u32,
    /// An excerpt of the section.
    pub excerpt: String,
}

impl Corpus {
    /// The bundled corpus, or every `*.md` under `dir` when given.
    pub fn load(dir: Option<&Path>) -> Result<Corpus, ToolError> {
        let Some(dir) = dir else {
            return Ok(Corpus {
                pages: BUNDLED.iter().map(|(n, t)| page(n, t)).collect(),
                source: "bundled".into(),
            });
        };
        let mut pages = Vec::new();
        collect(dir, dir, &mut pages);
        pages.sort_by(|a, b| a.name.cmp(&b.name));
        if pages.is_empty() {
            return Err(ToolError::new(
                codes::DOCS_CORPUS_NOT_FOUND,
                format!("no docs corpus at MCP_DOCS_DIR={}: no *.md files there", dir.display()),
            )
            .hint("point MCP_DOCS_DIR at a directory of markdown pages, or unset it to use the bundled corpus"));
        }
        Ok(Corpus {
            pages,
            source: dir.display().to_string(),
        })
    }

    pub fn page(&self, name: &str) -> Option<&Page> {
        self.pages.iter().find(|p| p.name == name)
    }

    /// The names of the walkthrough pages, without the prefix.
    pub fn walkthroughs(&self) -> Vec<String> {
        self.pages
            .iter()
            .filter_map(|p| p.name.strip_prefix(WALKTHROUGH_PREFIX))
            .map(str::to_string)
            .collect()
    }

    /// Sections ranked by how often the query's words occur (heading matches weigh triple).
    pub fn search(&self, query: &str, max_results: usize) -> Vec<Hit> {
        let terms = terms(query);
        if terms.is_empty() {
            return Vec::new();
        }
        let mut hits: Vec<Hit> = Vec::new();
        for p in &self.pages {
            for (heading, body) in sections(&p.text) {
                let (h, b) = (heading.to_lowercase(), body.to_lowercase());
                let score: u32 = terms
                    .iter()
                    .map(|t| {
                        3 * count(&h, t) + count(&b, t) + 2 * u32::from(p.name.contains(t.as_str()))
                    })
                    .sum();
                // Every word must appear somewhere in the section or the page name.
                let all = terms.iter().all(|t| {
                    h.contains(t.as_str()) || b.contains(t.as_str()) || p.name.contains(t.as_str())
                });
                if score > 0 && all {
                    hits.push(Hit {
                        page: p.name.clone(),
                        uri: format!("gate://docs/{}", p.name),
                        section: heading.to_string(),
                        score,
                        excerpt: excerpt(body, &terms),
                    });
                }
            }
        }
        hits.sort_by(|a, b| b.score.cmp(&a.score).then(a.page.cmp(&b.page)));
        hits.truncate(max_results);
        hits
    }
}

fn page(name: &str, text: &str) -> Page {
    let title = text
        .lines()
        .find_map(|l| l.strip_prefix("# "))
        .unwrap_or(name)
        .trim()
        .to_string();
    Page {
        name: name.to_string(),
        title,
        text: text.to_string(),
    }
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<Page>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            collect(root, &path, out);
        } else if path.extension().is_some_and(|x| x == "md") {
            let (Ok(rel), Ok(text)) = (path.strip_prefix(root), std::fs::read_to_string(&path))
            else {
                continue;
            };
            let name = rel.with_extension("").to_string_lossy().replace('\\', "/");
            out.push(page(&name, &text));
        }
    }
}

/// Lower-case words of two or more characters.
fn terms(query: &str) -> Vec<String> {
    let mut t: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric() && c != '_' && c != '-')
        .filter(|w| w.chars().count() >= 2)
        .map(str::to_lowercase)
        .collect();
    t.dedup();
    t
}

fn count(haystack: &str, needle: &str) -> u32 {
    haystack.matches(needle).count().min(50) as u32
}

/// (heading, body) pairs: each `#`-heading and the text up to the next heading.
fn sections(text: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut heading = "";
    let mut start = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with('#') {
            if offset > start || !heading.is_empty() {
                out.push((heading, &text[start..offset]));
            }
            heading = line.trim_start_matches('#').trim();
            start = offset + line.len();
        }
        offset += line.len();
    }
    out.push((heading, &text[start..]));
    out
}

/// About 300 characters of `body` around the first occurrence of a term.
fn excerpt(body: &str, terms: &[String]) -> String {
    let lower = body.to_lowercase();
    let at = terms
        .iter()
        .filter_map(|t| lower.find(t.as_str()))
        .min()
        .unwrap_or(0);
    // Byte offsets of the lower-cased text match the original for ASCII; snap to a char
    // boundary for the rest.
    let mut from = at.saturating_sub(120).min(body.len());
    while !body.is_char_boundary(from) {
        from -= 1;
    }
    let text: String = body[from..].chars().take(300).collect();
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if from > 0 {
        format!("…{text}")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_corpus_has_every_page_with_a_title() {
        let c = Corpus::load(None).unwrap();
        assert_eq!(c.pages.len(), BUNDLED.len());
        for p in &c.pages {
            assert!(!p.title.is_empty() && p.text.len() > 200, "{}", p.name);
        }
        assert_eq!(
            c.walkthroughs(),
            [
                "facilitator-x402",
                "mount-verify",
                "multisig-killswitch",
                "agent-setup",
                "validation-flow"
            ]
        );
    }

    /// Every page of `docs/` is bundled, so a page added there reaches MCP clients too.
    #[test]
    fn the_bundled_corpus_is_every_page_of_docs() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
        let on_disk = Corpus::load(Some(&dir)).unwrap();
        let mut bundled: Vec<&str> = BUNDLED.iter().map(|(n, _)| *n).collect();
        bundled.sort_unstable();
        let names: Vec<&str> = on_disk.pages.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            bundled, names,
            "add the missing pages to BUNDLED in mcp/src/docs.rs"
        );
        let b = Corpus::load(None).unwrap();
        for p in &on_disk.pages {
            assert_eq!(
                b.page(&p.name).map(|b| &b.text),
                Some(&p.text),
                "{}",
                p.name
            );
        }
    }

    #[test]
    fn search_ranks_the_section_that_holds_the_words() {
        let c = Corpus::load(None).unwrap();
        let hits = c.search("CounterpartyTierBelowMin", 3);
        assert!(!hits.is_empty());
        assert_eq!(hits[0].page, "deny-codes", "{hits:?}");
        assert!(
            hits[0]
                .excerpt
                .to_lowercase()
                .contains("counterpartytierbelowmin")
                || hits[0].section.contains("CounterpartyTierBelowMin")
        );
        assert!(c.search("zzqqxx", 5).is_empty());
        assert!(c.search("", 5).is_empty());
        assert!(c.search("kill switch", 50).len() <= 50);
    }

    #[test]
    fn a_directory_without_pages_is_docs_corpus_not_found() {
        let dir = std::env::temp_dir().join(format!("tg-docs-empty-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = Corpus::load(Some(&dir)).unwrap_err();
        assert_eq!(e.error_code, "docs_corpus_not_found");
        std::fs::create_dir_all(dir.join("walkthroughs")).unwrap();
        std::fs::write(dir.join("walkthroughs/x.md"), "# X\n\nhello world\n").unwrap();
        let c = Corpus::load(Some(&dir)).unwrap();
        assert_eq!(c.walkthroughs(), ["x"]);
        assert_eq!(c.search("hello", 5)[0].page, "walkthroughs/x");
    }
}
