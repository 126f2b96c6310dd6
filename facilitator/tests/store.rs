//! The one test set both backends run: what the keepers of state rely on, the in-process
//! store against a real `redis-server` of the test's own.

use std::time::Duration;
use trust_gate_facilitator::store::memory::Memory;
use trust_gate_facilitator::store::redis::Redis;
use trust_gate_facilitator::store::{change, Backend, Change, Keep, Rule};

#[tokio::test]
async fn in_process() {
    all(&Memory::default()).await;
}

#[tokio::test]
async fn in_redis() {
    let server = trust_gate_test_setup::RedisServer::start();
    let redis = Redis::new(&server.url()).unwrap();
    all(&redis).await;
    assert!(redis.round_trips() > 40, "{}", redis.round_trips());
}

async fn all(s: &dyn Backend) {
    values(s).await;
    indexes(s).await;
    kept_with_indexes(s).await;
    hashes(s).await;
    changes(s).await;
}

const SHORT: Duration = Duration::from_millis(60);

async fn past(d: Duration) {
    tokio::time::sleep(d * 2 + Duration::from_millis(20)).await;
}

async fn values(s: &dyn Backend) {
    assert_eq!(s.get("v:a").await.unwrap(), None);
    s.set("v:a", "1", None).await.unwrap();
    assert_eq!(s.get("v:a").await.unwrap().as_deref(), Some("1"));
    // A claim writes only where nothing is, and says what is there.
    assert_eq!(s.claim("v:b", "2", None).await.unwrap(), None);
    assert_eq!(
        s.claim("v:b", "3", None).await.unwrap().as_deref(),
        Some("2")
    );
    // Only the value that is there is replaced or deleted.
    assert!(!s.replace_if("v:b", "3", "4", None).await.unwrap());
    assert!(s.replace_if("v:b", "2", "4", None).await.unwrap());
    assert!(!s.delete_if("v:b", "2").await.unwrap());
    assert!(s.delete_if("v:b", "4").await.unwrap());
    assert!(!s.replace_if("v:b", "4", "5", None).await.unwrap());
    let many = s
        .get_many(&["v:a".into(), "v:none".into(), "v:a".into()])
        .await
        .unwrap();
    assert_eq!(many, [Some("1".into()), None, Some("1".into())]);
    assert!(s.get_many(&[]).await.unwrap().is_empty());
    s.delete("v:a").await.unwrap();
    assert_eq!(s.get("v:a").await.unwrap(), None);

    // What expires reads as absent, and is claimed over; what does not stays.
    s.set("v:c", "1", Some(SHORT)).await.unwrap();
    assert_eq!(s.claim("v:d", "1", Some(SHORT)).await.unwrap(), None);
    s.set("v:e", "1", None).await.unwrap();
    assert!(s.replace_if("v:e", "1", "2", Some(SHORT)).await.unwrap());
    s.set("v:f", "1", Some(SHORT)).await.unwrap();
    assert!(s.replace_if("v:f", "1", "2", None).await.unwrap());
    past(SHORT).await;
    assert_eq!(s.get("v:c").await.unwrap(), None);
    assert!(!s.replace_if("v:c", "1", "2", None).await.unwrap());
    assert_eq!(s.claim("v:d", "2", None).await.unwrap(), None);
    assert_eq!(s.get("v:d").await.unwrap().as_deref(), Some("2"));
    assert_eq!(
        s.get("v:e").await.unwrap(),
        None,
        "the replacement's expiry"
    );
    assert_eq!(s.get("v:f").await.unwrap().as_deref(), Some("2"), "none");
}

async fn indexes(s: &dyn Backend) {
    for (m, score) in [("a", 1), ("b", 3), ("c", 2), ("d", 2)] {
        s.index_add("i:x", m, score).await.unwrap();
    }
    let pairs = |v: &[(&str, i64)]| -> Vec<(String, i64)> {
        v.iter().map(|(m, s)| (m.to_string(), *s)).collect()
    };
    // The highest first; between equal scores, the greater member first.
    assert_eq!(
        s.index_range("i:x", 2, 10).await.unwrap(),
        pairs(&[("b", 3), ("d", 2), ("c", 2)])
    );
    assert_eq!(
        s.index_range("i:x", i64::MIN, 2).await.unwrap(),
        pairs(&[("b", 3), ("d", 2)])
    );
    // No bound: every member.
    let all = s.index_range("i:x", i64::MIN, usize::MAX).await.unwrap();
    assert_eq!(all.len(), 4);
    s.index_add("i:x", "a", 9).await.unwrap();
    s.index_remove("i:x", "b").await.unwrap();
    assert_eq!(
        s.index_range("i:x", 2, 10).await.unwrap(),
        pairs(&[("a", 9), ("d", 2), ("c", 2)])
    );
    assert!(s.index_range("i:none", 0, 10).await.unwrap().is_empty());
}

fn keep<'a>(key: &'a str, indexes: &'a [&'a str], member: &'a str, score: i64) -> Keep<'a> {
    Keep {
        key,
        value: member,
        ttl: Duration::from_secs(60),
        indexes,
        member,
        score,
        first_score: false,
        drop_below: 0,
        bound: None,
    }
}

async fn kept_with_indexes(s: &dyn Backend) {
    let members = |v: Vec<(String, i64)>| -> Vec<(String, i64)> { v };
    // A record kept again keeps its first place when asked to.
    let one = ["k:one"];
    s.keep_indexed(&Keep {
        first_score: true,
        ..keep("k:r1", &one, "r1", 10)
    })
    .await
    .unwrap();
    s.keep_indexed(&Keep {
        value: "again",
        first_score: true,
        ..keep("k:r1", &one, "r1", 20)
    })
    .await
    .unwrap();
    assert_eq!(s.get("k:r1").await.unwrap().as_deref(), Some("again"));
    assert_eq!(
        members(s.index_range("k:one", 0, 10).await.unwrap()),
        vec![("r1".to_string(), 10)]
    );
    // Members scored below `drop_below` leave; without `first_score` the score moves.
    s.keep_indexed(&Keep {
        drop_below: 15,
        ..keep("k:r2", &one, "r2", 30)
    })
    .await
    .unwrap();
    s.keep_indexed(&keep("k:r2", &one, "r2", 31)).await.unwrap();
    assert_eq!(
        s.index_range("k:one", 0, 10).await.unwrap(),
        vec![("r2".to_string(), 31)]
    );
    // No index: the record alone.
    s.keep_indexed(&keep("k:alone", &[], "x", 1)).await.unwrap();
    assert_eq!(s.get("k:alone").await.unwrap().as_deref(), Some("x"));

    // Bounded by the first index: past it the lowest scored go, from every index, with
    // their records; never the one written.
    let two = ["k:payer", "k:all"];
    s.index_add("k:all", "other", 0).await.unwrap();
    for (m, score) in [("x1", 1), ("x2", 2), ("x3", 3), ("x0", 0)] {
        let key = format!("k:rec:{m}");
        s.keep_indexed(&Keep {
            bound: Some((2, "k:rec:")),
            ..keep(&key, &two, m, score)
        })
        .await
        .unwrap();
    }
    let names = |v: Vec<(String, i64)>| -> Vec<String> { v.into_iter().map(|p| p.0).collect() };
    assert_eq!(
        names(s.index_range("k:payer", i64::MIN, 10).await.unwrap()),
        ["x3", "x0"]
    );
    assert_eq!(
        names(s.index_range("k:all", i64::MIN, 10).await.unwrap()),
        ["x3", "x0", "other"]
    );
    assert_eq!(s.get("k:rec:x1").await.unwrap(), None);
    assert_eq!(s.get("k:rec:x2").await.unwrap(), None);
    assert_eq!(s.get("k:rec:x3").await.unwrap().as_deref(), Some("x3"));

    // Removed from every index with its record, once.
    assert!(s.remove_indexed("k:rec:x3", &two, "x3").await.unwrap());
    assert!(!s.remove_indexed("k:rec:x3", &two, "x3").await.unwrap());
    assert_eq!(
        names(s.index_range("k:payer", i64::MIN, 10).await.unwrap()),
        ["x0"]
    );
    assert_eq!(s.get("k:rec:x3").await.unwrap(), None);

    // An index lives as long as its longest-lived record.
    s.keep_indexed(&Keep {
        ttl: Duration::from_secs(60),
        ..keep("k:long", &["k:short"], "long", 1)
    })
    .await
    .unwrap();
    s.keep_indexed(&Keep {
        ttl: SHORT,
        ..keep("k:brief", &["k:short", "k:gone"], "brief", 2)
    })
    .await
    .unwrap();
    past(SHORT).await;
    assert_eq!(s.get("k:brief").await.unwrap(), None);
    assert!(s.index_range("k:gone", 0, 10).await.unwrap().is_empty());
    assert_eq!(
        names(s.index_range("k:short", 0, 10).await.unwrap()),
        ["brief", "long"]
    );
}

/// A test rule in both languages: at most `ARGV[3]` entries.
const AT_MOST: &str = r"
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 'exists' end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return 'full' end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 'ok'";

async fn hashes(s: &dyn Backend) {
    assert!(s.entries("h").await.unwrap().is_empty());
    s.put_entry("h", "a", "1").await.unwrap();
    assert_eq!(s.entry("h", "a").await.unwrap().as_deref(), Some("1"));
    assert!(s.replace_entry("h", "a", "2").await.unwrap());
    assert!(!s.replace_entry("h", "b", "2").await.unwrap());
    assert_eq!(s.entry("h", "b").await.unwrap(), None);
    s.remove_entry("h", "a").await.unwrap();
    assert!(s.entries("h").await.unwrap().is_empty());

    // An entry is admitted by a rule over every entry, and written in the same step.
    let script = redis::Script::new(AT_MOST);
    let args = ["2".to_string()];
    let check = |values: &[String]| {
        if values.len() >= 2 {
            Err("full".to_string())
        } else {
            Ok(())
        }
    };
    let rule = Rule {
        script: &script,
        args: &args,
        check: &check,
    };
    let steps = [
        ("c1", "1", Ok(())),
        ("c1", "2", Err("exists")),
        ("c2", "2", Ok(())),
        ("c3", "3", Err("full")),
    ];
    for (field, value, want) in steps {
        let got = s.insert_admitted("h", field, value, &rule).await.unwrap();
        assert_eq!(got, want.map_err(String::from), "{field} = {value}");
    }
    let all = s.entries("h").await.unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all["c1"], "1");
}

async fn changes(s: &dyn Backend) {
    let ttl = |n: &u64| (*n > 100).then_some(SHORT);
    let missing = change::<u64, ()>(s, "c:n", ttl, |n| Ok(n + 1)).await;
    assert!(matches!(missing, Err(Change::Missing)));
    s.set("c:n", "1", None).await.unwrap();
    assert_eq!(
        change::<u64, ()>(s, "c:n", ttl, |n| Ok(n + 1))
            .await
            .unwrap(),
        2
    );
    let refused = change(s, "c:n", ttl, |n| Err(*n)).await;
    assert!(matches!(refused, Err(Change::Refused(2))));
    assert_eq!(s.get("c:n").await.unwrap().as_deref(), Some("2"));
    // The new value's life is the change's to say.
    assert_eq!(
        change::<u64, ()>(s, "c:n", ttl, |_| Ok(500)).await.unwrap(),
        500
    );
    past(SHORT).await;
    assert_eq!(s.get("c:n").await.unwrap(), None);
}
