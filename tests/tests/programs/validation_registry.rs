//! validation_registry: namespaces, attestors, requests, attestations (issue, renew, revoke)
//! and the optional Ed25519 attestor signature, with every error each instruction can return.

// ProgramTestContext and the solana-sdk re-exports are marked deprecated (Agave unstable API).
#![allow(deprecated)]

use anchor_lang::{AccountSerialize, AnchorDeserialize, Discriminator, Event};
use solana_program_test::{BanksClientError, ProgramTestContext};
use solana_sdk::{
    account::AccountSharedData,
    instruction::Instruction,
    pubkey::Pubkey,
    signature::{Keypair, Signer},
};
use trust_gate_program_tests::registry::*;
use trust_gate_program_tests::{
    advance_slots, assert_already_in_use, assert_code, clock, fetch, funded_keypair, raw_account,
    set_time, start, transaction,
};
use validation_registry::{
    attestation_message, errors::ValidationRegistryError as E, events::*, instruction, pda,
    state::*, utils::ed25519::ED25519_PROGRAM_ID, RequestValidationArgs, MAX_DEADLINE_SLOTS,
};

// ---------------------------------------------------------------------------------------------
// Error codes
// ---------------------------------------------------------------------------------------------

/// Anchor's code for one of our variants.
fn code(e: E) -> u32 {
    6000 + e as u32
}
const CONSTRAINT_SEEDS: u32 = 2006;
const CONSTRAINT_ADDRESS: u32 = 2012;
const ACCOUNT_NOT_SIGNER: u32 = 3010;
const ACCOUNT_NOT_INITIALIZED: u32 = 3012;

const NAME: &str = "kyc.tier-1.v1";

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// An Ed25519 precompile instruction with one signature whose public key, signature and
/// message live at the given instruction indices (`u16::MAX` = inline).
fn ed25519_ix_with_indices(
    pubkey: &Pubkey,
    signature: &[u8],
    message: &[u8],
    indices: [u16; 3],
) -> Instruction {
    const HEADER: u16 = 2 + 14;
    let pubkey_offset = HEADER;
    let signature_offset = pubkey_offset + 32;
    let message_offset = signature_offset + 64;
    let mut data = vec![1u8, 0];
    for v in [
        signature_offset,
        indices[0],
        pubkey_offset,
        indices[1],
        message_offset,
        message.len() as u16,
        indices[2],
    ] {
        data.extend_from_slice(&v.to_le_bytes());
    }
    data.extend_from_slice(pubkey.as_ref());
    data.extend_from_slice(signature);
    data.extend_from_slice(message);
    Instruction {
        program_id: solana_sdk::ed25519_program::ID,
        accounts: vec![],
        data,
    }
}

/// `signer`'s Ed25519 signature over `message`, as a precompile instruction with its data inline.
fn ed25519_ix(signer: &Keypair, message: &[u8]) -> Instruction {
    let signature = signer.sign_message(message);
    ed25519_ix_with_indices(&signer.pubkey(), signature.as_ref(), message, [u16::MAX; 3])
}

/// Sends a transaction and returns its log messages, or the error as [`send`] would.
async fn send_logged(
    ctx: &mut ProgramTestContext,
    ixs: &[Instruction],
    signers: &[&Keypair],
) -> Result<Vec<String>, BanksClientError> {
    let tx = transaction(ctx, ixs, signers).await;
    Ok(trust_gate_program_tests::execute(ctx, tx)
        .await?
        .log_messages)
}

/// The events of type `T` in the logs (natively the line reads
/// "Program log: Program data: <base64>").
fn events<T: Event + AnchorDeserialize + Discriminator>(logs: &[String]) -> Vec<T> {
    use anchor_lang::__private::base64::{engine::general_purpose::STANDARD, Engine as _};
    logs.iter()
        .filter_map(|line| line.split_once("Program data: "))
        .filter_map(|(_, b64)| STANDARD.decode(b64.trim()).ok())
        .filter(|bytes| bytes.starts_with(T::DISCRIMINATOR))
        .map(|bytes| T::try_from_slice(&bytes[T::DISCRIMINATOR.len()..]).expect("event decodes"))
        .collect()
}

/// The one event of type `T` in the logs.
fn event<T: Event + AnchorDeserialize + Discriminator>(logs: &[String]) -> T {
    assert!(
        logs.iter().any(|l| l.contains("Program data:")),
        "no Program data: line in {logs:#?}"
    );
    let mut found = events::<T>(logs);
    assert_eq!(found.len(), 1, "expected one event in {logs:#?}");
    found.remove(0)
}

/// Overwrites an Anchor account of ours in the bank with `value` (same size).
async fn overwrite<T: AccountSerialize>(ctx: &mut ProgramTestContext, address: &Pubkey, value: &T) {
    let mut account = raw_account(ctx, address).await.expect("account exists");
    let mut cursor: &mut [u8] = &mut account.data;
    value.try_serialize(&mut cursor).unwrap();
    ctx.set_account(address, &AccountSharedData::from(account));
}

/// A bank with the namespace [`NAME`] registered and a registered attestor.
struct World {
    ctx: ProgramTestContext,
    capability: [u8; 32],
    attestor: Keypair,
    subject: Pubkey,
}

impl World {
    async fn new() -> Self {
        let mut ctx = start().await;
        let registrant = funded_keypair(&mut ctx).await;
        let attestor = funded_keypair(&mut ctx).await;
        send_logged(
            &mut ctx,
            &[register_namespace_ix(
                &registrant.pubkey(),
                NAME,
                "1.0.0",
                "https://schemas.example/kyc",
            )],
            &[&registrant],
        )
        .await
        .unwrap();
        send_logged(
            &mut ctx,
            &[register_attestor_ix(
                &attestor.pubkey(),
                "https://attestor.example",
            )],
            &[&attestor],
        )
        .await
        .unwrap();
        World {
            ctx,
            capability: capability_hash(NAME),
            attestor,
            subject: Pubkey::new_unique(),
        }
    }

    async fn claim(&mut self, slots_ahead: u64) -> Claim {
        let slot = clock(&mut self.ctx).await.slot;
        Claim {
            subject: self.subject,
            capability: self.capability,
            payload_hash: [0xAB; 32],
            uri_hash: [0xCD; 32],
            expires_at_slot: slot + slots_ahead,
        }
    }

    async fn respond(&mut self, claim: &Claim) -> Result<Vec<String>, BanksClientError> {
        let ix = respond_ix(&self.attestor.pubkey(), claim);
        send_logged(&mut self.ctx, &[ix], &[&self.attestor]).await
    }

    async fn revoke(&mut self, reason: [u8; 32]) -> Result<Vec<String>, BanksClientError> {
        let ix = revoke_ix(
            &self.attestor.pubkey(),
            &self.subject,
            &self.capability,
            reason,
        );
        send_logged(&mut self.ctx, &[ix], &[&self.attestor]).await
    }

    fn attestation_address(&self) -> Pubkey {
        pda::attestation(&self.subject, &self.capability, &self.attestor.pubkey()).0
    }

    async fn attestation(&mut self) -> ValidationAttestation {
        let address = self.attestation_address();
        fetch(&mut self.ctx, &address)
            .await
            .expect("attestation exists")
    }

    async fn profile(&mut self) -> AttestorProfile {
        let address = pda::attestor_profile(&self.attestor.pubkey()).0;
        fetch(&mut self.ctx, &address)
            .await
            .expect("profile exists")
    }
}

/// Expected unix expiry: 400 ms per slot, rounded up to whole seconds.
fn expected_expiry(unix_now: i64, slot_now: u64, expires_at_slot: u64) -> i64 {
    unix_now + ((expires_at_slot - slot_now) * 400).div_ceil(1000) as i64
}

// ---------------------------------------------------------------------------------------------
// Pure helpers
// ---------------------------------------------------------------------------------------------

#[test]
fn error_codes_are_stable() {
    assert_eq!(code(E::NameTooShort), 6000);
    assert_eq!(code(E::SchemaUriTooLong), 6004);
    assert_eq!(code(E::DeadlineInPast), 6006);
    assert_eq!(code(E::Ed25519InstructionMalformed), 6010);
    assert_eq!(code(E::CounterOverflow), 6014);
}

#[test]
fn namespace_hash_is_sha256_of_the_name_and_ed25519_id_is_the_precompile() {
    assert_eq!(CapabilityNamespace::hash_name(NAME), capability_hash(NAME));
    assert_eq!(ED25519_PROGRAM_ID, solana_sdk::ed25519_program::ID);
}

#[test]
fn attestation_message_layout() {
    let subject = Pubkey::new_unique();
    let m = attestation_message(&subject, &[1; 32], &[2; 32], &[3; 32], 0x0102);
    let tag = b"trust-gate/attestation/v1";
    assert_eq!(&m[..tag.len()], tag);
    let rest = &m[tag.len()..];
    assert_eq!(rest.len(), 4 * 32 + 8);
    assert_eq!(&rest[..32], subject.as_ref());
    assert_eq!(&rest[32..64], &[1; 32]);
    assert_eq!(&rest[64..96], &[2; 32]);
    assert_eq!(&rest[96..128], &[3; 32]);
    assert_eq!(&rest[128..], &0x0102u64.to_le_bytes());
}

// ---------------------------------------------------------------------------------------------
// register_namespace
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn register_namespace_stores_the_on_chain_hash_and_emits() {
    let mut ctx = start().await;
    let registrant = funded_keypair(&mut ctx).await;
    let logs = send_logged(
        &mut ctx,
        &[register_namespace_ix(
            &registrant.pubkey(),
            NAME,
            "1.0.0",
            "https://schemas.example/kyc",
        )],
        &[&registrant],
    )
    .await
    .unwrap();
    let hash = capability_hash(NAME);
    let (address, bump) = pda::namespace(&hash);
    let ns: CapabilityNamespace = fetch(&mut ctx, &address).await.unwrap();
    let slot = clock(&mut ctx).await.slot;
    assert_eq!(ns.hash, hash);
    assert_eq!(ns.name, NAME);
    assert_eq!(ns.version, "1.0.0");
    assert_eq!(ns.schema_uri, "https://schemas.example/kyc");
    assert_eq!(ns.registrant, registrant.pubkey());
    assert_eq!(ns.created_slot, slot);
    assert_eq!(ns.bump, bump);

    let ev: NamespaceRegistered = event(&logs);
    assert_eq!(ev.namespace, address);
    assert_eq!(ev.hash, hash);
    assert_eq!(ev.name, NAME);
    assert_eq!(ev.version, "1.0.0");
    assert_eq!(ev.schema_uri, "https://schemas.example/kyc");
    assert_eq!(ev.registrant, registrant.pubkey());
    assert_eq!(ev.slot, slot);
}

#[tokio::test]
async fn register_namespace_accepts_the_bounds_and_empty_optionals() {
    let mut ctx = start().await;
    let r = funded_keypair(&mut ctx).await;
    let shortest = "abc";
    let longest = "n".repeat(32);
    let ixs = [
        register_namespace_ix(&r.pubkey(), shortest, "", ""),
        register_namespace_ix(&r.pubkey(), &longest, &"v".repeat(16), &"s".repeat(160)),
    ];
    send_logged(&mut ctx, &ixs, &[&r]).await.unwrap();
    let ns: CapabilityNamespace = fetch(&mut ctx, &pda::namespace(&capability_hash(&longest)).0)
        .await
        .unwrap();
    assert_eq!(ns.name, longest);
    assert_eq!(ns.schema_uri.len(), 160);
    let short: CapabilityNamespace = fetch(&mut ctx, &pda::namespace(&capability_hash("abc")).0)
        .await
        .unwrap();
    assert_eq!(
        (short.version.as_str(), short.schema_uri.as_str()),
        ("", "")
    );
}

#[tokio::test]
async fn register_namespace_rejects_each_invalid_field() {
    let mut ctx = start().await;
    let r = funded_keypair(&mut ctx).await;
    let long_name = "n".repeat(33);
    let cases: [(&str, String, String, E); 6] = [
        ("ab", "".into(), "".into(), E::NameTooShort),
        ("", "".into(), "".into(), E::NameTooShort),
        (&long_name, "".into(), "".into(), E::NameTooLong),
        ("kyc:tier-1", "".into(), "".into(), E::NameContainsColon),
        ("kyc.tier-2", "v".repeat(17), "".into(), E::VersionTooLong),
        (
            "kyc.tier-3",
            "".into(),
            "s".repeat(161),
            E::SchemaUriTooLong,
        ),
    ];
    for (name, version, schema, err) in cases {
        let ix = register_namespace_ix(&r.pubkey(), name, &version, &schema);
        assert_code(send_logged(&mut ctx, &[ix], &[&r]).await, code(err));
        assert!(
            raw_account(&mut ctx, &pda::namespace(&capability_hash(name)).0)
                .await
                .is_none()
        );
    }
}

#[tokio::test]
async fn register_namespace_rejects_a_hash_that_does_not_match_the_name() {
    let mut ctx = start().await;
    let r = funded_keypair(&mut ctx).await;
    // The client claims the name "kyc.tier-1.v1" but passes the PDA of another name's hash
    // (e.g. to squat a capability hash under a misleading name).
    let mut accounts = register_namespace_accounts(&r.pubkey(), NAME);
    accounts.namespace = pda::namespace(&capability_hash("audit.smart-contract.v1")).0;
    let ix = instruction(
        accounts,
        instruction::RegisterNamespace {
            name: NAME.into(),
            version: "1".into(),
            schema_uri: "".into(),
        },
    );
    assert_code(send_logged(&mut ctx, &[ix], &[&r]).await, CONSTRAINT_SEEDS);
    // A PDA keyed by a raw, client-chosen hash is rejected the same way.
    accounts.namespace = pda::namespace(&[7; 32]).0;
    let ix = instruction(
        accounts,
        instruction::RegisterNamespace {
            name: NAME.into(),
            version: "2".into(),
            schema_uri: "".into(),
        },
    );
    assert_code(send_logged(&mut ctx, &[ix], &[&r]).await, CONSTRAINT_SEEDS);
}

#[tokio::test]
async fn register_namespace_is_first_come_and_permanent() {
    let mut ctx = start().await;
    let first = funded_keypair(&mut ctx).await;
    let second = funded_keypair(&mut ctx).await;
    send_logged(
        &mut ctx,
        &[register_namespace_ix(&first.pubkey(), NAME, "1", "a")],
        &[&first],
    )
    .await
    .unwrap();
    // Re-initialisation by anyone, with any fields, fails and changes nothing.
    for (who, version) in [(&second, "2"), (&first, "3")] {
        let ix = register_namespace_ix(&who.pubkey(), NAME, version, "b");
        assert_already_in_use(send_logged(&mut ctx, &[ix], &[who]).await);
    }
    let ns: CapabilityNamespace = fetch(&mut ctx, &pda::namespace(&capability_hash(NAME)).0)
        .await
        .unwrap();
    assert_eq!(
        (ns.registrant, ns.version.as_str(), ns.schema_uri.as_str()),
        (first.pubkey(), "1", "a")
    );
}

#[tokio::test]
async fn register_namespace_requires_the_registrant_signature() {
    let mut ctx = start().await;
    let r = funded_keypair(&mut ctx).await;
    let mut ix = register_namespace_ix(&r.pubkey(), NAME, "1", "");
    ix.accounts[0].is_signer = false;
    assert_code(send_logged(&mut ctx, &[ix], &[]).await, ACCOUNT_NOT_SIGNER);
}

// ---------------------------------------------------------------------------------------------
// register_attestor
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn register_attestor_creates_the_profile_and_emits() {
    let mut ctx = start().await;
    let a = funded_keypair(&mut ctx).await;
    let uri = "u".repeat(100);
    let logs = send_logged(&mut ctx, &[register_attestor_ix(&a.pubkey(), &uri)], &[&a])
        .await
        .unwrap();
    let (address, bump) = pda::attestor_profile(&a.pubkey());
    let p: AttestorProfile = fetch(&mut ctx, &address).await.unwrap();
    let slot = clock(&mut ctx).await.slot;
    assert_eq!(p.attestor, a.pubkey());
    assert_eq!(p.display_name_uri, uri);
    assert_eq!((p.attestations_issued, p.revocations), (0, 0));
    assert_eq!(p.created_slot, slot);
    assert_eq!(p.bump, bump);
    let ev: AttestorRegistered = event(&logs);
    assert_eq!(
        (ev.profile, ev.attestor, ev.display_name_uri, ev.slot),
        (address, a.pubkey(), uri, slot)
    );
}

#[tokio::test]
async fn register_attestor_rejects_a_long_uri_reinit_and_a_foreign_pda() {
    let mut ctx = start().await;
    let a = funded_keypair(&mut ctx).await;
    let ix = register_attestor_ix(&a.pubkey(), &"u".repeat(101));
    assert_code(
        send_logged(&mut ctx, &[ix], &[&a]).await,
        code(E::DisplayNameUriTooLong),
    );

    // A profile PDA that belongs to someone else.
    let other = Pubkey::new_unique();
    let mut ix = register_attestor_ix(&a.pubkey(), "x");
    ix.accounts[1].pubkey = pda::attestor_profile(&other).0;
    assert_code(send_logged(&mut ctx, &[ix], &[&a]).await, CONSTRAINT_SEEDS);

    send_logged(
        &mut ctx,
        &[register_attestor_ix(&a.pubkey(), "first")],
        &[&a],
    )
    .await
    .unwrap();
    let ix = register_attestor_ix(&a.pubkey(), "second");
    assert_already_in_use(send_logged(&mut ctx, &[ix], &[&a]).await);
    let p: AttestorProfile = fetch(&mut ctx, &pda::attestor_profile(&a.pubkey()).0)
        .await
        .unwrap();
    assert_eq!(p.display_name_uri, "first");

    // Missing signer.
    let b = funded_keypair(&mut ctx).await;
    let mut ix = register_attestor_ix(&b.pubkey(), "b");
    ix.accounts[0].is_signer = false;
    assert_code(send_logged(&mut ctx, &[ix], &[]).await, ACCOUNT_NOT_SIGNER);
}

// ---------------------------------------------------------------------------------------------
// request_validation
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn request_validation_creates_the_request_and_emits() {
    let mut w = World::new().await;
    let requester = funded_keypair(&mut w.ctx).await;
    let slot = clock(&mut w.ctx).await.slot;
    let deadline = slot + MAX_DEADLINE_SLOTS; // the farthest allowed
    let ix = request_ix(
        &requester.pubkey(),
        &w.subject,
        &w.capability,
        [5; 32],
        deadline,
    );
    let logs = send_logged(&mut w.ctx, &[ix], &[&requester]).await.unwrap();
    let (address, bump) = pda::request(&w.subject, &w.capability, &requester.pubkey());
    let r: ValidationRequest = fetch(&mut w.ctx, &address).await.unwrap();
    assert_eq!(r.subject, w.subject);
    assert_eq!(r.capability, w.capability);
    assert_eq!(r.requester, requester.pubkey());
    assert_eq!(r.claim_uri_hash, [5; 32]);
    assert_eq!(r.deadline_slot, deadline);
    assert_eq!(r.created_slot, slot);
    assert_eq!(r.bump, bump);
    let ev: ValidationRequested = event(&logs);
    assert_eq!(ev.request, address);
    assert_eq!(
        (ev.subject, ev.capability, ev.requester),
        (w.subject, w.capability, requester.pubkey())
    );
    assert_eq!(
        (ev.claim_uri_hash, ev.deadline_slot, ev.slot),
        ([5; 32], deadline, slot)
    );
}

#[tokio::test]
async fn request_validation_rejects_bad_deadlines_unknown_namespaces_and_duplicates() {
    let mut w = World::new().await;
    advance_slots(&mut w.ctx, 10).await;
    let requester = funded_keypair(&mut w.ctx).await;
    let slot = clock(&mut w.ctx).await.slot;
    let me = requester.pubkey();
    for deadline in [0, 1, slot - 1, slot] {
        let ix = request_ix(&me, &w.subject, &w.capability, [0; 32], deadline);
        assert_code(
            send_logged(&mut w.ctx, &[ix], &[&requester]).await,
            code(E::DeadlineInPast),
        );
    }
    for deadline in [slot + MAX_DEADLINE_SLOTS + 1, u64::MAX] {
        let ix = request_ix(&me, &w.subject, &w.capability, [0; 32], deadline);
        assert_code(
            send_logged(&mut w.ctx, &[ix], &[&requester]).await,
            code(E::DeadlineTooFar),
        );
    }
    // A capability nobody registered.
    let unknown = capability_hash("never.registered");
    let ix = request_ix(&me, &w.subject, &unknown, [0; 32], slot + 100);
    assert_code(
        send_logged(&mut w.ctx, &[ix], &[&requester]).await,
        ACCOUNT_NOT_INITIALIZED,
    );
    // A registered namespace passed for another capability hash.
    let mut accounts = request_accounts(&me, &w.subject, &unknown);
    accounts.namespace = pda::namespace(&w.capability).0;
    let ix = instruction(
        accounts,
        instruction::RequestValidation {
            args: RequestValidationArgs {
                subject_asset: w.subject,
                capability_hash: unknown,
                claim_uri_hash: [0; 32],
                deadline_slot: slot + 100,
            },
        },
    );
    assert_code(
        send_logged(&mut w.ctx, &[ix], &[&requester]).await,
        CONSTRAINT_SEEDS,
    );

    // The same (subject, capability, requester) twice.
    let ix = request_ix(&me, &w.subject, &w.capability, [1; 32], slot + 100);
    send_logged(&mut w.ctx, &[ix], &[&requester]).await.unwrap();
    let ix = request_ix(&me, &w.subject, &w.capability, [2; 32], slot + 200);
    assert_already_in_use(send_logged(&mut w.ctx, &[ix], &[&requester]).await);
    let r: ValidationRequest = fetch(&mut w.ctx, &pda::request(&w.subject, &w.capability, &me).0)
        .await
        .unwrap();
    assert_eq!((r.claim_uri_hash, r.deadline_slot), ([1; 32], slot + 100));

    // Missing signer.
    let mut ix = request_ix(
        &w.attestor.pubkey(),
        &w.subject,
        &w.capability,
        [0; 32],
        slot + 100,
    );
    ix.accounts[0].is_signer = false;
    assert_code(
        send_logged(&mut w.ctx, &[ix], &[]).await,
        ACCOUNT_NOT_SIGNER,
    );
}

// ---------------------------------------------------------------------------------------------
// respond_to_validation
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn respond_issues_an_attestation_with_both_expiry_clocks() {
    let mut w = World::new().await;
    let now = clock(&mut w.ctx).await;
    let claim = w.claim(1_001).await;
    let logs = w.respond(&claim).await.unwrap();
    let a = w.attestation().await;
    let expires_at = expected_expiry(now.unix_timestamp, now.slot, claim.expires_at_slot);
    assert_eq!(expires_at, now.unix_timestamp + 401); // 1001 slots * 0.4 s = 400.4 s, rounded up
    assert_eq!(a.subject, w.subject);
    assert_eq!(a.capability, w.capability);
    assert_eq!(a.attestor, w.attestor.pubkey());
    assert_eq!(a.claim_payload_hash, claim.payload_hash);
    assert_eq!(a.claim_uri_hash, claim.uri_hash);
    assert_eq!((a.issued_slot, a.issued_at), (now.slot, now.unix_timestamp));
    assert_eq!(
        (a.expires_at_slot, a.expires_at),
        (claim.expires_at_slot, expires_at)
    );
    assert!(!a.revoked);
    assert_eq!((a.revoked_at, a.revocation_reason_hash), (0, [0; 32]));
    assert_eq!(a.renewals, 0);
    assert!(!a.signature_verified);
    assert_eq!(
        a.bump,
        pda::attestation(&w.subject, &w.capability, &w.attestor.pubkey()).1
    );
    assert!(!a.is_expired(now.unix_timestamp));
    assert_eq!(w.profile().await.attestations_issued, 1);

    let ev: ValidationResponded = event(&logs);
    assert_eq!(ev.attestation, w.attestation_address());
    assert_eq!(
        (ev.subject, ev.capability, ev.attestor),
        (w.subject, w.capability, w.attestor.pubkey())
    );
    assert_eq!(
        (ev.claim_payload_hash, ev.claim_uri_hash),
        (claim.payload_hash, claim.uri_hash)
    );
    assert_eq!(
        (ev.expires_at_slot, ev.expires_at),
        (claim.expires_at_slot, expires_at)
    );
    assert!(!ev.renewal && !ev.cleared_revocation && !ev.signature_verified);
    assert_eq!((ev.renewals, ev.slot), (0, now.slot));
}

#[tokio::test]
async fn respond_one_slot_ahead_is_live_in_unix_time_too() {
    let mut w = World::new().await;
    let now = clock(&mut w.ctx).await;
    let claim = w.claim(1).await;
    w.respond(&claim).await.unwrap();
    let a = w.attestation().await;
    assert_eq!(a.expires_at, now.unix_timestamp + 1);
    assert!(!a.is_expired(now.unix_timestamp));
}

#[tokio::test]
async fn respond_rejects_past_and_overflowing_expiry() {
    let mut w = World::new().await;
    advance_slots(&mut w.ctx, 5).await;
    let slot = clock(&mut w.ctx).await.slot;
    for expires in [0, 1, slot] {
        let mut claim = w.claim(1).await;
        claim.expires_at_slot = expires;
        assert_code(w.respond(&claim).await, code(E::ExpiryInPast));
    }
    let mut claim = w.claim(1).await;
    claim.expires_at_slot = u64::MAX;
    assert_code(w.respond(&claim).await, code(E::ExpiryOverflow));
    // The largest slot distance whose milliseconds still fit is accepted.
    claim.expires_at_slot = slot + u64::MAX / 400;
    w.respond(&claim).await.unwrap();
}

#[tokio::test]
async fn respond_requires_an_attestor_profile_a_namespace_and_the_real_sysvar() {
    let mut w = World::new().await;
    let claim = w.claim(100).await;

    // Without a profile.
    let stranger = funded_keypair(&mut w.ctx).await;
    let ix = respond_ix(&stranger.pubkey(), &claim);
    assert_code(
        send_logged(&mut w.ctx, &[ix], &[&stranger]).await,
        ACCOUNT_NOT_INITIALIZED,
    );
    // ... nor by borrowing a registered attestor's profile.
    let mut accounts = respond_accounts(&stranger.pubkey(), &claim);
    accounts.attestor_profile = pda::attestor_profile(&w.attestor.pubkey()).0;
    let ix = instruction(accounts, respond_data(&claim));
    assert_code(
        send_logged(&mut w.ctx, &[ix], &[&stranger]).await,
        CONSTRAINT_SEEDS,
    );

    // An unregistered capability.
    let mut unknown = claim;
    unknown.capability = capability_hash("never.registered");
    let ix = respond_ix(&w.attestor.pubkey(), &unknown);
    assert_code(
        send_logged(&mut w.ctx, &[ix], &[&w.attestor]).await,
        ACCOUNT_NOT_INITIALIZED,
    );
    // A registered namespace passed for another capability.
    let mut accounts = respond_accounts(&w.attestor.pubkey(), &unknown);
    accounts.namespace = pda::namespace(&w.capability).0;
    let ix = instruction(accounts, respond_data(&unknown));
    assert_code(
        send_logged(&mut w.ctx, &[ix], &[&w.attestor]).await,
        CONSTRAINT_SEEDS,
    );

    // A fake instructions sysvar.
    let mut accounts = respond_accounts(&w.attestor.pubkey(), &claim);
    accounts.instructions = Pubkey::new_unique();
    let ix = instruction(accounts, respond_data(&claim));
    assert_code(
        send_logged(&mut w.ctx, &[ix], &[&w.attestor]).await,
        CONSTRAINT_ADDRESS,
    );

    // Missing signer.
    let mut ix = respond_ix(&w.attestor.pubkey(), &claim);
    ix.accounts[0].is_signer = false;
    assert_code(
        send_logged(&mut w.ctx, &[ix], &[]).await,
        ACCOUNT_NOT_SIGNER,
    );

    let address = w.attestation_address();
    assert!(raw_account(&mut w.ctx, &address).await.is_none());
}

#[tokio::test]
async fn respond_cannot_write_another_attestors_attestation() {
    let mut w = World::new().await;
    let claim = w.claim(100).await;
    w.respond(&claim).await.unwrap();

    let rival = funded_keypair(&mut w.ctx).await;
    send_logged(
        &mut w.ctx,
        &[register_attestor_ix(&rival.pubkey(), "rival")],
        &[&rival],
    )
    .await
    .unwrap();
    let mut accounts = respond_accounts(&rival.pubkey(), &claim);
    accounts.attestation = w.attestation_address();
    let mut forged = claim;
    forged.payload_hash = [0xEE; 32];
    let ix = instruction(accounts, respond_data(&forged));
    assert_code(
        send_logged(&mut w.ctx, &[ix], &[&rival]).await,
        CONSTRAINT_SEEDS,
    );
    assert_eq!(w.attestation().await.claim_payload_hash, claim.payload_hash);

    // The rival's own response lands in its own PDA and leaves the original alone.
    let ix = respond_ix(&rival.pubkey(), &forged);
    send_logged(&mut w.ctx, &[ix], &[&rival]).await.unwrap();
    let theirs: ValidationAttestation = fetch(
        &mut w.ctx,
        &pda::attestation(&w.subject, &w.capability, &rival.pubkey()).0,
    )
    .await
    .unwrap();
    assert_eq!(
        (theirs.attestor, theirs.claim_payload_hash),
        (rival.pubkey(), [0xEE; 32])
    );
    let mine = w.attestation().await;
    assert_eq!(
        (mine.attestor, mine.claim_payload_hash),
        (w.attestor.pubkey(), claim.payload_hash)
    );
}

#[tokio::test]
async fn renewal_refreshes_the_claim_and_counts() {
    let mut w = World::new().await;
    let first = w.claim(100).await;
    w.respond(&first).await.unwrap();
    advance_slots(&mut w.ctx, 50).await;
    let now = clock(&mut w.ctx).await;
    let mut second = w.claim(2_000).await;
    second.payload_hash = [0x11; 32];
    let logs = w.respond(&second).await.unwrap();
    let a = w.attestation().await;
    assert_eq!(a.renewals, 1);
    assert_eq!(a.claim_payload_hash, [0x11; 32]);
    assert_eq!((a.issued_slot, a.issued_at), (now.slot, now.unix_timestamp));
    assert_eq!(a.expires_at_slot, second.expires_at_slot);
    assert_eq!(
        a.expires_at,
        expected_expiry(now.unix_timestamp, now.slot, second.expires_at_slot)
    );
    assert_eq!(w.profile().await.attestations_issued, 2);
    let ev: ValidationResponded = event(&logs);
    assert!(ev.renewal && !ev.cleared_revocation);
    assert_eq!(ev.renewals, 1);
}

#[tokio::test]
async fn expired_attestation_is_expired_and_renewal_revives_it() {
    let mut w = World::new().await;
    let claim = w.claim(10).await; // 4 s
    w.respond(&claim).await.unwrap();
    let a = w.attestation().await;
    assert!(!a.is_expired(a.issued_at));
    assert!(a.is_expired(a.expires_at));

    // Ten slots later and the unix clock past the expiry.
    advance_slots(&mut w.ctx, 11).await;
    set_time(&mut w.ctx, a.expires_at + 1).await;
    let now = clock(&mut w.ctx).await;
    assert!(now.slot > claim.expires_at_slot);
    assert!(w.attestation().await.is_expired(now.unix_timestamp));

    // The old expiry can no longer be used...
    let mut stale = claim;
    stale.payload_hash = [0x99; 32];
    assert_code(w.respond(&stale).await, code(E::ExpiryInPast));
    // ... a new one renews the attestation.
    let renewed = w.claim(100).await;
    w.respond(&renewed).await.unwrap();
    let a = w.attestation().await;
    assert_eq!(a.renewals, 1);
    assert!(!a.is_expired(now.unix_timestamp));
    assert_eq!(
        a.expires_at,
        expected_expiry(now.unix_timestamp, now.slot, renewed.expires_at_slot)
    );
}

#[tokio::test]
async fn renewal_after_revocation_clears_it() {
    let mut w = World::new().await;
    let claim = w.claim(100).await;
    w.respond(&claim).await.unwrap();
    w.revoke([0x77; 32]).await.unwrap();
    let revoked = w.attestation().await;
    assert!(revoked.revoked);

    let renewal = w.claim(300).await;
    let logs = w.respond(&renewal).await.unwrap();
    let a = w.attestation().await;
    assert!(!a.revoked);
    assert_eq!((a.revoked_at, a.revocation_reason_hash), (0, [0; 32]));
    assert_eq!(a.renewals, 1);
    let ev: ValidationResponded = event(&logs);
    assert!(ev.renewal && ev.cleared_revocation);
    let p = w.profile().await;
    assert_eq!((p.attestations_issued, p.revocations), (2, 1));

    // It can be revoked again after the renewal.
    w.revoke([0x78; 32]).await.unwrap();
    assert_eq!(w.profile().await.revocations, 2);
}

#[tokio::test]
async fn respond_and_revoke_reject_counter_overflow() {
    let mut w = World::new().await;
    let claim = w.claim(100).await;
    w.respond(&claim).await.unwrap();

    let address = w.attestation_address();
    let mut a = w.attestation().await;
    a.renewals = u32::MAX;
    overwrite(&mut w.ctx, &address, &a).await;
    let renewal = w.claim(200).await;
    assert_code(w.respond(&renewal).await, code(E::CounterOverflow));

    a.renewals = 0;
    overwrite(&mut w.ctx, &address, &a).await;
    let profile_address = pda::attestor_profile(&w.attestor.pubkey()).0;
    let mut p = w.profile().await;
    p.attestations_issued = u64::MAX;
    overwrite(&mut w.ctx, &profile_address, &p).await;
    // (another claim, so the transaction differs from the failed one above)
    let renewal = w.claim(201).await;
    assert_code(w.respond(&renewal).await, code(E::CounterOverflow));

    p.attestations_issued = 1;
    p.revocations = u64::MAX;
    overwrite(&mut w.ctx, &profile_address, &p).await;
    assert_code(w.revoke([1; 32]).await, code(E::CounterOverflow));
    assert!(!w.attestation().await.revoked);
}

// ---------------------------------------------------------------------------------------------
// Ed25519 attestor signature
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_valid_ed25519_signature_sets_signature_verified() {
    let mut w = World::new().await;
    let claim = w.claim(100).await;
    let ixs = [
        ed25519_ix(&w.attestor, &claim.message()),
        respond_ix(&w.attestor.pubkey(), &claim),
    ];
    let attestor = w.attestor.insecure_clone();
    let logs = send_logged(&mut w.ctx, &ixs, &[&attestor]).await.unwrap();
    assert!(w.attestation().await.signature_verified);
    assert!(event::<ValidationResponded>(&logs).signature_verified);

    // A later renewal without a signature is not verified.
    let unsigned = w.claim(200).await;
    w.respond(&unsigned).await.unwrap();
    let a = w.attestation().await;
    assert!(!a.signature_verified);
    assert_eq!(a.renewals, 1);

    // A signature placed AFTER the response is not the attestor's proof.
    let later = w.claim(300).await;
    let ixs = [
        respond_ix(&attestor.pubkey(), &later),
        ed25519_ix(&attestor, &later.message()),
    ];
    send_logged(&mut w.ctx, &ixs, &[&attestor]).await.unwrap();
    assert!(!w.attestation().await.signature_verified);
}

#[tokio::test]
async fn an_ed25519_signature_by_another_key_or_over_another_message_fails() {
    let mut w = World::new().await;
    let attestor = w.attestor.insecure_clone();
    let claim = w.claim(100).await;

    // Signed by another key (valid for the precompile, wrong signer for us).
    let other = Keypair::new();
    let ixs = [
        ed25519_ix(&other, &claim.message()),
        respond_ix(&attestor.pubkey(), &claim),
    ];
    assert_code(
        send_logged(&mut w.ctx, &ixs, &[&attestor]).await,
        code(E::SignaturePublicKeyMismatch),
    );

    // Signed by the attestor over other claims: another expiry, another payload.
    let mut longer = claim;
    longer.expires_at_slot += 1;
    let mut other_payload = claim;
    other_payload.payload_hash = [0; 32];
    for signed in [longer, other_payload] {
        let ixs = [
            ed25519_ix(&attestor, &signed.message()),
            respond_ix(&attestor.pubkey(), &claim),
        ];
        assert_code(
            send_logged(&mut w.ctx, &ixs, &[&attestor]).await,
            code(E::SignatureMessageMismatch),
        );
    }
    // Signed over the bare fields without the domain tag.
    let bare = &claim.message()[b"trust-gate/attestation/v1".len()..];
    let ixs = [
        ed25519_ix(&attestor, bare),
        respond_ix(&attestor.pubkey(), &claim),
    ];
    assert_code(
        send_logged(&mut w.ctx, &ixs, &[&attestor]).await,
        code(E::SignatureMessageMismatch),
    );

    let address = w.attestation_address();
    assert!(raw_account(&mut w.ctx, &address).await.is_none());
}

#[tokio::test]
async fn a_forged_ed25519_signature_fails_the_transaction() {
    let mut w = World::new().await;
    let attestor = w.attestor.insecure_clone();
    let claim = w.claim(100).await;
    // The attestor's key and the right message, but a signature by someone else: the
    // precompile itself rejects the transaction.
    let forged = Keypair::new().sign_message(&claim.message());
    let ixs = [
        ed25519_ix_with_indices(
            &attestor.pubkey(),
            forged.as_ref(),
            &claim.message(),
            [u16::MAX; 3],
        ),
        respond_ix(&attestor.pubkey(), &claim),
    ];
    assert!(send_logged(&mut w.ctx, &ixs, &[&attestor]).await.is_err());
    let address = w.attestation_address();
    assert!(raw_account(&mut w.ctx, &address).await.is_none());
}

#[tokio::test]
async fn a_malformed_ed25519_instruction_fails() {
    let mut w = World::new().await;
    let attestor = w.attestor.insecure_clone();
    let claim = w.claim(100).await;
    let message = claim.message();
    let signature = attestor.sign_message(&message);

    // Data referenced by explicit instruction index (0, the Ed25519 instruction itself):
    // valid for the precompile, but not the inline form the registry accepts.
    let ixs = [
        ed25519_ix_with_indices(&attestor.pubkey(), signature.as_ref(), &message, [0, 0, 0]),
        respond_ix(&attestor.pubkey(), &claim),
    ];
    assert_code(
        send_logged(&mut w.ctx, &ixs, &[&attestor]).await,
        code(E::Ed25519InstructionMalformed),
    );

    // Two signatures in one instruction (both valid).
    let other = Keypair::new();
    let other_sig = other.sign_message(b"x");
    let header = 2 + 2 * 14u16;
    let mut data = vec![2u8, 0];
    let mut tail = Vec::new();
    for (pk, sig, msg) in [
        (
            attestor.pubkey(),
            signature.as_ref().to_vec(),
            message.clone(),
        ),
        (other.pubkey(), other_sig.as_ref().to_vec(), b"x".to_vec()),
    ] {
        let base = header + tail.len() as u16;
        for v in [
            base + 32,
            u16::MAX,
            base,
            u16::MAX,
            base + 96,
            msg.len() as u16,
            u16::MAX,
        ] {
            data.extend_from_slice(&v.to_le_bytes());
        }
        tail.extend_from_slice(pk.as_ref());
        tail.extend_from_slice(&sig);
        tail.extend_from_slice(&msg);
    }
    data.extend_from_slice(&tail);
    let two = Instruction {
        program_id: solana_sdk::ed25519_program::ID,
        accounts: vec![],
        data,
    };
    let ixs = [two, respond_ix(&attestor.pubkey(), &claim)];
    assert_code(
        send_logged(&mut w.ctx, &ixs, &[&attestor]).await,
        code(E::Ed25519InstructionMalformed),
    );
}

// ---------------------------------------------------------------------------------------------
// revoke_validation
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn revoke_marks_the_attestation_and_emits() {
    let mut w = World::new().await;
    let claim = w.claim(100).await;
    w.respond(&claim).await.unwrap();
    let now = clock(&mut w.ctx).await;
    let logs = w.revoke([0x42; 32]).await.unwrap();
    let a = w.attestation().await;
    assert!(a.revoked);
    assert_eq!(a.revoked_at, now.unix_timestamp);
    assert_eq!(a.revocation_reason_hash, [0x42; 32]);
    assert_eq!(
        a.claim_payload_hash, claim.payload_hash,
        "the claim itself is kept"
    );
    assert_eq!(w.profile().await.revocations, 1);
    let ev: ValidationRevoked = event(&logs);
    assert_eq!(ev.attestation, w.attestation_address());
    assert_eq!(
        (ev.subject, ev.capability, ev.attestor),
        (w.subject, w.capability, w.attestor.pubkey())
    );
    assert_eq!(
        (ev.reason_hash, ev.revoked_at, ev.slot),
        ([0x42; 32], now.unix_timestamp, now.slot)
    );
}

#[tokio::test]
async fn revoking_twice_fails() {
    let mut w = World::new().await;
    let claim = w.claim(100).await;
    w.respond(&claim).await.unwrap();
    w.revoke([1; 32]).await.unwrap();
    assert_code(w.revoke([2; 32]).await, code(E::AlreadyRevoked));
    let a = w.attestation().await;
    assert_eq!(a.revocation_reason_hash, [1; 32]);
    assert_eq!(w.profile().await.revocations, 1);
}

#[tokio::test]
async fn a_stranger_cannot_revoke_someone_elses_attestation() {
    let mut w = World::new().await;
    let claim = w.claim(100).await;
    w.respond(&claim).await.unwrap();
    let target = w.attestation_address();

    // A registered attestor pointing at another attestor's attestation.
    let stranger = funded_keypair(&mut w.ctx).await;
    send_logged(
        &mut w.ctx,
        &[register_attestor_ix(&stranger.pubkey(), "s")],
        &[&stranger],
    )
    .await
    .unwrap();
    let mut accounts = revoke_accounts(&stranger.pubkey(), &w.subject, &w.capability);
    accounts.attestation = target;
    let data = instruction::RevokeValidation {
        subject_asset: w.subject,
        capability_hash: w.capability,
        reason_hash: [9; 32],
    };
    let ix = instruction(accounts, data);
    assert_code(
        send_logged(&mut w.ctx, &[ix], &[&stranger]).await,
        CONSTRAINT_SEEDS,
    );
    // Its own (non-existent) attestation for the same subject.
    let ix = revoke_ix(&stranger.pubkey(), &w.subject, &w.capability, [9; 32]);
    assert_code(
        send_logged(&mut w.ctx, &[ix], &[&stranger]).await,
        ACCOUNT_NOT_INITIALIZED,
    );
    // Naming the real attestor without its signature.
    let mut ix = revoke_ix(&w.attestor.pubkey(), &w.subject, &w.capability, [9; 32]);
    ix.accounts[0].is_signer = false;
    assert_code(
        send_logged(&mut w.ctx, &[ix], &[]).await,
        ACCOUNT_NOT_SIGNER,
    );
    // An unregistered stranger.
    let nobody = funded_keypair(&mut w.ctx).await;
    let mut accounts = revoke_accounts(&nobody.pubkey(), &w.subject, &w.capability);
    accounts.attestation = target;
    let ix = instruction(
        accounts,
        instruction::RevokeValidation {
            subject_asset: w.subject,
            capability_hash: w.capability,
            reason_hash: [9; 32],
        },
    );
    assert_code(
        send_logged(&mut w.ctx, &[ix], &[&nobody]).await,
        ACCOUNT_NOT_INITIALIZED,
    );

    assert!(!w.attestation().await.revoked);
}
