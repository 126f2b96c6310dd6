//! Accounts as tool results: camelCase JSON, public keys in base58, hashes in hex, token
//! amounts as decimal strings (they exceed JSON's safe integers), empty slots dropped.

use policy_vault::state::{AcceptanceParams, PolicyParams, PolicyRules};
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use trust_gate_client::decode::{
    hex, AttestorProfile, CapabilityNamespace, KillSwitchState, PolicyAccount, PolicyAuthority,
    ValidationAttestation, ValidationRequest, VaultView, VelocityLedger,
};
use trust_gate_client::receipts::Receipt;
use trust_gate_client::settle::Funding;

fn key(k: &Pubkey) -> String {
    k.to_string()
}

/// A key that may be the all-zero default ("none"): `null` then.
fn opt_key(k: &Pubkey) -> Value {
    if *k == Pubkey::default() {
        Value::Null
    } else {
        json!(k.to_string())
    }
}

/// A 32-byte hash that may be all zero ("none"): `null` then.
fn opt_hash(h: &[u8; 32]) -> Value {
    if *h == [0u8; 32] {
        Value::Null
    } else {
        json!(hex(h))
    }
}

fn kind_names(kinds: u8) -> Vec<&'static str> {
    use policy_vault::engine::config::kinds as k;
    [
        (k::KILL_SWITCH, "KillSwitch"),
        (k::SPENDING, "Spending"),
        (k::VELOCITY, "Velocity"),
        (k::COUNTERPARTY_TIER, "CounterpartyTier"),
        (k::REQUIRE_VALIDATION, "RequireValidation"),
    ]
    .into_iter()
    .filter(|(bit, _)| kinds & bit != 0)
    .map(|(_, name)| name)
    .collect()
}

pub fn gate_mode_name(v: u8) -> &'static str {
    match v {
        0 => "immediate",
        1 => "confirmed",
        _ => "unknown",
    }
}

pub fn unrated_name(v: u8) -> &'static str {
    match v {
        0 => "deny",
        1 => "allow",
        2 => "require_validation",
        _ => "unknown",
    }
}

/// A policy's limit rules (0 = off for every bound and cap).
pub fn policy_rules(r: &PolicyRules) -> Value {
    json!({
        "payeeList": {
            "mode": match r.payee_list_mode { 0 => "off", 1 => "allow", 2 => "deny", _ => "unknown" },
            "payees": r.payees.iter().filter(|k| **k != Pubkey::default()).map(key).collect::<Vec<_>>(),
            "account": r.has_list_account().then(|| key(&r.payee_list)),
        },
        "validity": {"notBefore": r.not_before, "notAfter": r.not_after},
        "monthlyCap": r.monthly_cap.to_string(),
        "lifetimeCap": r.lifetime_cap.to_string(),
        "payeeDailyCap": r.payee_daily_cap.to_string(),
    })
}

pub fn policy(address: &Pubkey, p: &PolicyAccount) -> Value {
    let mut v = json!({
        "address": key(address),
        "asset": key(&p.asset),
        "policyId": p.policy_id,
        "daySpent": {"dayIndex": p.day_index, "spent": p.day_spent.to_string()},
        "weekSpent": {"weekIndex": p.week_index, "spent": p.week_spent.to_string()},
        "createdAt": p.created_at,
        "retired": p.is_retired(),
        "retiredAt": p.retired_at,
        // The one key that may pay from the vault (vault-funded policies; null until named).
        "spender": (p.params.is_vault_funded() && p.spender != Pubkey::default()).then(|| key(&p.spender)),
        "approvalThreshold": p.approval_threshold.to_string(),
    });
    if let (Some(obj), Value::Object(params)) = (v.as_object_mut(), policy_params(&p.params)) {
        obj.extend(params);
    }
    // The limits and their counters, when the policy sets any.
    if let Some(l) = &p.limits {
        v["rules"] = policy_rules(&l.rules);
        v["counters"] = json!({
            "month": {"monthIndex": l.month_index, "spent": l.month_spent.to_string()},
            "lifetimeSpent": l.lifetime_spent.to_string(),
            "payeeDay": p.payee_day.as_ref().map(|d| d.day),
            "payees": p.payee_day.iter().flat_map(|d| d.slots.iter())
                .filter(|s| s.payee != Pubkey::default())
                .map(|s| json!({"payee": key(&s.payee), "spent": s.spent.to_string()}))
                .collect::<Vec<_>>(),
        });
    }
    v
}

/// A policy's parameters (as stored, or as the demo world creates them).
pub fn policy_params(q: &PolicyParams) -> Value {
    json!({
        "kinds": q.kinds,
        "kindNames": kind_names(q.kinds),
        "mint": opt_key(&q.mint),
        "spending": {
            "perTxCap": q.per_tx_cap.to_string(),
            "dailyCap": q.daily_cap.to_string(),
            "weeklyCap": q.weekly_cap.to_string(),
        },
        "velocity": {
            "windowSecs": q.velocity_window_secs,
            "maxInWindow": q.velocity_max_in_window.to_string(),
            "tier0DecayBps": q.tier0_decay_bps,
        },
        "counterparty": {
            "minTier": q.min_counterparty_tier,
            "gateMode": gate_mode_name(q.gate_mode),
            "maxRisk": q.max_counterparty_risk,
            "minConfidenceBps": q.min_counterparty_confidence,
            "unratedTreatment": unrated_name(q.unrated_treatment),
        },
        "validation": {
            "requiredCapability": opt_hash(&q.required_capability),
            "acceptedAttestors": q.accepted_attestors.iter().filter(|k| **k != Pubkey::default()).map(key).collect::<Vec<_>>(),
        },
        "funding": Funding::of(q),
    })
}

/// An agent's policy vault for a mint.
pub fn vault(asset: &Pubkey, v: &VaultView) -> Value {
    json!({
        "address": key(&v.address),
        "asset": key(asset),
        "mint": key(&v.mint),
        "balance": v.amount.to_string(),
        "tokenProgram": key(&v.token_program),
    })
}

/// What a payee asks of its payers.
pub fn acceptance_params(a: &AcceptanceParams) -> Value {
    json!({
        "minPayerTier": a.min_payer_tier,
        "gateMode": gate_mode_name(a.gate_mode),
        "maxPayerRisk": a.max_payer_risk,
        "minPayerConfidenceBps": a.min_payer_confidence,
        "unratedTreatment": unrated_name(a.unrated_treatment),
        "requiredCapability": opt_hash(&a.required_capability),
        "acceptedAttestors": a.accepted_attestors.iter().filter(|k| **k != Pubkey::default()).map(key).collect::<Vec<_>>(),
    })
}

pub fn velocity(address: &Pubkey, v: &VelocityLedger) -> Value {
    json!({
        "address": key(address),
        "asset": key(&v.asset),
        "policyId": v.policy_id,
        "cumulative": v.cumulative.to_string(),
        "windowStart": v.window_start,
        "lastCommit": v.last_commit,
    })
}

pub fn killswitch(address: &Pubkey, k: &KillSwitchState) -> Value {
    json!({
        "address": key(address),
        "asset": key(&k.asset),
        "paused": k.paused,
        "pausedAt": k.paused_at,
        "pausedBy": opt_key(&k.paused_by),
        "unpausedAt": k.unpaused_at,
        // Hand-overs of the authority so far: approvals given before the latest one are void.
        "authorityGeneration": k.authority_generation,
    })
}

pub fn authority(address: &Pubkey, a: &PolicyAuthority) -> Value {
    json!({
        "address": key(address),
        "asset": key(&a.asset),
        // The asset's owner who created (or took over) the authority: it acts only while
        // that key owns the asset.
        "owner": key(&a.owner),
        "members": a.members.iter().map(key).collect::<Vec<_>>(),
        "threshold": a.threshold,
    })
}

/// A payment's receipt: its log's fields, whether it was disputed, and, once the log is
/// closed (`closed` given: the closing transaction when found), `closed: true` and the
/// settlement's signature.
pub fn feedback_log(
    address: &Pubkey,
    r: &Receipt,
    disputed: bool,
    closed: Option<Option<solana_sdk::signature::Signature>>,
) -> Value {
    let mut v = r.to_json();
    v["address"] = key(address).into();
    v["disputed"] = disputed.into();
    v["closed"] = closed.is_some().into();
    if let Some(Some(s)) = closed {
        v["closedBy"] = s.to_string().into();
    }
    v
}

pub fn namespace(address: &Pubkey, n: &CapabilityNamespace) -> Value {
    json!({
        "address": key(address),
        "hash": hex(&n.hash),
        "name": n.name,
        "version": n.version,
        "schemaUri": n.schema_uri,
        "registrant": key(&n.registrant),
        "createdSlot": n.created_slot,
    })
}

pub fn attestor(address: &Pubkey, a: &AttestorProfile) -> Value {
    json!({
        "address": key(address),
        "attestor": key(&a.attestor),
        "displayNameUri": a.display_name_uri,
        "attestationsIssued": a.attestations_issued,
        "revocations": a.revocations,
        "createdSlot": a.created_slot,
    })
}

pub fn request(address: &Pubkey, r: &ValidationRequest) -> Value {
    json!({
        "address": key(address),
        "subject": key(&r.subject),
        "capabilityHash": hex(&r.capability),
        "requester": key(&r.requester),
        "claimUriHash": opt_hash(&r.claim_uri_hash),
        "deadlineSlot": r.deadline_slot,
        "createdSlot": r.created_slot,
    })
}

pub fn attestation(address: &Pubkey, a: &ValidationAttestation) -> Value {
    json!({
        "address": key(address),
        "subject": key(&a.subject),
        "capabilityHash": hex(&a.capability),
        "attestor": key(&a.attestor),
        "claimPayloadHash": opt_hash(&a.claim_payload_hash),
        "claimUriHash": opt_hash(&a.claim_uri_hash),
        "issuedSlot": a.issued_slot,
        "issuedAt": a.issued_at,
        "expiresAtSlot": a.expires_at_slot,
        "expiresAt": a.expires_at,
        "revoked": a.revoked,
        "revokedAt": a.revoked_at,
        "renewals": a.renewals,
        "signatureVerified": a.signature_verified,
    })
}
