//! Every crate's modules import one another one way; the client SDK's and the CLI's in a
//! declared order (see `trust_gate_repo_checks::layers`).

use trust_gate_repo_checks::layers::{self, Crate};
use trust_gate_repo_checks::workspace_root;

/// The client SDK's modules, lowest first: each imports only modules before it. The crate
/// docs (client/src/lib.rs) list them in this order.
const CLIENT_ORDER: &[&str] = &[
    "redact",
    "json",
    "network",
    "error",
    "ids",
    "token",
    "pda",
    "subscriptions",
    "holdback",
    "instructions",
    "channels",
    "vouchers",
    "decode",
    "approvals",
    "spend",
    "chain",
    "receipts",
    "held",
    "pulls",
    "idl",
    "errors",
    "settle",
    "reclaim",
    "channel_reclaim",
    "simulate",
    "units",
    "standin",
    "env",
];

/// The CLI's modules (main.rs the root), lowest first: each imports only modules before it.
const CLI_ORDER: &[&str] = &[
    "demo_key",
    "migrate",
    "simulate",
    "policy",
    "approve",
    "pay",
    "dispute",
    "holdback",
    "subscriptions",
    "reclaim",
    "services",
    "mcp",
    "dashboard",
    "bench",
    "up",
];

/// The crates of a workspace member, by its directory.
fn crates_of(member: &str) -> Vec<Crate> {
    let src = workspace_root().join(member).join("src");
    let files = layers::read_src(&src)
        .unwrap_or_else(|e| panic!("{member}: cannot read {}: {e}", src.display()));
    assert!(!files.is_empty(), "{member}: no .rs file under src/");
    layers::crates(member, &files)
}

fn members() -> Vec<String> {
    let manifest = std::fs::read_to_string(workspace_root().join("Cargo.toml"))
        .expect("the workspace's Cargo.toml");
    let members = layers::workspace_members(&manifest);
    assert!(
        members.iter().any(|m| m == "client") && members.iter().any(|m| m == "cli"),
        "the workspace members read from Cargo.toml miss client or cli: {members:?}"
    );
    members
}

#[test]
fn no_crate_has_modules_importing_one_another_in_a_circle() {
    let cycles: Vec<String> = members()
        .iter()
        .flat_map(|m| crates_of(m))
        .flat_map(|c| layers::cycles(&c))
        .map(|c| c.to_string())
        .collect();
    assert!(cycles.is_empty(), "\n{}\n", cycles.join("\n\n"));
}

fn check_order(member: &str, order: &[&str]) {
    let krate = crates_of(member).swap_remove(0);
    // The check must see the imports it guards.
    assert!(
        !layers::edges(&krate).is_empty(),
        "{member}: no import between modules found; is the reader broken?"
    );
    let problems = layers::check_order(&krate, order);
    assert!(
        problems.is_empty(),
        "\n{}\n(the declared order is in {})\n",
        problems.join("\n"),
        file!()
    );
}

#[test]
fn the_client_modules_follow_their_declared_order() {
    check_order("client", CLIENT_ORDER);
}

#[test]
fn the_cli_modules_follow_their_declared_order() {
    check_order("cli", CLI_ORDER);
}
