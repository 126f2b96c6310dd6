//! The `trust-gate` command's subcommands as a user runs them: the built binary as a child
//! process against a seeded in-process localnet.

#[path = "../../../tests/tests/localnet/fixture.rs"]
#[allow(dead_code)]
mod fixture;

mod approvals;
mod dashboard;
mod holdback;
mod policy;
mod reclaim;
mod subscriptions;

use fixture::Env;

/// Runs `trust-gate <args> --rpc-url <the localnet>` against `env` with `RUST_LOG=error` and
/// none of the environment variables in `unset`; returns (success, stdout, stderr).
pub fn trust_gate(env: &Env, args: &[&str], unset: &[&str]) -> (bool, String, String) {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_trust-gate"));
    command
        .args(args)
        .args(["--rpc-url", &env.localnet.rpc_url()])
        .env("RUST_LOG", "error");
    for name in unset {
        command.env_remove(name);
    }
    let out = command.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
