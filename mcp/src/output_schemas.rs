//! The JSON Schemas of the read-only tools' successful `structuredContent`, so that each
//! declares an `outputSchema` and a client can rely on (and validate) what comes back.
//!
//! They describe the objects built in [`crate::tools`] and rendered by [`crate::views`] (and
//! by the client crate's `spend`, `receipts` and `decode`), and are kept here, next to those
//! views, to be changed with them. A client that validates rejects a result its schema does
//! not admit, so they promise little: `required` lists only the keys every successful result
//! of the tool has (whatever its path: a policy with or without limits, live or closed log, Deny or
//! RequireApproval...), nullable values admit `null`, a value whose type varies has no
//! `type`, and no schema forbids additional properties (a view may grow). The tests check
//! that each is an object schema that describes the keys it requires.
//!
//! The schemas are built by small functions rather than one `json!` literal each: large
//! literals exceed the macro recursion limit.

use rmcp::model::JsonObject;
use serde_json::{json, Value};
use std::sync::Arc;

fn object(v: Value) -> Arc<JsonObject> {
    Arc::new(
        v.as_object()
            .cloned()
            .expect("an output schema is a JSON object"),
    )
}

// Building blocks.

/// An object schema: its properties, and the keys every instance has.
fn obj(description: &str, properties: Vec<(&str, Value)>, required: &[&str]) -> Value {
    let properties: JsonObject = properties
        .into_iter()
        .map(|(name, schema)| (name.to_string(), schema))
        .collect();
    json!({
        "type": "object",
        "description": description,
        "properties": properties,
        "required": required,
    })
}

/// The same schema, admitting `null` too.
fn or_null(mut schema: Value) -> Value {
    let t = schema["type"].clone();
    schema["type"] = json!([t, "null"]);
    schema
}

fn array(description: &str, items: Value) -> Value {
    json!({"type": "array", "description": description, "items": items})
}

fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

fn int(description: &str) -> Value {
    json!({"type": "integer", "description": description})
}

fn boolean(description: &str) -> Value {
    json!({"type": "boolean", "description": description})
}

/// A value of no promised type (it varies by path or comes from elsewhere).
fn any(description: &str) -> Value {
    json!({"description": description})
}

fn key(description: &str) -> Value {
    string(&format!("{description} (base58 public key)"))
}

/// A key that is null when it is the all-zero default (`views::opt_key`).
fn opt_key(description: &str) -> Value {
    or_null(string(&format!(
        "{description} (base58 public key; null: none)"
    )))
}

fn keys(description: &str) -> Value {
    array(
        &format!("{description} (base58 public keys)"),
        json!({"type": "string"}),
    )
}

/// A u64 amount: a decimal string, since it exceeds JSON's safe integers.
fn amount(description: &str) -> Value {
    string(&format!("{description} (atomic units as a decimal string)"))
}

fn hash(description: &str) -> Value {
    string(&format!("{description} (64 hex characters)"))
}

/// A 32-byte hash that is null when all zero (`views::opt_hash`).
fn opt_hash(description: &str) -> Value {
    or_null(string(&format!(
        "{description} (64 hex characters; null: none)"
    )))
}

/// A policy's parameters as `views::policy_params` writes them.
fn policy_params() -> Vec<(&'static str, Value)> {
    vec![
        (
            "kinds",
            int("The policy's kinds, a bit set (KillSwitch 1, Spending 2, Velocity 4, CounterpartyTier 8, RequireValidation 16)"),
        ),
        (
            "kindNames",
            array(
                "The kinds by name: KillSwitch, Spending, Velocity, CounterpartyTier, RequireValidation",
                json!({"type": "string"}),
            ),
        ),
        ("mint", opt_key("The policy's token mint")),
        (
            "spending",
            obj(
                "The spending caps (\"0\": no cap)",
                vec![
                    ("perTxCap", amount("Largest single payment")),
                    ("dailyCap", amount("Cap per UTC day")),
                    ("weeklyCap", amount("Cap per week (from Monday 00:00 UTC)")),
                ],
                &["perTxCap", "dailyCap", "weeklyCap"],
            ),
        ),
        (
            "velocity",
            obj(
                "The velocity rule",
                vec![
                    ("windowSecs", int("The window's length in seconds")),
                    ("maxInWindow", amount("Cap within one window")),
                    (
                        "tier0DecayBps",
                        int("Share of the cap (basis points) a tier-0 or unrated payer gets"),
                    ),
                ],
                &["windowSecs", "maxInWindow", "tier0DecayBps"],
            ),
        ),
        (
            "counterparty",
            obj(
                "What the payee's reputation must be",
                vec![
                    ("minTier", int("Lowest tier accepted")),
                    (
                        "gateMode",
                        string("Which tier counts: immediate or confirmed (unknown otherwise)"),
                    ),
                    ("maxRisk", int("Highest risk score accepted (255: no check)")),
                    (
                        "minConfidenceBps",
                        int("Lowest confidence accepted, basis points (0: no check)"),
                    ),
                    (
                        "unratedTreatment",
                        string("An unrated payee: deny, allow or require_validation (unknown otherwise)"),
                    ),
                ],
                &[
                    "minTier",
                    "gateMode",
                    "maxRisk",
                    "minConfidenceBps",
                    "unratedTreatment",
                ],
            ),
        ),
        (
            "validation",
            obj(
                "The attestation the payee must hold",
                vec![
                    ("requiredCapability", opt_hash("The capability required")),
                    (
                        "acceptedAttestors",
                        keys("The attestors accepted (empty: any registered attestor)"),
                    ),
                ],
                &["requiredCapability", "acceptedAttestors"],
            ),
        ),
        (
            "funding",
            string("Where payments come from: wallet (the payer signer's account) or vault (the agent's policy vault)"),
        ),
    ]
}

/// A cap and its window (`spend::Window`).
fn window(description: &str) -> Value {
    obj(
        description,
        vec![
            ("cap", amount("The cap; \"0\": no cap")),
            ("spent", amount("Spent in the current window")),
            (
                "remaining",
                or_null(amount("cap - spent; null when there is no cap")),
            ),
            (
                "resetsAt",
                or_null(int(
                    "Unix seconds when the window starts over; null for the lifetime",
                )),
            ),
        ],
        &["cap", "spent", "remaining", "resetsAt"],
    )
}

/// One attestation as `views::attestation` writes it, and whether it counts now.
fn attestation() -> Value {
    obj(
        "An attestation",
        vec![
            ("address", key("The attestation's address")),
            ("subject", key("The agent it is about")),
            ("capabilityHash", hash("The capability")),
            ("attestor", key("Who attested")),
            ("claimPayloadHash", opt_hash("Hash of the claim's payload")),
            ("claimUriHash", opt_hash("Hash of the claim's URI")),
            ("issuedSlot", int("Slot of issue")),
            ("issuedAt", int("Unix seconds of issue")),
            ("expiresAtSlot", int("Slot of expiry")),
            ("expiresAt", int("Unix seconds of expiry")),
            ("revoked", boolean("Whether its attestor revoked it")),
            ("revokedAt", int("Unix seconds of the revocation (0: none)")),
            ("renewals", int("How many times it was renewed")),
            (
                "signatureVerified",
                boolean("Whether the attestor's Ed25519 signature was verified"),
            ),
            (
                "valid",
                boolean("Not revoked and not expired now: one a gate would count"),
            ),
        ],
        &[
            "address",
            "subject",
            "capabilityHash",
            "attestor",
            "claimPayloadHash",
            "claimUriHash",
            "issuedSlot",
            "issuedAt",
            "expiresAtSlot",
            "expiresAt",
            "revoked",
            "revokedAt",
            "renewals",
            "signatureVerified",
            "valid",
        ],
    )
}

// One schema per tool.

pub fn get_policy() -> Arc<JsonObject> {
    let day = obj(
        "The day counter as stored (written only when a payment commits)",
        vec![
            ("dayIndex", int("The UTC day it counts")),
            ("spent", amount("Spent that day")),
        ],
        &["dayIndex", "spent"],
    );
    let week = obj(
        "The week counter as stored (written only when a payment commits)",
        vec![
            ("weekIndex", int("The week it counts")),
            ("spent", amount("Spent that week")),
        ],
        &["weekIndex", "spent"],
    );
    let payee_list = obj(
        "The payee allow or deny list",
        vec![
            ("mode", string("off, allow or deny (unknown otherwise)")),
            ("payees", keys("The inline payees")),
            ("account", opt_key("The payee list account")),
        ],
        &["mode", "payees", "account"],
    );
    let validity = obj(
        "The validity window, unix seconds (0: unbounded)",
        vec![
            ("notBefore", int("Start of validity")),
            ("notAfter", int("End of validity")),
        ],
        &["notBefore", "notAfter"],
    );
    let rules = obj(
        "The policy's limit rules (0: off for every bound and cap)",
        vec![
            ("payeeList", payee_list),
            ("validity", validity),
            ("monthlyCap", amount("Cap per calendar month (UTC)")),
            ("lifetimeCap", amount("Cap over the policy's life")),
            ("payeeDailyCap", amount("Cap per payee per UTC day")),
        ],
        &[
            "payeeList",
            "validity",
            "monthlyCap",
            "lifetimeCap",
            "payeeDailyCap",
        ],
    );
    let month = obj(
        "The month counter",
        vec![
            ("monthIndex", int("The month it counts")),
            ("spent", amount("Spent that month")),
        ],
        &["monthIndex", "spent"],
    );
    let payee_slot = obj(
        "A per-payee slot",
        vec![
            ("payee", key("The payee agent")),
            ("spent", amount("Paid to it that day")),
        ],
        &["payee", "spent"],
    );
    let counters = obj(
        "The limits' counters, as stored (present with the rules)",
        vec![
            ("month", month),
            ("lifetimeSpent", amount("Spent over the policy's life")),
            (
                "payeeDay",
                or_null(int(
                    "The UTC day the per-payee slots count (null without a per-payee cap)",
                )),
            ),
            ("payees", array("The per-payee slots in use", payee_slot)),
        ],
        &["month", "lifetimeSpent", "payeeDay", "payees"],
    );
    let mut properties = vec![
        ("address", key("The policy's address")),
        ("asset", key("The agent's asset")),
        ("policyId", int("The policy id")),
        ("daySpent", day),
        ("weekSpent", week),
        ("createdAt", int("Unix seconds of creation")),
        ("retired", boolean("Whether the policy is retired")),
        ("retiredAt", int("Unix seconds of retirement (0: not retired)")),
        (
            "spender",
            opt_key("The one key that may pay from the vault (null for a wallet-funded policy, or until named)"),
        ),
        ("rules", rules),
        (
            "approvalThreshold",
            amount("Above it a payment needs an approval; \"0\": never"),
        ),
        ("counters", counters),
    ];
    properties.extend(policy_params());
    object(obj(
        "A spending policy (PolicyAccount) of an agent; `rules` and `counters` only when it sets limits",
        properties,
        &[
            "address",
            "asset",
            "policyId",
            "approvalThreshold",
            "daySpent",
            "weekSpent",
            "createdAt",
            "retired",
            "retiredAt",
            "spender",
            "kinds",
            "kindNames",
            "mint",
            "spending",
            "velocity",
            "counterparty",
            "validation",
            "funding",
        ],
    ))
}

pub fn get_velocity_ledger() -> Arc<JsonObject> {
    object(obj(
        "The velocity ledger of an agent's policy",
        vec![
            ("address", key("The ledger's address")),
            ("asset", key("The agent's asset")),
            ("policyId", int("The policy id")),
            (
                "cumulative",
                amount("Committed in the window that started at windowStart"),
            ),
            (
                "windowStart",
                int("Unix seconds the window started (0: none yet)"),
            ),
            ("lastCommit", int("Unix seconds of the last commit")),
        ],
        &[
            "address",
            "asset",
            "policyId",
            "cumulative",
            "windowStart",
            "lastCommit",
        ],
    ))
}

pub fn get_killswitch() -> Arc<JsonObject> {
    object(obj(
        "An agent's kill switch",
        vec![
            ("address", key("The kill switch's address")),
            ("asset", key("The agent's asset")),
            (
                "paused",
                boolean("Whether every payment of the agent is denied"),
            ),
            ("pausedAt", int("Unix seconds of the last pause")),
            ("pausedBy", opt_key("Who paused it")),
            ("unpausedAt", int("Unix seconds of the last release")),
            (
                "authorityGeneration",
                int("How many times the authority changed hands: payment approvals given before the latest hand-over approve nothing"),
            ),
        ],
        &[
            "address",
            "asset",
            "paused",
            "pausedAt",
            "pausedBy",
            "unpausedAt",
            "authorityGeneration",
        ],
    ))
}

pub fn get_vault() -> Arc<JsonObject> {
    object(obj(
        "An agent's policy vault for a mint",
        vec![
            (
                "address",
                key("The vault's address (a token account that is its own authority)"),
            ),
            ("asset", key("The agent's asset")),
            ("mint", key("The vault's mint")),
            ("balance", amount("The vault's balance")),
            ("tokenProgram", key("The token program that owns it")),
        ],
        &["address", "asset", "mint", "balance", "tokenProgram"],
    ))
}

pub fn get_authority() -> Arc<JsonObject> {
    object(obj(
        "An agent's policy authority",
        vec![
            ("address", key("The authority's address")),
            ("asset", key("The agent's asset")),
            (
                "owner",
                key("The asset's owner who created (or took over) the authority: it acts only while that key owns the asset"),
            ),
            ("members", keys("The members")),
            ("threshold", int("How many member signatures an action needs")),
        ],
        &["address", "asset", "owner", "members", "threshold"],
    ))
}

pub fn get_feedback_log() -> Arc<JsonObject> {
    object(obj(
        "A payment's receipt: its feedback log while it exists, else (closed: true) what the chain's history holds",
        vec![
            ("address", key("The feedback log's address")),
            ("paymentIdHash", hash("The payment id hash")),
            ("facilitator", key("The facilitator that settled it")),
            ("payee", key("The payee agent")),
            (
                "payer",
                opt_key("The payer agent, when known (from the settlement, or a legacy log)"),
            ),
            ("payerWallet", key("The settlement's transfer authority")),
            ("mint", key("The token mint")),
            ("value", amount("The amount paid")),
            ("valueDecimals", int("The mint's decimals")),
            ("score", int("The feedback score")),
            ("emittedAtSlot", int("Slot of the settlement")),
            ("createdAt", int("Unix seconds of the settlement")),
            (
                "deadline",
                or_null(int("Unix seconds of the payment's deadline; null for a log written before payments carried one")),
            ),
            (
                "transaction",
                or_null(string("The settlement transaction's signature, when known")),
            ),
            (
                "settledAtomically",
                boolean("Always true: every log the gate writes is of a settlement"),
            ),
            ("disputed", boolean("Whether the payment was disputed")),
            (
                "closed",
                boolean("Whether the log is closed (the receipt then comes from the chain's history)"),
            ),
            (
                "closedBy",
                string("A closed log's: the transaction that closed it, when found"),
            ),
        ],
        &[
            "address",
            "paymentIdHash",
            "facilitator",
            "payee",
            "payer",
            "payerWallet",
            "mint",
            "value",
            "valueDecimals",
            "score",
            "emittedAtSlot",
            "createdAt",
            "deadline",
            "transaction",
            "settledAtomically",
            "disputed",
            "closed",
        ],
    ))
}

pub fn get_capability_namespace() -> Arc<JsonObject> {
    object(obj(
        "A capability namespace",
        vec![
            ("address", key("The namespace's address")),
            ("hash", hash("The capability hash: sha256 of the name")),
            ("name", string("The namespace's name")),
            ("version", string("Its version")),
            ("schemaUri", string("Its schema's URI")),
            ("registrant", key("Who registered it")),
            ("createdSlot", int("Slot of registration")),
        ],
        &[
            "address",
            "hash",
            "name",
            "version",
            "schemaUri",
            "registrant",
            "createdSlot",
        ],
    ))
}

pub fn get_attestor_profile() -> Arc<JsonObject> {
    object(obj(
        "An attestor's profile",
        vec![
            ("address", key("The profile's address")),
            ("attestor", key("The attestor")),
            ("displayNameUri", string("The attestor's display name URI")),
            ("attestationsIssued", int("Attestations issued")),
            ("revocations", int("Attestations revoked")),
            ("createdSlot", int("Slot of registration")),
        ],
        &[
            "address",
            "attestor",
            "displayNameUri",
            "attestationsIssued",
            "revocations",
            "createdSlot",
        ],
    ))
}

pub fn get_validation_request() -> Arc<JsonObject> {
    object(obj(
        "A validation request",
        vec![
            ("address", key("The request's address")),
            ("subject", key("The agent it is about")),
            ("capabilityHash", hash("The capability")),
            ("requester", key("Who asked")),
            ("claimUriHash", opt_hash("Hash of the claim's URI")),
            ("deadlineSlot", int("Slot by which it should be answered")),
            ("createdSlot", int("Slot of the request")),
        ],
        &[
            "address",
            "subject",
            "capabilityHash",
            "requester",
            "claimUriHash",
            "deadlineSlot",
            "createdSlot",
        ],
    ))
}

pub fn get_validation_attestation() -> Arc<JsonObject> {
    object(obj(
        "The attestations of a capability about an agent, valid ones first",
        vec![
            ("subjectAsset", key("The agent they are about")),
            ("capabilityHash", hash("The capability")),
            (
                "capabilityName",
                or_null(string(
                    "The capability's name when it was given (null when asked by hash)",
                )),
            ),
            (
                "valid",
                boolean("Whether one of them counts now (the first one's validity)"),
            ),
            (
                "attestations",
                array("At least one; valid ones first", attestation()),
            ),
        ],
        &[
            "subjectAsset",
            "capabilityHash",
            "capabilityName",
            "valid",
            "attestations",
        ],
    ))
}

pub fn simulate_payment() -> Arc<JsonObject> {
    // DecisionView: only `kind` is in every decision.
    object(obj(
        "The gate's decision of the payment, by simulation",
        vec![
            (
                "kind",
                string("Allow, Deny, RequireValidation or RequireApproval"),
            ),
            ("reasonCode", int("A Deny's reason code, 1..23")),
            ("reasonName", string("A Deny's reason name")),
            ("meaning", string("A Deny's: what the gate found")),
            ("remediation", string("A Deny's: what to do about it")),
            (
                "capabilityHash",
                hash("A RequireValidation's: the capability required"),
            ),
            (
                "subject",
                string("A RequireValidation's: who must hold the attestation, payer or payee"),
            ),
        ],
        &["kind"],
    ))
}

pub fn get_engine_reputation() -> Arc<JsonObject> {
    let reputation = obj(
        "The reputation block, when the account passes the owner, size and schema checks",
        vec![
            (
                "tierImmediate",
                int("Tier, immediate (the higher of the trust and candidate tiers)"),
            ),
            ("tierConfirmed", int("Tier, confirmed")),
            ("riskScore", int("Risk score")),
            ("confidence", int("Confidence, basis points 0..10000")),
            ("schemaVersion", int("The account's schema version")),
        ],
        &[
            "tierImmediate",
            "tierConfirmed",
            "riskScore",
            "confidence",
            "schemaVersion",
        ],
    );
    let error = obj(
        "Why there is no reputation block",
        vec![
            (
                "errorCode",
                string("unrated, wrong_owner, size_mismatch or schema_mismatch"),
            ),
            ("message", string("What was found")),
        ],
        &["errorCode", "message"],
    );
    object(obj(
        "The reputation engine's block of an agent (reputation), or why it could not be read (error)",
        vec![
            ("agentAsset", key("The agent's asset")),
            ("statsAccount", key("The engine's stats account of the agent")),
            ("engine", key("The reputation engine's program id")),
            ("reputation", reputation),
            ("error", error),
        ],
        &["agentAsset", "statsAccount", "engine"],
    ))
}

pub fn explain_decision() -> Arc<JsonObject> {
    object(obj(
        "A decision explained: a Deny by its reason code, or RequireValidation or RequireApproval",
        vec![
            (
                "decision",
                string("Deny, RequireValidation or RequireApproval"),
            ),
            ("reasonCode", int("A Deny's reason code, 1..23")),
            ("name", string("A Deny's reason name")),
            (
                "category",
                string("A Deny's category: kill_switch, spending, velocity, counterparty, reputation_integrity, validation, unrated, validity or payee_list"),
            ),
            ("meaning", string("What the gate found")),
            ("remediation", string("What to do about it")),
            (
                "gateErrorCode",
                or_null(int("The strict gate's error code for it")),
            ),
        ],
        &["decision", "meaning", "remediation", "gateErrorCode"],
    ))
}

pub fn get_spend() -> Arc<JsonObject> {
    let payee = obj(
        "A payee paid today",
        vec![
            ("payee", key("The payee agent")),
            ("spent", amount("Paid to it today")),
            ("remaining", amount("Left for it today")),
        ],
        &["payee", "spent", "remaining"],
    );
    let per_payee = obj(
        "The per-payee daily cap and today's payees (null when there is none)",
        vec![
            ("cap", amount("The cap per payee per UTC day")),
            ("payees", array("Today's payees", payee)),
            ("slotsFree", int("Slots left today for payees not yet paid")),
            ("resetsAt", int("Unix seconds when the day starts over")),
        ],
        &["cap", "payees", "slotsFree", "resetsAt"],
    );
    let velocity = obj(
        "The velocity rule and its window's use (null when the ledger does not exist)",
        vec![
            ("windowSecs", int("The window's length in seconds")),
            (
                "maxInWindow",
                amount("The cap for a payer of immediate tier 1 and up"),
            ),
            (
                "tier0DecayBps",
                int("Share of the cap (basis points) a tier-0 or unrated payer gets"),
            ),
            ("used", amount("Used in the current window")),
            (
                "resetsAt",
                or_null(int(
                    "Unix seconds when the current window ends (null while none runs)",
                )),
            ),
        ],
        &[
            "windowSecs",
            "maxInWindow",
            "tier0DecayBps",
            "used",
            "resetsAt",
        ],
    );
    let kill_switch = obj(
        "The agent's kill switch",
        vec![(
            "paused",
            boolean("Whether it is engaged (false when it does not exist)"),
        )],
        &["paused"],
    );
    let vault = obj(
        "A vault-funded policy's vault (null for a wallet-funded one)",
        vec![
            ("address", key("The vault's address")),
            (
                "balance",
                or_null(amount("Its balance; null when it does not exist")),
            ),
        ],
        &["address", "balance"],
    );
    let channel = obj(
        "A channel open through the gate",
        vec![
            ("channel", key("The channel")),
            ("record", key("The gate's channel record")),
            ("payeeAgentAsset", key("The payee agent")),
            ("mint", key("The token mint")),
            ("deposit", amount("The deposit")),
            ("facilitator", key("The facilitator")),
            ("createdAt", int("Unix seconds of the open")),
        ],
        &[
            "channel",
            "record",
            "payeeAgentAsset",
            "mint",
            "deposit",
            "facilitator",
            "createdAt",
        ],
    );
    object(obj(
        "A payer agent's spend under a policy at a glance",
        vec![
            ("agentAsset", key("The payer agent's asset")),
            ("policyId", int("The policy id")),
            ("policy", key("The policy's address")),
            (
                "now",
                int("The cluster's clock, unix seconds: what the windows are counted at"),
            ),
            ("retired", boolean("Whether the policy is retired")),
            (
                "spendingEnforced",
                boolean("Whether the Spending kind is on (else the caps are not checked)"),
            ),
            (
                "velocityEnforced",
                boolean("Whether the Velocity kind is on"),
            ),
            (
                "perTransactionCap",
                amount("Largest single payment; \"0\": no cap"),
            ),
            ("day", window("Today's cap (UTC day)")),
            (
                "week",
                window("This week's cap (from Monday 00:00 UTC)"),
            ),
            (
                "month",
                or_null(window("The monthly cap (null for a policy without limits)")),
            ),
            (
                "lifetime",
                or_null(window("The lifetime cap (null for a policy without limits)")),
            ),
            ("perPayee", or_null(per_payee)),
            ("velocity", or_null(velocity)),
            (
                "approvalThreshold",
                amount("Above it a payment needs an approval; \"0\": never"),
            ),
            ("killSwitch", kill_switch),
            ("vault", or_null(vault)),
            (
                "openChannels",
                array("The channels open through the gate under this policy", channel),
            ),
            // A list from the facilitator, or {"unavailable": why}: no one type.
            (
                "pendingApprovals",
                any("The payments the facilitator holds for an approval (as gate_list_approvals lists them), or {\"unavailable\": reason} when no facilitator is configured or it did not answer"),
            ),
        ],
        &[
            "agentAsset",
            "policyId",
            "policy",
            "now",
            "retired",
            "spendingEnforced",
            "velocityEnforced",
            "perTransactionCap",
            "day",
            "week",
            "month",
            "lifetime",
            "perPayee",
            "velocity",
            "approvalThreshold",
            "killSwitch",
            "vault",
            "openChannels",
            "pendingApprovals",
        ],
    ))
}

pub fn list_approvals() -> Arc<JsonObject> {
    let approval = obj(
        "The approval on chain, when a member made it",
        vec![
            ("expiresAt", int("Unix seconds it stands until")),
            ("approvedAt", int("Unix seconds of the approval")),
            ("rentPayer", key("Who paid its rent")),
            ("signers", int("How many members signed")),
        ],
        &[],
    );
    // The fields of `approvals::PendingApproval`, which gate_approve reads back too.
    let pending = obj(
        "A payment held for an approval",
        vec![
            (
                "id",
                key("The pending id: the address of the payment's approval on chain"),
            ),
            ("payerAgentAsset", key("The payer agent")),
            ("payeeAgentAsset", key("The payee agent")),
            ("mint", key("The token mint")),
            ("amount", amount("The amount")),
            ("policyId", int("The payer's policy id")),
            ("kind", string("What was held: payment or channel")),
            (
                "resource",
                string("The x402 resource it was for, when the request named one"),
            ),
            ("heldAt", int("Unix seconds it was last held")),
            ("expiresAt", int("Unix seconds the record goes")),
            (
                "state",
                string("pending, approved (an approval stands) or expired"),
            ),
            ("approval", or_null(approval)),
        ],
        &[
            "id",
            "payerAgentAsset",
            "payeeAgentAsset",
            "mint",
            "amount",
            "policyId",
            "kind",
            "heldAt",
            "expiresAt",
        ],
    );
    // The facilitator's `GET /approvals` answer with `next` added: `next` is ours and
    // `approvals` is the list every facilitator answers; the rest is the facilitator's.
    object(obj(
        "The payments the configured facilitator holds for an approval",
        vec![
            ("approvals", array("The held payments", pending)),
            (
                "payerAgentAsset",
                opt_key("The payer agent listed (null: every payer)"),
            ),
            (
                "pendingSecs",
                int("How long the facilitator keeps a pending record, seconds"),
            ),
            (
                "perPayer",
                int("How many pending records it keeps per payer"),
            ),
            ("next", string("What to do with one")),
        ],
        &["approvals", "next"],
    ))
}

pub fn demo_state() -> Arc<JsonObject> {
    // DEMO_STATE_FILE replaces the bundled world with any JSON: nothing is required and no
    // type promised; the properties describe the bundled world.
    object(obj(
        "The demo world: the one `trust-gate up` seeds, or DEMO_STATE_FILE's content when set",
        vec![
            ("facilitator", any("The facilitator's key (base58)")),
            ("serviceKey", any("The service's key (base58)")),
            ("mint", any("The demo mint (base58)")),
            (
                "meteredMint",
                any("The Token-2022 mint of metered payments (base58)"),
            ),
            ("decimals", any("The mints' decimals")),
            ("price", any("The protected resource's price, atomic units")),
            ("policyId", any("The payers' policy id")),
            (
                "service",
                any("The service agent: name, tier, asset, owner, funding"),
            ),
            (
                "payers",
                any("The payer agents: name, tier, asset, owner, funding, and a vault-funded payer's hotKey"),
            ),
            ("attestor", any("The demo attestor (base58)")),
            ("namespaces", any("The capability namespaces registered")),
            ("source", any("Where this world comes from")),
            (
                "network",
                any("The network the server is configured for"),
            ),
            ("rpcUrl", any("The server's RPC URL")),
            (
                "payerPolicy",
                any("The payers' policy parameters, as gate_get_policy shows them"),
            ),
            (
                "serviceAcceptance",
                any("What the service asks of its payers"),
            ),
            (
                "urls",
                any("The facilitator, demo and protected resource URLs (null when not configured)"),
            ),
        ],
        &[],
    ))
}

pub fn docs() -> Arc<JsonObject> {
    let hit = obj(
        "A matching section",
        vec![
            ("page", string("The page's name")),
            ("uri", string("The page's resource URI (gate://docs/...)")),
            ("section", string("The section's heading")),
            ("score", int("How well it matches")),
            ("excerpt", string("An excerpt of the section")),
        ],
        &["page", "uri", "section", "score", "excerpt"],
    );
    object(obj(
        "The documentation sections that match the query, best first",
        vec![
            ("query", string("The query")),
            (
                "corpus",
                string("Where the docs come from: bundled, or MCP_DOCS_DIR's directory"),
            ),
            ("count", int("How many results")),
            ("results", array("The sections, best first", hit)),
        ],
        &["query", "corpus", "count", "results"],
    ))
}

pub fn walkthrough() -> Arc<JsonObject> {
    object(obj(
        "A step-by-step integration guide",
        vec![
            ("name", string("The walkthrough's name")),
            ("title", string("Its title")),
            (
                "uri",
                string("Its resource URI (gate://docs/walkthroughs/...)"),
            ),
            ("markdown", string("Its text, in markdown")),
        ],
        &["name", "title", "uri", "markdown"],
    ))
}

/// A schema's constructor.
pub type SchemaFn = fn() -> Arc<JsonObject>;

/// Every read tool's name and schema.
pub const READ_TOOLS: &[(&str, SchemaFn)] = &[
    ("gate_get_policy", get_policy),
    ("gate_get_velocity_ledger", get_velocity_ledger),
    ("gate_get_killswitch", get_killswitch),
    ("gate_get_vault", get_vault),
    ("gate_get_authority", get_authority),
    ("gate_get_feedback_log", get_feedback_log),
    ("gate_get_capability_namespace", get_capability_namespace),
    ("gate_get_attestor_profile", get_attestor_profile),
    ("gate_get_validation_request", get_validation_request),
    (
        "gate_get_validation_attestation",
        get_validation_attestation,
    ),
    ("gate_simulate_payment", simulate_payment),
    ("gate_get_engine_reputation", get_engine_reputation),
    ("gate_explain_decision", explain_decision),
    ("gate_get_spend", get_spend),
    ("gate_list_approvals", list_approvals),
    ("gate_demo_state", demo_state),
    ("gate_docs", docs),
    // The tool is registered under this name (mod.rs: gate_facilitator_walkthrough).
    ("gate_facilitator_walkthrough", walkthrough),
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Whether `schema` (its `type`, a name or a list of names) admits `name`.
    fn admits(schema: &Value, name: &str) -> bool {
        match &schema["type"] {
            Value::String(t) => t == name,
            Value::Array(ts) => ts.iter().any(|t| t == name),
            _ => false,
        }
    }

    /// An object schema that describes every key it requires, down every nested object and
    /// array item; nothing forbids additional properties.
    fn check(tool: &str, path: &str, schema: &Value) {
        assert!(schema.is_object(), "{tool}{path}: {schema}");
        assert_ne!(
            schema.get("additionalProperties"),
            Some(&json!(false)),
            "{tool}{path}: views may grow"
        );
        if let Some(items) = schema.get("items") {
            assert!(admits(schema, "array"), "{tool}{path}");
            check(tool, &format!("{path}[]"), items);
        }
        let Some(properties) = schema.get("properties") else {
            assert!(schema.get("required").is_none(), "{tool}{path}");
            return;
        };
        assert!(admits(schema, "object"), "{tool}{path}");
        let properties = properties.as_object().expect("properties is an object");
        let required = schema["required"].as_array().expect("required is a list");
        let mut seen = HashSet::new();
        for r in required {
            let r = r.as_str().expect("a required key is a string");
            assert!(seen.insert(r), "{tool}{path}: {r} is required twice");
            assert!(
                properties.contains_key(r),
                "{tool}{path}: {r} is required and not described"
            );
        }
        for (name, p) in properties {
            check(tool, &format!("{path}.{name}"), p);
        }
    }

    #[test]
    fn every_schema_is_an_object_schema_that_describes_its_required_keys() {
        for (tool, schema) in READ_TOOLS {
            let schema = Value::Object((*schema()).clone());
            assert_eq!(schema["type"], "object", "{tool}");
            assert!(schema["description"].is_string(), "{tool}");
            assert!(schema["properties"].is_object(), "{tool}");
            check(tool, "", &schema);
        }
    }

    #[test]
    fn every_read_tool_is_listed_once() {
        let names: HashSet<&str> = READ_TOOLS.iter().map(|(n, _)| *n).collect();
        assert_eq!(READ_TOOLS.len(), 18);
        assert_eq!(names.len(), READ_TOOLS.len());
        assert!(names.iter().all(|n| n.starts_with("gate_")), "{names:?}");
    }
}
