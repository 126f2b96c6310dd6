//! The profile of a build with compute-unit probes (`trust_gate_program_common::probe!`,
//! feature `cu-profile`): each invoke's phases between probes ([`Probes`], filled by
//! [`super::invokes`]), kept per budget case and printed as one table.

use super::{median, program_name, Invoke, Report, BUDGET_CASES};
use super::{LARGEST, SMALLEST, VAULT_FUNDED, VAULT_FUNDED_LARGEST};

/// One phase of an instruction on a profiled build: the units from the previous probe (or
/// the invoke's start) to the probe that names it, or to the invoke's end ("exit"), less what
/// the programs it called consumed; each named phase still holds one probe's cost, which
/// [`Report::profile_table`] takes out (the phase "probe" of two back-to-back probes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    pub label: String,
    pub units: u64,
}

/// The open invoke's probes while its logs are read.
#[derive(Default)]
pub(super) struct Probes {
    /// (label, units remaining, units its calls consumed before the probe)
    pub(super) seen: Vec<(String, u64, u64)>,
    pub(super) label: Option<String>,
    /// Units its calls consumed since the last probe.
    pub(super) calls: u64,
}

impl Probes {
    /// The phases, once the invoke's `consumed <n> of <start>` line is read.
    pub(super) fn phases(self, start: u64, consumed: u64) -> Vec<Phase> {
        if self.seen.is_empty() {
            return Vec::new();
        }
        let mut phases = Vec::new();
        let mut before = start;
        for (label, remaining, calls) in self.seen {
            let units = before.saturating_sub(remaining).saturating_sub(calls);
            phases.push(Phase { label, units });
            before = remaining;
        }
        let units = before
            .saturating_sub(start.saturating_sub(consumed))
            .saturating_sub(self.calls);
        phases.push(Phase {
            label: "exit".into(),
            units,
        });
        phases
    }
}

impl Report {
    /// Keeps the phases of `invokes`' instructions of ours, for the profile of `case`.
    pub(super) fn record_profile(&mut self, case: &'static str, invokes: &[Invoke]) {
        for inv in invokes.iter().filter(|i| !i.phases.is_empty()) {
            let program = program_name(&inv.program).unwrap_or("?");
            let name = format!("{program}::{}", inv.instruction);
            self.profiles.push((case, name, inv.phases.clone()));
        }
    }

    /// The profile of the budget's cases as a Markdown table (medians over the runs; each
    /// phase's probe cost taken out), or `None` when the programs carry no probes.
    pub fn profile_table(&self) -> Option<String> {
        if self.profiles.is_empty() {
            return None;
        }
        // The rows (instruction, phase) in the order the phases run: a phase first seen in a
        // later case (a vault-funded release) goes right after the phase before it.
        let mut rows: Vec<(String, String)> = Vec::new();
        for (_, name, phases) in &self.profiles {
            let mut at = rows.iter().rposition(|(n, _)| n == name);
            for p in phases {
                let row = (name.clone(), p.label.clone());
                match rows.iter().position(|r| *r == row) {
                    Some(i) => at = Some(i),
                    None => {
                        let i = at.map_or(rows.len(), |i| i + 1);
                        rows.insert(i, row);
                        at = Some(i);
                    }
                }
            }
        }
        // A phase's median in a case: the sum over its probes of that label in one run
        // (a label can close several phases, e.g. a loop's), then the median over runs.
        let cell = |case: &str, name: &str, label: &str| -> Option<u64> {
            median(
                self.profiles
                    .iter()
                    .filter(|(c, n, _)| *c == case && n == name)
                    .filter(|(_, _, phases)| phases.iter().any(|p| p.label == label))
                    .map(|(_, _, phases)| {
                        phases
                            .iter()
                            .filter(|p| p.label == label)
                            .map(|p| p.units)
                            .sum()
                    }),
            )
        };
        // One probe's cost: the phase between two back-to-back probes.
        let probe = median(
            self.profiles
                .iter()
                .flat_map(|(_, _, phases)| phases.iter())
                .filter(|p| p.label == "probe")
                .map(|p| p.units),
        )
        .unwrap_or(0);
        let mut out = format!(
            "One probe's cost, taken out of each phase it ends: {probe}\n\n| instruction: phase |"
        );
        for case in BUDGET_CASES {
            out.push_str(&format!(" {} |", case_short(case)));
        }
        out.push_str("\n|---|");
        out.push_str(&"---:|".repeat(BUDGET_CASES.len()));
        out.push('\n');
        for (name, label) in rows.iter().filter(|(_, l)| l != "probe") {
            out.push_str(&format!("| {name}: {label} |"));
            for case in BUDGET_CASES {
                // Every phase but the exit ends in a probe: its cost is taken out.
                let value = cell(case, name, label).map(|u| match label.as_str() {
                    "exit" => u,
                    _ => u.saturating_sub(probe),
                });
                out.push_str(&format!(
                    " {} |",
                    value.map_or("-".to_string(), |v| v.to_string())
                ));
            }
            out.push('\n');
        }
        Some(out)
    }
}

/// A budget case's name in the profile's column heads.
fn case_short(case: &str) -> &'static str {
    match case {
        SMALLEST => "smallest",
        LARGEST => "largest",
        VAULT_FUNDED => "largest without limits, vault-funded",
        VAULT_FUNDED_LARGEST => "largest, vault-funded",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compute_units::invokes;

    #[test]
    fn probes_split_an_invoke_into_phases_without_its_calls() {
        let g = gate::ID.to_string();
        let v = policy_vault::ID.to_string();
        let logs: Vec<String> = [
            format!("Program {g} invoke [1]"),
            "Program log: cu: entry and accounts".into(),
            "Program consumption: 197000 units remaining".into(),
            "Program log: cu: probe".into(),
            "Program consumption: 196800 units remaining".into(),
            format!("Program {v} invoke [2]"),
            "Program log: cu: entry and accounts".into(),
            "Program consumption: 194000 units remaining".into(),
            format!("Program {v} consumed 5000 of 195000 compute units"),
            format!("Program {v} success"),
            "Program log: cu: the call".into(),
            "Program consumption: 190000 units remaining".into(),
            format!("Program {g} consumed 11000 of 200000 compute units"),
            format!("Program {g} success"),
        ]
        .into();
        let got = invokes(&logs);
        let phases = |i: usize| -> Vec<(&str, u64)> {
            got[i]
                .phases
                .iter()
                .map(|p| (p.label.as_str(), p.units))
                .collect()
        };
        // policy_vault: 1 000 to its probe, 4 000 after it.
        assert_eq!(phases(0), [("entry and accounts", 1_000), ("exit", 4_000)]);
        // The gate: 3 000 to its first probe, 200 for the probe pair, 6 800 to "the call" of
        // which the callee consumed 5 000, and 1 000 after the last probe.
        assert_eq!(
            phases(1),
            [
                ("entry and accounts", 3_000),
                ("probe", 200),
                ("the call", 1_800),
                ("exit", 1_000),
            ]
        );
        let mut r = Report::default();
        r.record_profile(SMALLEST, &got);
        let table = r.profile_table().unwrap();
        assert!(table.starts_with("One probe's cost, taken out of each phase it ends: 200"));
        assert!(table.contains("| gate::: the call | 1600 |"), "{table}");
        assert!(table.contains("| gate::: exit | 1000 |"), "{table}");
        assert!(!table.contains(": probe |"), "{table}");
        // Without probes, no profile.
        assert!(Report::default().profile_table().is_none());
    }
}
