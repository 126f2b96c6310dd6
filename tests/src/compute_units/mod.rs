//! Compute units of every instruction of the three programs, measured by running them.
//!
//! [`tour`] executes each instruction of policy_vault, gate and validation_registry at least
//! once, on a fresh [`World`], and reads what each invoke consumed from the transaction logs
//! (`Program <id> consumed <n> of <m> compute units`, which the runtime writes for every SBF
//! program, top-level and CPI alike). Run natively, the programs are builtins and the numbers
//! mean nothing; run with `SBF_OUT_DIR` (the SBF builds) they are what a cluster charges,
//! except that the registry and engine stand-ins stay native, so their own cost is not in them.
//! [`real_tour`] settles and disputes on the REAL registry and engine (their SBF builds), whose
//! cost is then in the whole transactions' units.

use crate::registry;
use crate::world::{min_tier_acceptance, open_policy, Agent, Attestations, World};
use anchor_lang::prelude::Pubkey;
use gate::settlement::TOKEN_PROGRAM_ID;
use policy_vault::engine::kinds;
use policy_vault::state::{funding, PolicyParams};
use solana_sdk::instruction::{AccountMeta, Instruction};
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_client::settle::Funding;
use trust_gate_localnet::externals::ExternalPrograms;

mod profile;
pub use profile::Phase;
use profile::Probes;

/// One program invoke and what it consumed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invoke {
    /// 1 for a top-level instruction, 2 for a CPI it makes, ...
    pub depth: usize,
    pub program: Pubkey,
    /// The Anchor instruction name in snake case (`gate_payment_strict`); empty when the
    /// program does not log one (SPL Token, the stand-ins).
    pub instruction: String,
    /// `None` when the runtime logged no consumption (native builtins).
    pub units: Option<u64>,
    /// On a build with compute-unit probes (`probe!`, feature `cu-profile`): what each phase
    /// between two probes consumed, see [`Phase`].
    pub phases: Vec<Phase>,
}

/// The invokes of one transaction, in the order they ended (a CPI before its caller), read
/// from its log messages.
pub fn invokes(logs: &[String]) -> Vec<Invoke> {
    let mut open: Vec<(Invoke, Probes)> = Vec::new();
    let mut done = Vec::new();
    for line in logs {
        let Some(rest) = line.strip_prefix("Program ") else {
            continue;
        };
        if let Some(label) = rest.strip_prefix("log: cu: ") {
            if let Some((_, probes)) = open.last_mut() {
                probes.label = Some(label.trim().to_string());
            }
            continue;
        }
        if let Some(remaining) = rest
            .strip_prefix("consumption: ")
            .and_then(|r| r.strip_suffix(" units remaining"))
        {
            if let (Some((_, probes)), Ok(remaining)) = (open.last_mut(), remaining.parse()) {
                let label = probes.label.take().unwrap_or_else(|| "?".into());
                let calls = std::mem::take(&mut probes.calls);
                probes.seen.push((label, remaining, calls));
            }
            continue;
        }
        if let Some(name) = rest.strip_prefix("log: Instruction: ") {
            if let Some((top, _)) = open.last_mut() {
                if top.instruction.is_empty() {
                    top.instruction = snake_case(name.trim());
                }
            }
            continue;
        }
        let mut words = rest.split_whitespace();
        let (Some(id), Some(verb)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(program) = id.parse::<Pubkey>() else {
            continue;
        };
        match verb {
            "invoke" => open.push((
                Invoke {
                    depth: open.len() + 1,
                    program,
                    instruction: String::new(),
                    units: None,
                    phases: Vec::new(),
                },
                Probes::default(),
            )),
            "consumed" => {
                // "consumed <n> of <units left when it started> compute units"
                let consumed = words.next().and_then(|n| n.parse().ok());
                let start = words.nth(1).and_then(|n| n.parse::<u64>().ok());
                if let Some((top, probes)) = open.last_mut() {
                    top.units = consumed;
                    if let (Some(consumed), Some(start)) = (consumed, start) {
                        top.phases = std::mem::take(probes).phases(start, consumed);
                    }
                }
            }
            "success" | "failed:" => {
                if let Some((top, _)) = open.pop() {
                    // Its caller's phase holds the call, not what the callee consumed.
                    if let Some((_, caller)) = open.last_mut() {
                        caller.calls += top.units.unwrap_or(0);
                    }
                    done.push(top);
                }
            }
            _ => {}
        }
    }
    done
}

/// Our programs log no instruction names (built with Anchor's `no-log-ix-name`: each name
/// line cost about 110 compute units), so [`invokes`] cannot name their invokes: a top-level
/// one is named here by its instruction's discriminator in the IDLs (`ixs` are the
/// transaction's instructions, in order), a CPI by the instruction that makes it.
pub fn name_ours(invokes: &mut [Invoke], ixs: &[Instruction]) {
    let names = idl_names();
    // The runtime verifies an Ed25519 precompile instruction (a channel voucher's) without
    // invoking anything, so it logs no invoke of its own.
    let mut top = ixs
        .iter()
        .filter(|ix| ix.program_id != solana_sdk::ed25519_program::ID);
    for inv in invokes.iter_mut().filter(|i| i.depth == 1) {
        let Some(ix) = top.next() else { break };
        if inv.instruction.is_empty() && ix.program_id == inv.program {
            if let Some(name) = ix
                .data
                .get(..8)
                .and_then(|d| names.get(&(ix.program_id, d.to_vec())))
            {
                inv.instruction = name.clone();
            }
        }
    }
    for i in 0..invokes.len() {
        if !invokes[i].instruction.is_empty() || program_name(&invokes[i].program).is_none() {
            continue;
        }
        let depth = invokes[i].depth;
        let Some(caller) = invokes[i + 1..].iter().find(|c| c.depth < depth) else {
            continue;
        };
        let caller = format!(
            "{}::{}",
            program_name(&caller.program).unwrap_or("?"),
            caller.instruction
        );
        if let Some((_, _, name)) = CPI_NAMES
            .iter()
            .find(|(c, callee, _)| *c == caller && *callee == invokes[i].program)
        {
            invokes[i].instruction = name.to_string();
        }
    }
}

/// The instruction each of our CPIs runs, by the instruction that makes it.
const CPI_NAMES: [(&str, Pubkey, &str); 6] = [
    ("gate::gate_payment", policy_vault::ID, "evaluate"),
    (
        "gate::gate_channel_close",
        policy_vault::ID,
        "release_reservation",
    ),
    (
        "gate::gate_channel_open",
        policy_vault::ID,
        "evaluate_and_commit",
    ),
    (
        "gate::gate_payment_strict",
        policy_vault::ID,
        "evaluate_and_commit",
    ),
    ("gate::gate_pull", policy_vault::ID, "evaluate_and_commit"),
    ("gate::init_killswitch", policy_vault::ID, "init_killswitch"),
];

/// (program id, discriminator) → instruction name, from the committed IDLs, read once per
/// process (every measured transaction is named).
fn idl_names() -> &'static std::collections::HashMap<(Pubkey, Vec<u8>), String> {
    static NAMES: std::sync::OnceLock<std::collections::HashMap<(Pubkey, Vec<u8>), String>> =
        std::sync::OnceLock::new();
    NAMES.get_or_init(read_idl_names)
}

fn read_idl_names() -> std::collections::HashMap<(Pubkey, Vec<u8>), String> {
    let dir = trust_gate_test_setup::repo_root().join("idl");
    let mut names = std::collections::HashMap::new();
    for (id, program) in [
        (policy_vault::ID, "policy_vault"),
        (gate::ID, "gate"),
        (validation_registry::ID, "validation_registry"),
    ] {
        let path = dir.join(format!("{program}.json"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let idl: serde_json::Value = serde_json::from_str(&text).expect("an IDL");
        for ix in idl["instructions"].as_array().expect("instructions") {
            let discriminator: Vec<u8> = ix["discriminator"]
                .as_array()
                .expect("a discriminator")
                .iter()
                .map(|b| b.as_u64().expect("a byte") as u8)
                .collect();
            names.insert(
                (id, discriminator),
                ix["name"].as_str().expect("a name").to_string(),
            );
        }
    }
    names
}

fn snake_case(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Our program's name for `id`, or `None` for any other program.
pub fn program_name(id: &Pubkey) -> Option<&'static str> {
    [
        (policy_vault::ID, "policy_vault"),
        (gate::ID, "gate"),
        (validation_registry::ID, "validation_registry"),
    ]
    .into_iter()
    .find(|(p, _)| p == id)
    .map(|(_, n)| n)
}

/// What the tour measured for one instruction of ours, over every time it ran.
#[derive(Clone, Debug)]
pub struct Row {
    pub program: &'static str,
    pub instruction: String,
    /// `None` for a top-level instruction, else the `program::instruction` that called it.
    pub caller: Option<String>,
    /// What each run consumed, where the runtime metered it (SBF programs only).
    pub units: Vec<u64>,
    pub runs: usize,
}

impl Row {
    pub fn max(&self) -> Option<u64> {
        self.units.iter().copied().max()
    }

    pub fn min(&self) -> Option<u64> {
        self.units.iter().copied().min()
    }
}

/// The settlement cases of the tours.
pub const SMALLEST: &str = "smallest: open policy, unrated payee, no attestations";
pub const LARGEST: &str = "largest: a policy with every rule (all kinds, validity window, monthly, lifetime and per-payee caps, allow list of 256 in its account), both rated, acceptance policy, both attestations";
pub const VAULT_FUNDED: &str = "largest without limits, vault-funded: all policy kinds, both rated, acceptance policy, both attestations, paid from the payer's policy vault";
/// The largest case paid from the vault: every rule with its 256-entry list.
pub const VAULT_FUNDED_LARGEST: &str =
    "largest, vault-funded: the largest policy, paid from the payer's policy vault";
pub const TOKEN_2022: &str = "smallest in a Token-2022 mint (no extensions)";
/// A payment above its policy's approval threshold, with the approval it closes.
pub const APPROVED: &str = "approved: an open policy, the amount above its approval threshold, with its approval (closed by the settlement)";
pub const REAL_UNRATED: &str = "smallest, real registry and engine: payee without engine stats";
pub const REAL_RATED: &str = "smallest, real registry and engine: payee with engine stats";
/// The largest held payment that fits a packet (docs/holdback.md): the largest vault-funded
/// case, its payee's share held back to the escrow by a second transfer.
pub const HELD_LARGEST: &str = "largest held, vault-funded: the largest policy with a holdback schedule, paid from the payer's vault, a share held back to the payee's escrow";
/// The largest gated pull: the largest policy with an approval threshold below the pull,
/// both attestations, the approval.
pub const PULL_LARGEST: &str = "largest pull: the largest policy, its approval threshold below the pull, both attestations, the approval";
/// The stand-in settlements whose own part the budget holds (every case but the Token-2022
/// one, which costs less than the smallest, and the real registry's, whose own parts are
/// the smallest's).
pub const BUDGET_CASES: [&str; 4] = [SMALLEST, LARGEST, VAULT_FUNDED, VAULT_FUNDED_LARGEST];
/// The held settlements, whose own part has a budget of its own.
pub const HELD_CASES: [&str; 1] = [HELD_LARGEST];

/// The block's per-account limit of compute units: what all transactions that write one
/// account (a payee's registry and engine accounts) may use together in one slot.
pub const ACCOUNT_UNITS_PER_BLOCK: u64 = 12_000_000;
/// Seconds per slot.
pub const SLOT_SECS: f64 = 0.4;

/// A settlement [gate_payment_strict, TransferChecked, emit_feedback] and its costs.
#[derive(Clone, Debug)]
pub struct Settlement {
    pub case: &'static str,
    /// Each top-level instruction: its name and units.
    pub instructions: Vec<(String, u64)>,
    /// The whole transaction, as the runtime counts it against the limit.
    pub total: u64,
    /// What the agent registry consumed inside emit_feedback, its CPI to the engine included
    /// (metered whenever it runs as SBF: the real registry; the stand-in, native, is not).
    pub registry: u64,
    /// What the token programs consumed: the payment's TransferChecked and, vault-funded,
    /// the vault's release into the payer's account (a CPI from policy_vault).
    pub token: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Report {
    pub rows: Vec<Row>,
    pub settlements: Vec<Settlement>,
    /// The dispute of each settlement: its case and the whole transaction's units.
    pub disputes: Vec<(&'static str, u64)>,
    /// Each gated pull: its case, the whole transaction, the Subscriptions program's part.
    pub pulls: Vec<Pull>,
    /// On a profiled build: each case's instructions of ours (`program::instruction`) and
    /// their phases, one entry per run (the decision's `gate_payment` and the settlement's).
    pub profiles: Vec<(&'static str, String, Vec<Phase>)>,
}

impl Report {
    /// Adds another run's measurements (PDA bump searches differ with every run's random
    /// keys, so a few runs give the spread).
    pub fn merge(&mut self, other: Report) {
        for row in other.rows {
            self.add(row);
        }
        self.settlements.extend(other.settlements);
        self.disputes.extend(other.disputes);
        self.pulls.extend(other.pulls);
        self.profiles.extend(other.profiles);
    }

    /// Adds `row`'s runs to the row of the same instruction and caller, or as a new row.
    fn add(&mut self, row: Row) {
        match self.rows.iter_mut().find(|r| {
            r.program == row.program && r.instruction == row.instruction && r.caller == row.caller
        }) {
            Some(r) => {
                r.units.extend(row.units);
                r.runs += row.runs;
            }
            None => self.rows.push(row),
        }
    }

    fn record(&mut self, invokes: &[Invoke]) {
        for (i, inv) in invokes.iter().enumerate() {
            let Some(program) = program_name(&inv.program) else {
                continue;
            };
            // The caller of a CPI is the next invoke to end at a smaller depth.
            let caller = invokes[i + 1..]
                .iter()
                .find(|c| c.depth < inv.depth)
                .map(|c| {
                    let p = program_name(&c.program).unwrap_or("?");
                    format!("{p}::{}", c.instruction)
                });
            self.add(Row {
                program,
                instruction: inv.instruction.clone(),
                caller,
                units: inv.units.into_iter().collect(),
                runs: 1,
            });
        }
    }

    /// The rows as a Markdown table, sorted by program and instruction.
    pub fn table(&self) -> String {
        let mut rows = self.rows.clone();
        rows.sort_by(|a, b| {
            (a.program, &a.instruction, &a.caller).cmp(&(b.program, &b.instruction, &b.caller))
        });
        let mut out =
            String::from("| instruction | CU: median (min–max) | runs |\n|---|---:|---:|\n");
        for r in rows {
            let name = match &r.caller {
                None => format!("{}::{}", r.program, r.instruction),
                Some(c) => format!("{}::{} (CPI from {c})", r.program, r.instruction),
            };
            let units = match r.units.is_empty() {
                true => "not metered".to_string(),
                false => range(r.units.iter().copied()),
            };
            out.push_str(&format!("| {name} | {units} | {} |\n", r.runs));
        }
        out.push_str("\n| settlement | gate_payment_strict | TransferChecked | emit_feedback | whole transaction | own part |\n|---|---:|---:|---:|---:|---:|\n");
        let mut cases: Vec<&str> = Vec::new();
        for s in &self.settlements {
            if !cases.contains(&s.case) {
                cases.push(s.case);
            }
        }
        for case in &cases {
            let runs: Vec<&Settlement> = self
                .settlements
                .iter()
                .filter(|s| s.case == *case)
                .collect();
            let column =
                |n: &str| {
                    range(runs.iter().filter_map(|s| {
                        s.instructions.iter().find(|(i, _)| i == n).map(|(_, u)| *u)
                    }))
                };
            out.push_str(&format!(
                "| {case} | {} | {} | {} | {} | {} |\n",
                column("gate_payment_strict"),
                column("transfer_checked"),
                column("emit_feedback"),
                range(runs.iter().map(|s| s.total)),
                range(runs.iter().map(|s| s.own()))
            ));
        }
        out.push_str("\n| gated pull | Subscriptions program (its transfer included) | whole transaction | own part |\n|---|---:|---:|---:|\n");
        let mut pull_cases: Vec<&str> = Vec::new();
        for p in &self.pulls {
            if !pull_cases.contains(&p.case) {
                pull_cases.push(p.case);
            }
        }
        for case in pull_cases {
            let runs: Vec<&Pull> = self.pulls.iter().filter(|p| p.case == case).collect();
            out.push_str(&format!(
                "| {case} | {} | {} | {} |\n",
                range(runs.iter().map(|p| p.subscriptions)),
                range(runs.iter().map(|p| p.total)),
                range(runs.iter().map(|p| p.own()))
            ));
        }
        out.push_str("\n| dispute of the settlement | whole transaction |\n|---|---:|\n");
        // The cases that were disputed (the Token-2022 settlement is not).
        for case in cases
            .iter()
            .filter(|c| self.disputes.iter().any(|(d, _)| d == *c))
        {
            let totals = self.disputes.iter().filter(|(c, _)| c == case);
            out.push_str(&format!(
                "| {case} | {} |\n",
                range(totals.map(|(_, units)| *units))
            ));
        }
        out
    }
}

impl Settlement {
    /// Our programs' own part: the whole transaction but the token programs' transfers (the
    /// payment, and a vault's release) and the registry's and engine's own work inside
    /// emit_feedback.
    pub fn own(&self) -> u64 {
        self.total
            .saturating_sub(self.token)
            .saturating_sub(self.registry)
    }
}

/// A gated pull (`gate_pull`, one instruction) and its costs.
#[derive(Clone, Debug)]
pub struct Pull {
    pub case: &'static str,
    /// The whole transaction.
    pub total: u64,
    /// What the Subscriptions program consumed: its `transfer_recurring`, the token
    /// program's transfer and its event inside it.
    pub subscriptions: u64,
    /// What the agent registry consumed inside the pull, its CPI to the engine included.
    pub registry: u64,
}

impl Pull {
    /// Our programs' own part, defined as a settlement's: the whole transaction but the
    /// Subscriptions program's pull (whose transfer is the token program's, and whose own
    /// 5 000 to 13 000 units are not ours) and the registry's and engine's own work.
    pub fn own(&self) -> u64 {
        self.total
            .saturating_sub(self.subscriptions)
            .saturating_sub(self.registry)
    }

    fn of(case: &'static str, total: u64, invokes: &[Invoke]) -> Pull {
        // Only the outermost invoke of each: the Subscriptions program calls itself for its
        // event, and its units include that call's.
        let units_at = |program: Pubkey, depth: usize| -> u64 {
            invokes
                .iter()
                .filter(|i| i.program == program && i.depth == depth)
                .filter_map(|i| i.units)
                .sum()
        };
        Pull {
            case,
            total,
            subscriptions: units_at(trust_gate_client::subscriptions::PROGRAM_ID, 2),
            registry: units_at(trust_gate_program_common::external::ids::AGENT_REGISTRY, 2),
        }
    }
}

impl Report {
    /// The median own part of the gated pulls, if any ran.
    pub fn pull_own_median(&self) -> Option<u64> {
        median(self.pulls.iter().map(Pull::own))
    }
}

impl Report {
    /// The median of `f` over the runs of settlement `case`, if it ran.
    pub fn settlement_median(&self, case: &str, f: impl Fn(&Settlement) -> u64) -> Option<u64> {
        median(self.settlements.iter().filter(|s| s.case == case).map(f))
    }

    /// The one-line budget: gate_payment's median, the largest own part of the three
    /// stand-in settlements' medians, and the per-payee ceiling from the whole smallest
    /// settlement (on the real registry and engine, rated payee, when they ran).
    pub fn budget_line(&self) -> String {
        let gate_payment = self.gate_payment_median();
        let own_of = |cases: &[&str]| {
            cases
                .iter()
                .filter_map(|case| self.settlement_median(case, Settlement::own))
                .max()
        };
        let (own, held) = (own_of(&BUDGET_CASES), own_of(&HELD_CASES));
        let (smallest, on) = match self.settlement_median(REAL_RATED, |s| s.total) {
            Some(units) => (
                Some(units),
                "real registry and engine, payee with engine stats",
            ),
            None => (
                self.settlement_median(SMALLEST, |s| s.total),
                "stand-in registry and engine",
            ),
        };
        let show = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
        let ceiling = smallest
            .map(|u| {
                format!(
                    "{:.0}",
                    ACCOUNT_UNITS_PER_BLOCK as f64 / u as f64 / SLOT_SECS
                )
            })
            .unwrap_or_else(|| "-".into());
        format!(
            "CU budget: gate_payment {}, own {}, held own {}, pull own {} (medians on SBF), ceiling {ceiling} payments/s per payee ({on})",
            show(gate_payment),
            show(own),
            show(held),
            show(self.pull_own_median()),
        )
    }
}

impl Report {
    /// The median of the top-level gate_payment's units over every time it ran.
    pub fn gate_payment_median(&self) -> Option<u64> {
        median(
            self.rows
                .iter()
                .filter(|r| {
                    r.program == "gate" && r.instruction == "gate_payment" && r.caller.is_none()
                })
                .flat_map(|r| r.units.iter().copied()),
        )
    }
}

/// The median of `units`, if any.
fn median(units: impl Iterator<Item = u64>) -> Option<u64> {
    let mut all: Vec<u64> = units.collect();
    all.sort_unstable();
    all.get(all.len() / 2).copied()
}

/// `median (lo–hi)`, or one number when they all agree.
fn range(units: impl Iterator<Item = u64>) -> String {
    let mut all: Vec<u64> = units.collect();
    all.sort_unstable();
    match (all.first(), all.last()) {
        (Some(lo), Some(hi)) if lo == hi => lo.to_string(),
        (Some(lo), Some(hi)) => format!("{} ({lo}–{hi})", all[all.len() / 2]),
        _ => "-".to_string(),
    }
}

/// Sends `ixs` paid by `fee_payer` (the context's payer when `None`), signed by `signers`;
/// records what our programs consumed and returns the transaction's units and invokes.
async fn measure(
    w: &mut World,
    report: &mut Report,
    ixs: &[Instruction],
    fee_payer: Option<&Keypair>,
    signers: &[&Keypair],
) -> (u64, Vec<Invoke>) {
    let payer = fee_payer.unwrap_or(&w.ctx.payer).insecure_clone();
    let tx = crate::transaction_paid_by(&mut w.ctx, ixs, &payer, signers).await;
    let meta = crate::execute(&mut w.ctx, tx)
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    // TRUST_GATE_CU_LOGS=1: every measured transaction's logs on stderr, for profiling with
    // `sol_log_compute_units` probes.
    if std::env::var_os("TRUST_GATE_CU_LOGS").is_some() {
        eprintln!(
            "--- {} CU\n{}",
            meta.compute_units_consumed,
            meta.log_messages.join("\n")
        );
    }
    let mut invokes = invokes(&meta.log_messages);
    name_ours(&mut invokes, ixs);
    report.record(&invokes);
    (meta.compute_units_consumed, invokes)
}

/// The names and units of a transaction's top-level instructions (SPL Token logs its own
/// instruction name as "TransferChecked", which comes out as `transfer_checked`).
fn top_level(invokes: &[Invoke]) -> Vec<(String, u64)> {
    invokes
        .iter()
        .filter(|i| i.depth == 1)
        .map(|i| (i.instruction.clone(), i.units.unwrap_or(0)))
        .collect()
}

/// Runs every instruction of the three programs and the two settlement cases.
pub async fn tour() -> Report {
    // With the real payment-channels program, for the gated channel open.
    let mut pt = trust_gate_localnet::native::program_test();
    crate::channels::add_to(&mut pt);
    crate::subscriptions::add_to(&mut pt);
    let mut w = World::with_program_test(pt).await;
    let mut r = Report::default();
    let sdk = crate::world::sdk();

    // gate: the facilitator's authority (World::new made one; a second facilitator here).
    let facilitator = crate::funded_keypair(&mut w.ctx).await;
    let ix = sdk.init_gate_authority(&facilitator.pubkey());
    measure(&mut w, &mut r, &[ix], None, &[&facilitator]).await;

    // gate: an agent registered through the gate (registry + engine CPIs).
    let owner = crate::funded_keypair(&mut w.ctx).await;
    let asset = Keypair::new();
    let ix = sdk.register_agent_via_cpi(
        &owner.pubkey(),
        &asset.pubkey(),
        &w.collection.pubkey(),
        "ipfs://agent".into(),
    );
    measure(&mut w, &mut r, &[ix], None, &[&owner, &asset]).await;

    // policy_vault: authority, kill switch both ways, rotation, policies, acceptance.
    let a = w.register_agent().await;
    let b = w.register_agent().await;
    for agent in [&a, &b] {
        let ix = w.init_authority_ix(
            &agent.owner.pubkey(),
            &agent.asset(),
            vec![agent.owner.pubkey()],
            1,
        );
        measure(&mut w, &mut r, &[ix], None, &[&agent.owner]).await;
    }
    let ix = sdk.init_killswitch_direct(&a.owner.pubkey(), &a.asset());
    measure(&mut w, &mut r, &[ix], None, &[&a.owner]).await;
    let ix = sdk.init_killswitch(&b.owner.pubkey(), &b.asset());
    measure(&mut w, &mut r, &[ix], None, &[&b.owner]).await;
    for paused in [true, false] {
        let ix = sdk.set_killswitch(&a.owner.pubkey(), &[], &a.asset(), paused);
        measure(&mut w, &mut r, &[ix], None, &[&a.owner]).await;
    }
    let second = crate::funded_keypair(&mut w.ctx).await;
    let ix = sdk.rotate_authority(
        &b.owner.pubkey(),
        &[],
        &b.asset(),
        vec![b.owner.pubkey(), second.pubkey()],
        1,
    );
    measure(&mut w, &mut r, &[ix], None, &[&b.owner]).await;
    let ix = w.init_policy_ix(&a.owner.pubkey(), &a.asset(), 2, open_policy(w.mint));
    measure(&mut w, &mut r, &[ix], None, &[&a.owner]).await;
    let ix = sdk.retire_policy(&a.owner.pubkey(), &[], &a.asset(), 2);
    measure(&mut w, &mut r, &[ix], None, &[&a.owner]).await;
    let ix = w.set_acceptance_ix(&b.owner.pubkey(), &[], &b.asset(), min_tier_acceptance(1));
    measure(&mut w, &mut r, &[ix], None, &[&b.owner]).await;
    // A sold agent: the seller's authority names its guard, the buyer asks to take the
    // authority over, and completes it after the delay; a second sale the members cancel,
    // a third they accept, a fourth whose request lapses and anyone closes.
    let mut sold = w.register_agent().await;
    w.init_authority(&sold).await;
    let seller = sold.owner.insecure_clone();
    let delay = policy_vault::state::DEFAULT_TAKE_OVER_DELAY_SECS;
    let ix = sdk.set_authority_guard(
        &seller.pubkey(),
        &[],
        &sold.asset(),
        delay,
        &seller.pubkey(),
    );
    measure(&mut w, &mut r, &[ix], None, &[&seller]).await;
    let buyer = crate::funded_keypair(&mut w.ctx).await;
    w.transfer_asset(&mut sold, buyer.insecure_clone())
        .await
        .expect("the sale on MPL Core");
    let ix = sdk.request_take_over(&buyer.pubkey(), &sold.asset(), vec![buyer.pubkey()], 1);
    measure(&mut w, &mut r, &[ix], None, &[&buyer]).await;
    w.advance_time(i64::from(delay)).await;
    let ix = sdk.complete_take_over(&sold.asset(), &buyer.pubkey());
    measure(&mut w, &mut r, &[ix], None, &[]).await;
    for accept in [false, true] {
        let next = crate::funded_keypair(&mut w.ctx).await;
        w.transfer_asset(&mut sold, next.insecure_clone())
            .await
            .expect("the sale on MPL Core");
        let ix = sdk.request_take_over(&next.pubkey(), &sold.asset(), vec![next.pubkey()], 1);
        crate::send(&mut w.ctx, &[ix], &[&next])
            .await
            .expect("the request");
        let ix = if accept {
            sdk.accept_take_over(&buyer.pubkey(), &[], &sold.asset(), &next.pubkey())
        } else {
            sdk.cancel_take_over(&buyer.pubkey(), &[], &sold.asset(), &next.pubkey())
        };
        measure(&mut w, &mut r, &[ix], None, &[&buyer]).await;
    }
    let last = crate::funded_keypair(&mut w.ctx).await;
    w.transfer_asset(&mut sold, last.insecure_clone())
        .await
        .expect("the sale on MPL Core");
    let ix = sdk.request_take_over(&last.pubkey(), &sold.asset(), vec![last.pubkey()], 1);
    crate::send(&mut w.ctx, &[ix], &[&last])
        .await
        .expect("the request");
    // The guard the hand-overs reset: the default delay, which the request lapses after.
    w.advance_time(2 * i64::from(delay) + 1).await;
    let ix = sdk.close_lapsed_take_over(&sold.asset(), &last.pubkey());
    measure(&mut w, &mut r, &[ix], None, &[]).await;

    // validation_registry: namespace, attestor, request, respond, revoke.
    let payer_key = w.ctx.payer.pubkey();
    let payee_cap = crate::registry::capability_hash("audit.smart-contract.v1");
    for name in ["audit.smart-contract.v1", "kyc.tier-1.v1"] {
        let ix = registry::register_namespace_ix(&payer_key, name, "1", "");
        measure(&mut w, &mut r, &[ix], None, &[]).await;
    }
    let attestor = crate::funded_keypair(&mut w.ctx).await;
    let ix = registry::register_attestor_ix(&attestor.pubkey(), "ipfs://attestor");
    measure(&mut w, &mut r, &[ix], None, &[&attestor]).await;
    let slot = crate::clock(&mut w.ctx).await.slot;
    let ix = registry::request_ix(&payer_key, &a.asset(), &payee_cap, [3; 32], slot + 1_000);
    measure(&mut w, &mut r, &[ix], None, &[]).await;
    let claim = |subject: Pubkey, capability: [u8; 32]| registry::Claim {
        subject,
        capability,
        payload_hash: [1; 32],
        uri_hash: [2; 32],
        expires_at_slot: slot + 10_000,
    };
    let ix = registry::respond_ix(&attestor.pubkey(), &claim(a.asset(), payee_cap));
    measure(&mut w, &mut r, &[ix], None, &[&attestor]).await;
    let ix = registry::revoke_ix(&attestor.pubkey(), &a.asset(), &payee_cap, [7; 32]);
    measure(&mut w, &mut r, &[ix], None, &[&attestor]).await;

    // The smallest payment: open policy, unrated payee, no acceptance policy, no attestation.
    let small_payer = w.register_unrated_agent().await;
    w.init_authority(&small_payer).await;
    w.init_policy(&small_payer, 1, open_policy(w.mint))
        .await
        .unwrap();
    let small_payee = w.register_unrated_agent().await;
    let mut paid = Vec::new();
    paid.push(
        settle(
            &mut w,
            &mut r,
            SMALLEST,
            (&small_payer, &small_payee),
            Attestations::default(),
            Funding::Wallet,
        )
        .await,
    );

    // The largest: a policy with every rule, both rated, an acceptance policy, both
    // attestations;
    // from the payer's wallet, then from its vault (opened, then a withdrawal).
    let (big_payer, big_payee, att) = w.largest_case(&attestor, funding::WALLET).await;
    paid.push(
        settle(
            &mut w,
            &mut r,
            LARGEST,
            (&big_payer, &big_payee),
            att,
            Funding::Wallet,
        )
        .await,
    );
    // A policy's creation with a list account, and an edit of the
    // list (24 payees, about the most one transaction carries).
    let list_owner = w.register_agent().await;
    w.init_authority(&list_owner).await;
    let owner = list_owner.owner.insecure_clone();
    let rules = sdk.payee_list_rules(
        &list_owner.asset(),
        1,
        policy_vault::state::PolicyRules {
            payee_list_mode: 1,
            monthly_cap: 1_000_000,
            ..Default::default()
        },
    );
    let ix = sdk.init_policy(
        &owner.pubkey(),
        &[],
        &list_owner.asset(),
        1,
        open_policy(w.mint),
        rules,
        0,
    );
    measure(&mut w, &mut r, &[ix], None, &[&owner]).await;
    let payees: Vec<Pubkey> = (0..24).map(|_| Pubkey::new_unique()).collect();
    let ix = sdk.edit_payee_list(&owner.pubkey(), &[], &list_owner.asset(), 1, payees, vec![]);
    measure(&mut w, &mut r, &[ix], None, &[&owner]).await;
    approvals(&mut w, &mut r).await;

    let (vault_payer, vault_payee, att) = w.largest_core_case(&attestor, funding::VAULT).await;
    // largest_core_case opened the vault; measure another opening (a second mint) and a
    // withdrawal.
    let owner = vault_payer.owner.insecure_clone();
    let other_mint = w.token_2022_mint(&[]).await;
    let ix = sdk.open_vault(
        &owner.pubkey(),
        &[],
        &vault_payer.asset(),
        &other_mint,
        &gate::settlement::TOKEN_2022_PROGRAM_ID,
    );
    measure(&mut w, &mut r, &[ix], None, &[&owner]).await;
    let to = w.token_account(&owner.pubkey(), 0).await;
    let ix = sdk.withdraw(
        &owner.pubkey(),
        &[],
        &vault_payer.asset(),
        &w.mint,
        &TOKEN_PROGRAM_ID,
        &to,
        1_000_000,
    );
    measure(&mut w, &mut r, &[ix], None, &[&owner]).await;
    // largest_core_case named the owner the spender; name it again (a rename costs the same).
    let ix = sdk.set_vault_spender(
        &owner.pubkey(),
        &[],
        &vault_payer.asset(),
        1,
        &owner.pubkey(),
    );
    measure(&mut w, &mut r, &[ix], None, &[&owner]).await;
    paid.push(
        settle(
            &mut w,
            &mut r,
            VAULT_FUNDED,
            (&vault_payer, &vault_payee),
            att,
            Funding::Vault,
        )
        .await,
    );
    let (payer, payee, att) = w.largest_case(&attestor, funding::VAULT).await;
    paid.push(
        settle(
            &mut w,
            &mut r,
            VAULT_FUNDED_LARGEST,
            (&payer, &payee),
            att,
            Funding::Vault,
        )
        .await,
    );
    holdback(&mut w, &mut r, &attestor).await;
    pulls(&mut w, &mut r, &attestor).await;

    // gate: a payment channel opened through the gate, the real program's open after it.
    let (payer, payee) = w.parties().await;
    // A voucher key must be a point of the curve: a keypair's.
    let voucher_key = Keypair::new();
    let open = trust_gate_client::channels::Open {
        payer: payer.owner.pubkey(),
        rent_payer: w.facilitator.pubkey(),
        payee: w.facilitator.pubkey(),
        mint: w.mint,
        token_program: trust_gate_client::settle::TokenProgram::SplToken,
        authorized_signer: voucher_key.pubkey(),
        salt: 1,
        deposit: 1_000_000,
        grace_period: 3_600,
        open_slot: crate::clock(&mut w.ctx).await.slot,
        splits: vec![trust_gate_client::channels::Split {
            recipient: payee.owner.pubkey(),
            bps: trust_gate_client::channels::ALL_BPS,
        }],
    };
    let (facilitator_key, mint) = (w.facilitator.pubkey(), w.mint);
    let gate_open = |o: &trust_gate_client::channels::Open| {
        sdk.gate_channel_open(
            &payer.owner.pubkey(),
            &payer.asset(),
            &payee.asset(),
            &facilitator_key,
            &mint,
            o.deposit,
            1,
            &o.channel(),
            Attestations::default(),
        )
    };
    let ix = gate_open(&open);
    let facilitator = w.facilitator.insecure_clone();
    measure(
        &mut w,
        &mut r,
        &[ix, open.instruction()],
        None,
        &[&payer.owner, &facilitator],
    )
    .await;
    // ... and closed through it once sealed: a refund given back to the policy, a feedback.
    let record: gate::state::ChannelRecord =
        crate::fetch(&mut w.ctx, &sdk.pda.channel_record(&open.channel()))
            .await
            .expect("the channel's record");
    let seal = [
        trust_gate_client::channels::voucher(&voucher_key, &open.channel(), 400_000, 0),
        trust_gate_client::channels::settle_and_seal(&facilitator.pubkey(), &open.channel(), true),
        sdk.gate_channel_close(
            &record,
            &w.collection.pubkey(),
            trust_gate_client::instructions::FeedbackDetails {
                score: 90,
                tag1: "x402".into(),
                ..Default::default()
            },
        ),
    ];
    measure(&mut w, &mut r, &seal, None, &[&facilitator]).await;
    // A second channel, sealed at nothing and distributed by anyone once its slot window has
    // passed, which deletes it: its record closes without the gate's close.
    let second = trust_gate_client::channels::Open {
        salt: 2,
        open_slot: crate::clock(&mut w.ctx).await.slot,
        ..open
    };
    let ix = gate_open(&second);
    w.send(&[ix, second.instruction()], &[&payer.owner, &facilitator])
        .await
        .expect("a second gated open");
    let seal = trust_gate_client::channels::settle_and_seal(
        &facilitator.pubkey(),
        &second.channel(),
        false,
    );
    w.send(&[seal], &[&facilitator]).await.expect("sealed");
    w.token_account(&trust_gate_client::channels::TREASURY_OWNER, 0)
        .await;
    w.advance_slots(trust_gate_client::channels::OPEN_SLOT_WINDOW + 1)
        .await;
    let distribute = trust_gate_client::channels::Distribute::of(&second).instruction();
    w.send(&[distribute], &[]).await.expect("distributed");
    let forget = sdk.close_channel_record(&second.channel(), &facilitator.pubkey());
    measure(&mut w, &mut r, &[forget], None, &[]).await;

    // The smallest settlement in a Token-2022 mint (no extensions): what its TransferChecked
    // costs, for the unit limit the SDKs request (`trust_gate_client::units`).
    let any_mint = PolicyParams {
        kinds: kinds::KILL_SWITCH,
        ..open_policy(Pubkey::default())
    };
    let payer = w.payer_with_policy(3, any_mint).await;
    let payee = w.payee(3, None).await;
    let mint = w.token_2022_mint(&[]).await;
    let undisputed = crate::payment_id();
    let ixs = w
        .token_2022_settlement(&mint, &payer, &payee, 1_000_000, undisputed)
        .await;
    let facilitator = w.facilitator.insecure_clone();
    let (total, invokes) = measure(&mut w, &mut r, &ixs, Some(&facilitator), &[&payer.owner]).await;
    r.settlements
        .push(settlement_of(TOKEN_2022, total, &invokes));

    // Past the dispute window every payment's records close (anyone may send the close; the
    // disputed ones' records go with their logs, their rent to the facilitator that paid it).
    w.advance_time(gate::instructions::DISPUTE_WINDOW_SECS + 1)
        .await;
    let f = facilitator.pubkey();
    paid.push(undisputed);
    for pay in paid {
        let ix = sdk.close_payment_records(&f, &pay, &f);
        measure(&mut w, &mut r, &[ix], None, &[]).await;
    }
    r
}

/// The read-only decision, then the settlement of the same payment, then its dispute;
/// returns the payment id hash.
/// A payment above a policy's approval threshold: its approval, the read-only decision and
/// the settlement with it (which closes it), and an unused approval closed by its member.
async fn approvals(w: &mut World, r: &mut Report) {
    let sdk = crate::world::sdk();
    let payer = w.register_agent().await;
    w.set_stats(&payer.asset(), crate::world::tier(3)).await;
    w.init_authority(&payer).await;
    w.init_policy_with_limits_approved(&payer, 1, open_policy(w.mint), Default::default(), 1)
        .await
        .unwrap();
    let payee = w.payee(3, None).await;
    let owner = payer.owner.insecure_clone();
    let amount = 1_000;
    let source = w.token_account(&owner.pubkey(), amount).await;
    let destination = w.token_account(&payee.owner.pubkey(), 0).await;
    let terms = policy_vault::state::ApprovalTerms {
        payer_asset: payer.asset(),
        payee_asset: payee.asset(),
        mint: w.mint,
        amount,
        policy_id: 1,
    };
    let approval = sdk.pda.approval(&terms);
    let ix = sdk.approve_payment(&owner.pubkey(), &[], terms, w.now + 600);
    measure(w, r, &[ix], None, &[&owner]).await;
    let mut decide = w.gate_payment_ix(
        &payer.asset(),
        &payee.asset(),
        amount,
        w.mint,
        1,
        Attestations::default(),
    );
    decide
        .accounts
        .push(AccountMeta::new_readonly(approval, false));
    measure(w, r, &[decide], None, &[]).await;
    let mut strict = w.strict_ix(&payer, &payee, amount, destination, Attestations::default());
    strict.accounts.push(AccountMeta::new(approval, false));
    strict
        .accounts
        .push(AccountMeta::new(owner.pubkey(), false));
    let ixs = [
        strict,
        w.transfer_ix(&source, &destination, &owner.pubkey(), amount),
        w.emit_feedback_ix(crate::payment_id(), &payee.asset(), 90, amount),
    ];
    let facilitator = w.facilitator.insecure_clone();
    let (total, invokes) = measure(w, r, &ixs, Some(&facilitator), &[&owner]).await;
    r.settlements.push(settlement_of(APPROVED, total, &invokes));
    let unused = policy_vault::state::ApprovalTerms { amount: 2, ..terms };
    let ix = sdk.approve_payment(&owner.pubkey(), &[], unused, w.now + 600);
    measure(w, r, &[ix], None, &[&owner]).await;
    let ix = sdk.close_approval(&owner.pubkey(), &sdk.pda.approval(&unused), &owner.pubkey());
    measure(w, r, &[ix], None, &[&owner]).await;
}

async fn settle(
    w: &mut World,
    r: &mut Report,
    case: &'static str,
    (payer, payee): (&Agent, &Agent),
    att: Attestations,
    funding: Funding,
) -> [u8; 32] {
    let amount = 1_000_000;
    // A vault-funded payer's own account starts (and ends) empty.
    let own_funds = match funding {
        Funding::Wallet => 10 * amount,
        Funding::Vault => 0,
    };
    let source = w.token_account(&payer.owner.pubkey(), own_funds).await;
    let destination = w.token_account(&payee.owner.pubkey(), 0).await;
    let decide = w.gate_payment_ix(&payer.asset(), &payee.asset(), amount, w.mint, 1, att);
    let (_, invokes) = measure(w, r, &[decide], None, &[]).await;
    r.record_profile(case, &invokes);

    let pay = crate::payment_id();
    let mut strict = w.strict_ix(payer, payee, amount, destination, att);
    if funding == Funding::Vault {
        strict = w.vault_strict_ix(payer, payee, amount, destination, att, source);
    }
    let ixs = [
        strict,
        w.transfer_ix(&source, &destination, &payer.owner.pubkey(), amount),
        w.emit_feedback_ix(pay, &payee.asset(), 90, amount),
    ];
    let facilitator = w.facilitator.insecure_clone();
    let (total, invokes) = measure(w, r, &ixs, Some(&facilitator), &[&payer.owner]).await;
    r.settlements.push(settlement_of(case, total, &invokes));
    r.record_profile(case, &invokes);
    let dispute = w.dispute_ix(&payer.owner.pubkey(), pay, &payee.asset(), [9; 32]);
    let (total, _) = measure(w, r, &[dispute], Some(&facilitator), &[&payer.owner]).await;
    r.disputes.push((case, total));
    pay
}

/// The gated pulls alone ([`pulls`] on a bank of their own, with the real Subscriptions
/// program): what the `subscriptions` suite holds to the pull's budget.
pub async fn pull_tour() -> Report {
    let mut pt = trust_gate_localnet::native::program_test();
    crate::subscriptions::add_to(&mut pt);
    let mut w = World::with_program_test(pt).await;
    w.advance_slots(10).await;
    let mut r = Report::default();
    let attestor = w.attestor().await;
    pulls(&mut w, &mut r, &attestor).await;
    r
}

/// A gated subscription under the largest policy with an approval threshold below its pull
/// ([`largest_pull`]): `subscribe`, the approval, one `gate_pull`, `unsubscribe`.
async fn pulls(w: &mut World, r: &mut Report, attestor: &Keypair) {
    let (pull, record, owner) = largest_pull(w, r, attestor).await;
    let facilitator = w.facilitator.insecure_clone();
    let (total, invokes) = measure(w, r, &[pull], Some(&facilitator), &[]).await;
    r.pulls.push(Pull::of(PULL_LARGEST, total, &invokes));
    let unsubscribe = crate::world::sdk().unsubscribe(&record);
    measure(w, r, &[unsubscribe], None, &[&owner]).await;
}

/// The largest gated pull, set up: a payer under the largest policy with an approval
/// threshold below the pull, both attestations, subscribed daily to its payee (`subscribe`
/// and the pull's approval measured into `r`). Returns the pull (the world's facilitator
/// signs it), the subscription's record and its delegator.
pub async fn largest_pull(
    w: &mut World,
    r: &mut Report,
    attestor: &Keypair,
) -> (Instruction, gate::state::GatedSubscription, Keypair) {
    use trust_gate_client::instructions::{ApprovalUse, FeedbackDetails, Subscription};
    use trust_gate_client::settle::TokenProgram;
    use trust_gate_client::subscriptions::{RecurringDelegation, RecurringTerms};
    let sdk = crate::world::sdk();
    let amount = 1_000_000;
    let (payer, payee, att) = w
        .largest_case_approved(attestor, funding::WALLET, amount - 1)
        .await;
    let owner = payer.owner.insecure_clone();
    w.token_account(&owner.pubkey(), 10 * amount).await;
    let destination = w.token_account(&payee.owner.pubkey(), 0).await;
    let s = Subscription {
        delegator: owner.pubkey(),
        payer_asset: payer.asset(),
        payee_asset: payee.asset(),
        facilitator: w.facilitator.pubkey(),
        mint: w.mint,
        token_program: TokenProgram::SplToken,
        policy_id: 1,
        terms: RecurringTerms {
            nonce: 1,
            amount_per_period: 10 * amount,
            period_length_s: 86_400,
            start_ts: 0,
            expiry_ts: w.now + 30 * 86_400,
        },
    };
    measure(w, r, &[sdk.subscribe(&s)], None, &[&owner]).await;
    let terms = policy_vault::state::ApprovalTerms {
        payer_asset: payer.asset(),
        payee_asset: payee.asset(),
        mint: w.mint,
        amount,
        policy_id: 1,
    };
    let ix = sdk.approve_payment(&owner.pubkey(), &[], terms, w.now + 600);
    measure(w, r, &[ix], None, &[&owner]).await;
    let delegation = sdk.subscription_delegation(&s);
    let record: gate::state::GatedSubscription =
        crate::fetch(&mut w.ctx, &sdk.pda.gated_subscription(&delegation))
            .await
            .expect("the subscription's record");
    let account = crate::raw_account(&mut w.ctx, &delegation)
        .await
        .expect("the delegation");
    let d = RecurringDelegation::read(&account.data).expect("a recurring delegation");
    let mut pull = sdk.gate_pull(
        &record,
        &d,
        &destination,
        TokenProgram::SplToken,
        &w.collection.pubkey(),
        amount,
        FeedbackDetails {
            score: 90,
            tag1: "x402".into(),
            tag2: "subscription".into(),
            ..FeedbackDetails::default()
        },
        att,
    );
    ApprovalUse {
        address: sdk.pda.approval(&terms),
        rent_payer: owner.pubkey(),
    }
    .append_to(&mut pull);
    (pull, record, owner)
}

/// The largest held settlement (vault-funded, every rule, a share of the tier-3 payee's
/// payment held back) and each move of a held share: the escrow's opening, a dispute that
/// freezes it, the arbiter's decision, a release and the payee's refund.
async fn holdback(w: &mut World, r: &mut Report, attestor: &Keypair) {
    use crate::holdback::schedule;
    let sdk = crate::world::sdk();
    let arbiter = crate::funded_keypair(&mut w.ctx).await;
    let (payer, payee, att) = w
        .largest_held_case(attestor, funding::VAULT, 0, schedule(arbiter.pubkey()))
        .await;
    let ix = sdk.open_holdback_escrow(
        &w.ctx.payer.pubkey(),
        &payee.asset(),
        &w.mint,
        &TOKEN_PROGRAM_ID,
    );
    measure(w, r, &[ix], None, &[]).await;
    let escrow = sdk.pda.holdback_escrow(&payee.asset(), &w.mint);
    let source = w.token_account(&payer.owner.pubkey(), 0).await;
    let destination = w.token_account(&payee.owner.pubkey(), 0).await;
    let facilitator = w.facilitator.insecure_clone();
    let case = crate::holdback::HeldCase {
        payer: &payer,
        payee: &payee,
        attestations: att,
        funding: Funding::Vault,
        source,
        destination,
        escrow,
        compute_budget: Default::default(),
    };
    let settle_held = async |w: &mut World, r: &mut Report, record: bool| {
        let pay = crate::payment_id();
        let (quote, ixs) = w.quoted_settlement(&case, 1_000_000, pay).await;
        assert!(
            quote.is_some_and(|q| q.held > 0) && ixs.len() == 4,
            "a held settlement"
        );
        let (total, invokes) = measure(w, r, &ixs, Some(&facilitator), &[&payer.owner]).await;
        if record {
            r.settlements
                .push(settlement_of(HELD_LARGEST, total, &invokes));
            r.record_profile(HELD_LARGEST, &invokes);
        }
        pay
    };
    // Disputed, then decided by the arbiter.
    let pay = settle_held(w, r, true).await;
    let dispute = w.dispute_ix(&payer.owner.pubkey(), pay, &payee.asset(), [9; 32]);
    measure(w, r, &[dispute], Some(&facilitator), &[&payer.owner]).await;
    let held = w.held_payment(&pay).await;
    let ix = sdk.arbitrate_holdback(&held, true, &source, &[]);
    measure(w, r, &[ix], None, &[&arbiter]).await;
    // Refunded by the payee.
    let pay = settle_held(w, r, false).await;
    let held = w.held_payment(&pay).await;
    let ix = sdk.refund_holdback(&payee.owner.pubkey(), &held, &source);
    measure(w, r, &[ix], None, &[&payee.owner]).await;
    // Released after the hold.
    let pay = settle_held(w, r, false).await;
    let held = w.held_payment(&pay).await;
    w.set_time(held.hold_until).await;
    measure(
        w,
        r,
        &[sdk.release_holdback(&held, &destination)],
        None,
        &[],
    )
    .await;
    let members: Vec<Pubkey> = (0..3).map(|_| Pubkey::new_unique()).collect();
    let ix = sdk.create_arbiter_set(&w.ctx.payer.pubkey(), 2, &members);
    measure(w, r, &[ix], None, &[]).await;
}

/// A settlement's record from its transaction's units and invokes.
fn settlement_of(case: &'static str, total: u64, invokes: &[Invoke]) -> Settlement {
    let units_of = |program: fn(&Pubkey) -> bool| -> u64 {
        invokes
            .iter()
            .filter(|i| program(&i.program))
            .filter_map(|i| i.units)
            .sum()
    };
    Settlement {
        case,
        instructions: top_level(invokes),
        total,
        registry: units_of(|p| *p == trust_gate_program_common::external::ids::AGENT_REGISTRY),
        token: units_of(gate::settlement::is_token_program),
    }
}

/// Settlements and their disputes on the REAL registry, engine and MPL Core (`externals`):
/// the smallest settlement to a payee without engine stats and to one with them, so that the
/// registry's and the engine's own work inside emit_feedback and dispute_payment is in the
/// whole transactions' units (they run as SBF always; ours as [`tour`]'s do).
pub async fn real_tour(externals: &ExternalPrograms) -> Report {
    let mut w = World::on_real(externals).await;
    let mut r = Report::default();
    let payer = w.register_agent_with(true, false).await;
    w.init_authority(&payer).await;
    w.init_policy(&payer, 1, open_policy(w.mint)).await.unwrap();
    let cases = [(false, REAL_UNRATED), (true, REAL_RATED)];
    for (stats, case) in cases {
        let payee = w.register_agent_with(true, stats).await;
        // The engine counts feedback within 3 slots of the last as a burst.
        w.advance_slots(10).await;
        settle(
            &mut w,
            &mut r,
            case,
            (&payer, &payee),
            Attestations::default(),
            Funding::Wallet,
        )
        .await;
    }
    // The per-instruction rows stay the stand-in tour's: a CPI's units count toward its
    // caller, so these runs would mix the real registry's work into emit_feedback's and
    // dispute_payment's rows.
    r.rows.clear();
    r
}

/// What each limit rule costs: `evaluate_and_commit`'s units in one wallet-funded
/// settlement under a policy with that rule alone (no kinds; a payee of tier 3 whose
/// acceptance policy accepts any payer, so that no address search varies with the keys), next
/// to the same settlement under a policy without limits. The list's payee is the last entry an inline list
/// holds, or one of the list account's entries.
pub async fn rule_costs() -> Vec<(&'static str, u64)> {
    use policy_vault::state::PolicyRules;
    let mut w = World::new().await;
    let now = w.now;
    let inline_last = |payee: Pubkey| {
        [
            Pubkey::new_unique(),
            Pubkey::new_unique(),
            Pubkey::new_unique(),
            payee,
        ]
    };
    type Case = (&'static str, Option<fn(i64) -> PolicyRules>, usize);
    let cases: [Case; 8] = [
        ("no limits (baseline)", None, 0),
        (
            "validity window",
            Some(|now| PolicyRules {
                not_before: now - 60,
                not_after: now + 86_400,
                ..PolicyRules::default()
            }),
            0,
        ),
        (
            "allow list, 4 inline",
            Some(|_| PolicyRules {
                payee_list_mode: 1,
                ..PolicyRules::default()
            }),
            0,
        ),
        (
            "allow list account, 16 entries",
            Some(|_| PolicyRules {
                payee_list_mode: 1,
                payee_list: Pubkey::new_unique(),
                ..PolicyRules::default()
            }),
            16,
        ),
        (
            "allow list account, 256 entries",
            Some(|_| PolicyRules {
                payee_list_mode: 1,
                payee_list: Pubkey::new_unique(),
                ..PolicyRules::default()
            }),
            256,
        ),
        (
            "monthly cap",
            Some(|_| PolicyRules {
                monthly_cap: 1 << 40,
                ..PolicyRules::default()
            }),
            0,
        ),
        (
            "lifetime cap",
            Some(|_| PolicyRules {
                lifetime_cap: 1 << 40,
                ..PolicyRules::default()
            }),
            0,
        ),
        (
            "per-payee daily cap",
            Some(|_| PolicyRules {
                payee_daily_cap: 1 << 40,
                ..PolicyRules::default()
            }),
            0,
        ),
    ];
    let mut out = Vec::new();
    for (name, rules, entries) in cases {
        let payee = w.payee(3, Some(min_tier_acceptance(0))).await;
        let payer = match rules {
            None => w.payer_with_policy(3, open_policy(w.mint)).await,
            Some(rules) => {
                let mut rules = rules(now);
                if rules.payee_list_mode != 0 && !rules.has_list_account() {
                    rules.payees = inline_last(payee.asset());
                }
                w.payer_with_limits(3, open_policy(w.mint), rules).await
            }
        };
        let mut att = Attestations::default();
        if entries > 0 {
            let mut listed: Vec<Pubkey> = (1..entries).map(|_| Pubkey::new_unique()).collect();
            listed.push(payee.asset());
            w.edit_payee_list(&payer, 1, &listed, &[]).await.unwrap();
            att.payee_list = Some(crate::world::sdk().pda.payee_list(&payer.asset(), 1));
        }
        let amount = 1_000;
        let source = w.token_account(&payer.owner.pubkey(), amount).await;
        let destination = w.token_account(&payee.owner.pubkey(), 0).await;
        let ixs = [
            w.strict_ix(&payer, &payee, amount, destination, att),
            w.transfer_ix(&source, &destination, &payer.owner.pubkey(), amount),
            w.emit_feedback_ix(crate::payment_id(), &payee.asset(), 90, amount),
        ];
        let facilitator = w.facilitator.insecure_clone();
        let mut ignored = Report::default();
        let (_, invokes) = measure(
            &mut w,
            &mut ignored,
            &ixs,
            Some(&facilitator),
            &[&payer.owner],
        )
        .await;
        let units = invokes
            .iter()
            .find(|i| i.instruction == "evaluate_and_commit")
            .and_then(|i| i.units)
            .unwrap_or_else(|| panic!("{name}: evaluate_and_commit was not metered"));
        out.push((name, units));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use anchor_lang::InstructionData;

    fn settlement(case: &'static str, total: u64, token: u64, registry: u64) -> Settlement {
        Settlement {
            case,
            instructions: vec![
                ("gate_payment_strict".into(), 1),
                ("transfer_checked".into(), 6_000),
                ("emit_feedback".into(), 1),
            ],
            total,
            registry,
            token,
        }
    }

    #[test]
    fn the_budget_line_takes_the_largest_own_part_and_the_real_smallest_settlement() {
        let mut r = Report {
            rows: vec![Row {
                program: "gate",
                instruction: "gate_payment".into(),
                caller: None,
                units: vec![30_000, 10_000, 20_000],
                runs: 3,
            }],
            settlements: vec![
                settlement(SMALLEST, 100_000, 6_000, 0),
                settlement(LARGEST, 120_000, 6_000, 0),
                // Vault-funded: the release is a second token transfer.
                settlement(VAULT_FUNDED, 126_000, 12_000, 0),
                // Held: the share's transfer is a token transfer too.
                settlement(HELD_LARGEST, 133_000, 18_000, 0),
            ],
            disputes: vec![],
            pulls: vec![Pull {
                case: PULL_LARGEST,
                total: 40_000,
                subscriptions: 19_000,
                registry: 0,
            }],
            profiles: vec![],
        };
        assert_eq!(
            r.budget_line(),
            "CU budget: gate_payment 20000, own 114000, held own 115000, pull own 21000 (medians on SBF), ceiling 300 payments/s per payee (stand-in registry and engine)"
        );
        // With the real registry and engine: their own work leaves the own part, the whole
        // transaction sets the ceiling.
        r.settlements
            .push(settlement(REAL_RATED, 150_000, 6_000, 60_000));
        assert_eq!(r.settlements[4].own(), 84_000);
        assert!(r.budget_line().ends_with(
            "ceiling 200 payments/s per payee (real registry and engine, payee with engine stats)"
        ));
    }

    #[test]
    fn our_invokes_are_named_by_discriminator_and_caller() {
        let g = gate::ID.to_string();
        let v = policy_vault::ID.to_string();
        let t = TOKEN_PROGRAM_ID.to_string();
        // A settlement's logs without instruction names but the token program's own.
        let logs: Vec<String> = [
            format!("Program {g} invoke [1]"),
            format!("Program {v} invoke [2]"),
            format!("Program {v} consumed 8000 of 190000 compute units"),
            format!("Program {v} success"),
            format!("Program {g} consumed 18000 of 200000 compute units"),
            format!("Program {g} success"),
            format!("Program {t} invoke [1]"),
            "Program log: Instruction: TransferChecked".into(),
            format!("Program {t} consumed 6174 of 180000 compute units"),
            format!("Program {t} success"),
        ]
        .into();
        let ix =
            |program: Pubkey, data: Vec<u8>| Instruction::new_with_bytes(program, &data, vec![]);
        let ixs = [
            ix(
                gate::ID,
                gate::instruction::GatePaymentStrict {
                    amount: 1,
                    policy_id: 1,
                    deadline: 0,
                    holdback_tier: None,
                }
                .data(),
            ),
            ix(TOKEN_PROGRAM_ID, vec![12]),
        ];
        let mut got = invokes(&logs);
        name_ours(&mut got, &ixs);
        let names: Vec<&str> = got.iter().map(|i| i.instruction.as_str()).collect();
        assert_eq!(
            names,
            [
                "evaluate_and_commit",
                "gate_payment_strict",
                "transfer_checked"
            ]
        );
    }

    #[test]
    fn invokes_nest_and_take_their_names_and_units() {
        let g = gate::ID.to_string();
        let v = policy_vault::ID.to_string();
        let logs: Vec<String> = [
            format!("Program {g} invoke [1]"),
            "Program log: Instruction: GatePaymentStrict".into(),
            format!("Program {v} invoke [2]"),
            "Program log: Instruction: EvaluateAndCommit".into(),
            format!("Program {v} consumed 27000 of 190000 compute units"),
            format!("Program {v} success"),
            format!("Program {g} consumed 61000 of 200000 compute units"),
            format!("Program {g} success"),
        ]
        .into();
        let got = invokes(&logs);
        assert_eq!(got.len(), 2);
        assert_eq!(
            (got[0].depth, got[0].instruction.as_str(), got[0].units),
            (2, "evaluate_and_commit", Some(27_000))
        );
        assert_eq!(
            (got[1].depth, got[1].instruction.as_str(), got[1].units),
            (1, "gate_payment_strict", Some(61_000))
        );
        let mut r = Report::default();
        r.record(&got);
        assert_eq!(
            r.rows[0].caller.as_deref(),
            Some("gate::gate_payment_strict")
        );
        assert_eq!(r.rows[1].caller, None);
    }
}
