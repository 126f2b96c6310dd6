//! The MCP server through real MCP clients: rmcp's client over streamable HTTP (in-process
//! server) and over stdio (`trust-gate mcp` as a child process), and the official inspector
//! CLI from npm, all against a seeded in-process localnet.

#[path = "../../../tests/tests/localnet/fixture.rs"]
#[allow(dead_code)]
mod fixture;
mod harness;

mod approvals;
mod bearer;
mod boot;
mod eras;
mod holdback;
mod hostile;
mod http_sessions;
mod inspector;
mod pay;
mod stdio;
mod subscriptions;
mod tools;
