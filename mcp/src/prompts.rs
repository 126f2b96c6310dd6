//! The 3 prompts. Each names only tools this server has and describes what they really do.

use rmcp::model::{GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, Role};
use rmcp::ErrorData;

pub fn list() -> Vec<Prompt> {
    let arg = |name: &str, description: &str, required: bool| {
        PromptArgument::new(name)
            .with_description(description)
            .with_required(required)
    };
    vec![
        Prompt::new(
            "gate_audit_payment",
            Some("Audit a payment before it is made: the gate's decision, and why"),
            Some(vec![
                arg("payer_agent", "The paying agent's asset (base58)", true),
                arg("payee_agent", "The paid agent's asset (base58)", true),
                arg(
                    "amount",
                    "The amount in the mint's smallest units (decimal digits)",
                    true,
                ),
                arg("mint", "The token mint (base58)", true),
                arg("policy_id", "The payer's policy id", true),
            ]),
        ),
        Prompt::new(
            "gate_setup_agent",
            Some(
                "Set up a paying agent: registration, authority, kill switch and a spending policy",
            ),
            Some(vec![
                arg(
                    "agent_asset",
                    "An agent already registered (base58); omit to register a new one",
                    false,
                ),
                arg(
                    "use_case",
                    "What the agent pays for, to size its caps",
                    false,
                ),
            ]),
        ),
        Prompt::new(
            "gate_explain_failure",
            Some("Explain a denied payment or a failed transaction and what to do about it"),
            Some(vec![
                arg("reason_code", "A deny reason code 1..27", false),
                arg(
                    "error",
                    "An error message or code (for example \"6006\" or \"AccountNotInitialized\")",
                    false,
                ),
            ]),
        ),
    ]
}

fn text_arg(args: &JsonObject, name: &str) -> Option<String> {
    match args.get(name)? {
        serde_json::Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn required(args: &JsonObject, name: &str) -> Result<String, ErrorData> {
    text_arg(args, name)
        .ok_or_else(|| ErrorData::invalid_params(format!("missing prompt argument {name}"), None))
}

pub fn get(name: &str, args: JsonObject) -> Result<GetPromptResult, ErrorData> {
    let (description, text) = match name {
        "gate_audit_payment" => {
            let payer = required(&args, "payer_agent")?;
            let payee = required(&args, "payee_agent")?;
            let amount = required(&args, "amount")?;
            let mint = required(&args, "mint")?;
            let policy = required(&args, "policy_id")?;
            (
                "Audit a payment",
                format!(
                    "Audit this payment before it is made: payer agent {payer}, payee agent {payee}, \
                     amount {amount} (smallest units) of mint {mint}, under the payer's policy {policy}.\n\n\
                     1. Call gate_simulate_payment with caller={payer}, payer_agent={payer}, \
                     payee_agent={payee}, amount=\"{amount}\", mint={mint}, policy_id={policy}. It \
                     simulates the gate on chain and returns Allow, Deny with a reason code, or \
                     RequireValidation with a capability hash.\n\
                     2. Call gate_get_policy (agent_asset={payer}, policy_id={policy}) and \
                     gate_get_velocity_ledger for the same policy to see the caps, what was spent \
                     today and this week, and the velocity window.\n\
                     3. Call gate_get_killswitch (agent_asset={payer}).\n\
                     4. Call gate_get_engine_reputation for the payee ({payee}) and for the payer \
                     ({payer}): the tier checks read these blocks.\n\
                     5. On a Deny, call gate_explain_decision with the reason code. On \
                     RequireValidation, call gate_get_validation_attestation with the subject the \
                     decision names and the capability hash.\n\n\
                     Report the decision, the rule that produced it with the numbers involved, and \
                     what the payer or payee can change. Policies are immutable: a different rule \
                     set means a new policy id (gate_init_policy)."
                ),
            )
        }
        "gate_setup_agent" => {
            let use_case = text_arg(&args, "use_case")
                .map(|u| format!(" The agent pays for: {u}. Size the caps for that."))
                .unwrap_or_default();
            let agent = match text_arg(&args, "agent_asset") {
                Some(a) => format!(
                    "The agent is {a}. First call gate_get_authority and gate_get_killswitch \
                     (agent_asset={a}) to see what exists; pass agent_asset={a} to \
                     gate_init_policy. The server's signer must be the agent's owner (to create \
                     the authority) or a member of its authority."
                ),
                None => "No agent is given: call gate_init_policy without agent_asset and it \
                         registers a new agent owned by the server's signer in the same \
                         transaction."
                    .to_string(),
            };
            (
                "Set up a paying agent",
                format!(
                    "Set up a paying agent with a spending policy.{use_case}\n\n{agent}\n\n\
                     1. Call gate_demo_state to see a working example policy (payerPolicy).\n\
                     2. Call gate_init_policy with a policy_id, kinds (1 kill switch, 2 spending, \
                     4 velocity, 8 counterparty tier, 16 require validation), spending caps \
                     (unspecified caps default to the largest given), a velocity rule when kind 4 \
                     is on (never defaulted), optional counterparty and validation rules and the \
                     mint. Missing prerequisites (register_agent_via_cpi, init_authority, \
                     init_killswitch) are created in the same transaction; the reply lists them \
                     in healedSteps. Calling it again returns the existing policy.\n\
                     3. Call gate_get_policy to confirm, and gate_simulate_payment to try a \
                     payment against it.\n\
                     4. To stop all payments at once, gate_set_killswitch with paused=true (an \
                     authority with a threshold above 1 needs the multisig-killswitch \
                     walkthrough: gate_facilitator_walkthrough)."
                ),
            )
        }
        "gate_explain_failure" => {
            let subject = match (text_arg(&args, "reason_code"), text_arg(&args, "error")) {
                (Some(code), _) => format!(
                    "A payment was denied with reason code {code}. Call gate_explain_decision \
                     with reason_code={code}."
                ),
                (None, Some(err)) => format!(
                    "This error came back: {err}\n\nIf it holds a gate error 6001..6015, the deny \
                     reason is that number minus 6000: call gate_explain_decision with it. 6016 \
                     ValidationRequired means an attestation is needed \
                     (gate_get_validation_attestation). Other codes (3012 \
                     AccountNotInitialized and the programs' own errors) are named in the hint \
                     of chain_error replies; search them with gate_docs."
                ),
                (None, None) => {
                    return Err(ErrorData::invalid_params(
                        "give reason_code (1..27) or error",
                        None,
                    ))
                }
            };
            (
                "Explain a failure",
                format!(
                    "{subject}\n\nThen call gate_docs with the error or reason name for the \
                     relevant section, and explain in plain words what happened and the concrete \
                     next step (which tool to call with which arguments)."
                ),
            )
        }
        other => {
            return Err(ErrorData::invalid_params(
                format!("no prompt {other:?}; prompts: gate_audit_payment, gate_setup_agent, gate_explain_failure"),
                None,
            ))
        }
    };
    Ok(
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description(description),
    )
}
