//! The payer locks and the payment records on Redis, against a real `redis-server` of the
//! test's own: two stores on one Redis stand for two facilitator replicas.

use solana_sdk::hash::Hash;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Signature;
use std::time::{Duration, Instant};
use trust_gate_facilitator::payer_locks::{LockError, PayerTurns};
use trust_gate_facilitator::payment_records::{Claim, PaymentRecords, PendingRecord};
use trust_gate_facilitator::store::{self, Store};
use trust_gate_test_setup::RedisServer;

/// A replica's payer turns on its own connection to `redis`.
fn replica(redis: &RedisServer, ttl: Duration) -> PayerTurns {
    PayerTurns::new(connect(redis), ttl, usize::MAX)
}

fn connect(redis: &RedisServer) -> Store {
    store::open(Some(&redis.url())).unwrap()
}

/// A replica's records of `fee_payer`'s payments.
fn records(store: &Store, fee_payer: Pubkey) -> PaymentRecords {
    PaymentRecords::new(store.clone(), fee_payer, Duration::from_secs(30))
}

/// `turns` takes `payer`'s lock within a second (else fails saying `what`), then releases it.
async fn takes_at_once(turns: &PayerTurns, payer: Pubkey, what: &str) {
    tokio::time::timeout(Duration::from_secs(1), turns.lock(payer))
        .await
        .expect(what)
        .unwrap()
        .release()
        .await;
}

fn record(n: u8) -> PendingRecord {
    PendingRecord {
        signature: Signature::from([n; 64]),
        blockhash: Hash::new_from_array([n; 32]),
    }
}

#[tokio::test]
async fn replicas_take_one_payer_one_at_a_time_and_other_payers_freely() {
    let redis = RedisServer::start();
    let (sa, sb) = (connect(&redis), connect(&redis));
    let ttl = Duration::from_secs(30);
    let (a, b) = (
        PayerTurns::new(sa.clone(), ttl, usize::MAX),
        PayerTurns::new(sb.clone(), ttl, usize::MAX),
    );
    let (payer, other) = (Pubkey::new_unique(), Pubkey::new_unique());
    let held = a.lock(payer).await.unwrap();
    // Another replica takes another payer at once...
    takes_at_once(&b, other, "another payer is not blocked").await;
    // ...and waits for this one until the holder releases it.
    let waiting = tokio::time::timeout(Duration::from_millis(300), b.lock(payer)).await;
    assert!(waiting.is_err(), "a second replica took a held payer lock");
    held.release().await;
    takes_at_once(&b, payer, "released: the other replica takes it").await;
    assert!(sa.round_trips() >= 2 && sb.round_trips() >= 4);
}

#[tokio::test]
async fn replicas_a_lock_whose_holder_died_frees_itself_at_expiry_and_only_its_holder_releases_it()
{
    let redis = RedisServer::start();
    let ttl = Duration::from_millis(400);
    let (dead, live) = (replica(&redis, ttl), replica(&redis, ttl));
    let payer = Pubkey::new_unique();
    // The holder dies: its turn is never released.
    std::mem::forget(dead.lock(payer).await.unwrap());
    let start = Instant::now();
    let turn = tokio::time::timeout(Duration::from_secs(5), live.lock(payer))
        .await
        .expect("the dead holder's lock expired")
        .unwrap();
    assert!(
        start.elapsed() >= Duration::from_millis(300),
        "taken before its expiry: {:?}",
        start.elapsed()
    );
    drop(turn);

    // A holder whose lock expired does not release the next holder's. (`dead` still holds
    // the payer in its own process: the forgotten turn; a new replica stands in.)
    let slow = replica(&redis, ttl);
    let late = slow.lock(payer).await.unwrap();
    tokio::time::sleep(ttl + Duration::from_millis(100)).await;
    let next = live.lock(payer).await.unwrap();
    late.release().await;
    let third = replica(&redis, Duration::from_secs(5));
    let stolen = tokio::time::timeout(Duration::from_millis(150), third.lock(payer)).await;
    assert!(
        stolen.is_err(),
        "a late release freed another holder's lock"
    );
    next.release().await;
}

#[tokio::test]
async fn replicas_share_a_payments_pending_record() {
    let redis = RedisServer::start();
    let (sa, sb) = (connect(&redis), connect(&redis));
    let (fee_payer, id) = (Pubkey::new_unique(), [3u8; 32]);
    let (a, b) = (records(&sa, fee_payer), records(&sb, fee_payer));
    let (first, second) = (record(1), record(2));
    assert_eq!(b.pending(&id).await.unwrap(), None);
    assert_eq!(a.claim(&id, &first).await.unwrap(), Claim::Ours);
    // Any replica sees it; the same transaction again is the same claim, another is not.
    assert_eq!(b.pending(&id).await.unwrap(), Some(first));
    assert_eq!(b.claim(&id, &first).await.unwrap(), Claim::Same);
    assert_eq!(b.claim(&id, &second).await.unwrap(), Claim::Other(first));
    // Another facilitator's payment of the same id is its own.
    let other_fee_payer = Pubkey::new_unique();
    assert_eq!(
        records(&sb, other_fee_payer)
            .claim(&id, &second)
            .await
            .unwrap(),
        Claim::Ours
    );
    // Only the record that is there is replaced or forgotten.
    assert!(!b.replace(&id, &second, &first).await.unwrap());
    assert!(b.replace(&id, &first, &second).await.unwrap());
    a.forget(&id, &first).await;
    assert_eq!(a.pending(&id).await.unwrap(), Some(second));
    a.forget(&id, &second).await;
    assert_eq!(a.pending(&id).await.unwrap(), None);

    // What /settle reads before a payer's turn: both records in one round trip.
    b.claim(&id, &first).await.unwrap();
    let settled = trust_gate_facilitator::payment_records::PaymentRecord {
        signature: Some(first.signature),
        ..Default::default()
    };
    b.keep(&id, &settled).await.unwrap();
    let trips = sa.round_trips();
    assert_eq!(a.lookup(&id).await.unwrap(), (Some(first), Some(settled)));
    assert_eq!(sa.round_trips(), trips + 1);
    assert_eq!(a.lookup(&[9; 32]).await.unwrap(), (None, None));

    // A value that is no record (written by hand) is taken over.
    let key = format!(
        "trust-gate:pending:{fee_payer}:{}",
        trust_gate_client::decode::hex(&id)
    );
    let mut con = redis::Client::open(redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let () = redis::cmd("SET")
        .arg(&key)
        .arg("not a record")
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(a.pending(&id).await.unwrap(), None);
    assert_eq!(a.claim(&id, &first).await.unwrap(), Claim::Ours);
    assert_eq!(b.pending(&id).await.unwrap(), Some(first));
}

#[tokio::test]
async fn replicas_with_redis_down_get_an_error_naming_it_and_recover_when_it_is_back() {
    let mut redis = RedisServer::start();
    let shared = connect(&redis);
    let store = PayerTurns::new(shared.clone(), Duration::from_secs(30), usize::MAX);
    let payer = Pubkey::new_unique();
    store.lock(payer).await.unwrap().release().await;
    assert!(store::health(&*shared).await.ok);

    redis.stop();
    let err = match store.lock(payer).await {
        Ok(_) => panic!("a lock was taken with Redis down"),
        Err(LockError::Unavailable(e)) => e,
        Err(e) => panic!("not the store's failure: {e}"),
    };
    assert_eq!(err.store, redis.url());
    assert!(err.to_string().contains(&redis.url()), "{err}");
    let health = store::health(&*shared).await;
    assert!(!health.ok && health.error.is_some());
    assert!(records(&shared, payer).pending(&[1; 32]).await.is_err());

    redis.restart();
    let start = Instant::now();
    loop {
        match store.lock(payer).await {
            Ok(t) => {
                t.release().await;
                break;
            }
            Err(e) => assert!(
                start.elapsed() < Duration::from_secs(10),
                "no reconnection: {e}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(store::health(&*shared).await.ok);
}
