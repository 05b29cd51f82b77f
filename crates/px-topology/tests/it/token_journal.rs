//! The token write-ahead journal (`px_topology::token_journal`): a cloud-drive apply killed
//! at any point between creating the tenant's token and delivering it loses nothing.
//! Each case kills the first run at one point (after every array write, after every
//! token_journal step, and between the apply and the delivery), then runs observe, journal,
//! plan, apply and delivery again with the same array and token_journal.

use crate::support as examples;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::tenant::{Planned, apply};
use flasharray::FlashArray;
use flasharray_mock::MockArray;
use px_topology::token_journal::{JournalStep, MemTokenJournal, TokenJournal};
use px_topology::{
    Action, ApplyOptions, Cancel, DesiredState, JournalVerdict, Kind, Plan, PlanOptions,
    ProgressEvent, Site,
};
use secrecy::{ExposeSecret, SecretString};

fn quiet(_: ProgressEvent) {}

fn cloud_drive() -> DesiredState {
    let spec = examples::example_specs()
        .into_iter()
        .find(|(m, _)| *m == "cloud-drive")
        .map(|(_, s)| s)
        .unwrap();
    let sizing = examples::sizing(&spec);
    px_topology::driver_for(&spec)
        .desired_state(&spec, &sizing)
        .unwrap()
}

fn admin(d: &DesiredState) -> String {
    d.api_token.as_ref().unwrap().admin.clone()
}

fn array_for(d: &DesiredState) -> MockArray {
    MockArray::builder().admin(admin(d)).build()
}

/// Where delivery puts the token: the px-pure-secret file or cluster secret.
#[derive(Clone, Default)]
struct Store(Arc<Mutex<Option<String>>>);

impl Store {
    fn get(&self) -> Option<String> {
        self.0.lock().unwrap().clone()
    }
    fn put(&self, t: &SecretString) {
        *self.0.lock().unwrap() = Some(t.expose_secret().to_string());
    }
}

/// Observes with the journal in the site (read into the observation, written by
/// the apply) and plans.
async fn journal_planned<'a>(
    a: &'a dyn FlashArray,
    d: &DesiredState,
    token_journal: &MemTokenJournal,
) -> (Planned<'a>, JournalVerdict) {
    let site = Site {
        journal: Some(Arc::new(token_journal.clone())),
        ..Site::array(a)
    };
    let staged = d
        .observe(site)
        .await
        .expect("observe")
        .plan(&PlanOptions::default());
    let verdict = staged.observed().token_journal;
    (staged, verdict)
}

async fn journal_plan(
    a: &MockArray,
    d: &DesiredState,
    token_journal: &MemTokenJournal,
) -> (Plan, JournalVerdict) {
    let (staged, verdict) = journal_planned(a, d, token_journal).await;
    (staged.plan().clone(), verdict)
}

/// One run: plan with the journal, apply, deliver, mark delivered. Returns whether
/// it ran to its end.
async fn run(
    a: &MockArray,
    d: &DesiredState,
    token_journal: &MemTokenJournal,
    store: &Store,
) -> bool {
    let (a2, d2, j2) = (a.clone(), d.clone(), token_journal.clone());
    // A spawned task: a token journal crash hook panics it, which ends every call of the
    // apply at that instant, as a killed process would.
    let task = tokio::spawn(async move {
        let (p, _) = journal_planned(&a2, &d2, &j2).await;
        tokio::time::timeout(
            Duration::from_secs(3600),
            apply(p, &ApplyOptions::default(), &quiet),
        )
        .await
    });
    let report = match task.await {
        Ok(Ok(r)) => r,
        // Killed by a token journal crash (panic) or by the stalled array (timeout).
        Ok(Err(_)) | Err(_) => return false,
    };
    if let Some(t) = &report.facts.api_token {
        store.put(t);
        let v = token_journal.clone();
        let user = admin(d);
        if tokio::spawn(async move { v.delivered(&user) })
            .await
            .is_err()
        {
            return false;
        }
    }
    true
}

enum Kill {
    AfterWrite(u64),
    AfterJournal(JournalStep),
    BeforeDelivery,
}

async fn killed_then_rerun(d: &DesiredState, kill: Kill, label: &str) {
    let a = array_for(d);
    let token_journal = MemTokenJournal::new();
    let store = Store::default();
    let user = admin(d);
    match kill {
        Kill::AfterWrite(n) => {
            a.faults().stall_after_write(n);
            run(&a, d, &token_journal, &store).await;
            assert!(a.faults().stalled(), "{label}: the write never happened");
        }
        Kill::AfterJournal(step) => {
            token_journal.crash_after(step);
            run(&a, d, &token_journal, &store).await;
        }
        Kill::BeforeDelivery => {
            let (p, _) = journal_planned(&a, d, &token_journal).await;
            let r = apply(p, &ApplyOptions::default(), &quiet).await;
            assert!(r.is_success(), "{label}: {r:?}");
        }
    }
    a.faults().clear();
    token_journal.clear_hook();
    let delivered_first = store.get();
    let created_first = token_created_at(&a, &user).await;

    // Never "no changes" while nobody holds the array's token.
    let (p2, journal) = journal_plan(&a, d, &token_journal).await;
    if delivered_first.is_none() && created_first.is_some() {
        assert!(
            p2.changes
                .iter()
                .any(|c| c.kind == Kind::ApiToken && c.action != Action::NoOp),
            "{label}: the array has an undelivered token and the plan keeps it ({journal:?}):\n{}",
            p2.to_text(false)
        );
    }
    assert!(!p2.is_blocked(), "{label}: {}", p2.to_text(false));
    assert!(
        run(&a, d, &token_journal, &store).await,
        "{label}: the rerun did not end"
    );

    let held = store
        .get()
        .unwrap_or_else(|| panic!("{label}: no token delivered"));
    assert_eq!(
        a.api_token_owner(&held).as_deref(),
        Some(user.as_str()),
        "{label}: the delivered token does not log in as {user}"
    );
    let tokens = a
        .list_api_tokens(std::slice::from_ref(&user), false)
        .await
        .unwrap();
    assert_eq!(tokens.len(), 1, "{label}: {tokens:?}");
    if delivered_first.is_some() {
        assert_eq!(delivered_first.as_deref(), Some(held.as_str()), "{label}");
        assert_eq!(
            token_created_at(&a, &user).await,
            created_first,
            "{label}: a delivered token was replaced"
        );
    }
    assert!(
        token_journal.load(&user).unwrap().is_none(),
        "{label}: journal left"
    );
    let (p3, _) = journal_plan(&a, d, &token_journal).await;
    assert!(!p3.has_changes(), "{label}: {}", p3.to_text(false));
}

async fn token_created_at(a: &MockArray, user: &str) -> Option<u64> {
    a.list_api_tokens(&[user.to_string()], false)
        .await
        .unwrap()
        .into_iter()
        .find(|t| t.name.eq_ignore_ascii_case(user))
        .and_then(|t| t.api_token.created_at)
}

#[tokio::test(start_paused = true)]
async fn cloud_drive_token_survives_a_kill_at_every_step() {
    let d = cloud_drive();
    // How many writes a fault-free apply makes.
    let a = array_for(&d);
    a.reset_stats();
    let token_journal = MemTokenJournal::new();
    assert!(run(&a, &d, &token_journal, &Store::default()).await);
    let writes = a.stats().writes;
    assert!(writes >= 2, "{writes}");
    for n in 1..=writes {
        killed_then_rerun(&d, Kill::AfterWrite(n), &format!("killed after write {n}")).await;
    }
    for step in [
        JournalStep::Intent,
        JournalStep::Token,
        JournalStep::Delivered,
    ] {
        killed_then_rerun(
            &d,
            Kill::AfterJournal(step),
            &format!("killed after {step:?}"),
        )
        .await;
    }
    killed_then_rerun(&d, Kill::BeforeDelivery, "killed before delivery").await;
}

/// The token POST took effect and its answer never came: the journal says
/// `creating`, the next plan replaces the token and says why.
#[tokio::test(start_paused = true)]
async fn an_undelivered_token_is_replaced_and_the_plan_says_so() {
    let d = cloud_drive();
    // Stall every write: the first write to reach the array is in round 1, and the
    // token creation is one of them; find the position that kills right after it.
    for n in 1..=8 {
        let a = array_for(&d);
        let token_journal = MemTokenJournal::new();
        a.faults().stall_after_write(n);
        run(&a, &d, &token_journal, &Store::default()).await;
        a.faults().clear();
        let created = token_created_at(&a, &admin(&d)).await;
        let entry = token_journal.load(&admin(&d)).unwrap();
        if created.is_none() || entry.as_ref().is_some_and(|e| e.token.is_some()) {
            continue;
        }
        let (p2, journal) = journal_plan(&a, &d, &token_journal).await;
        assert_eq!(journal, JournalVerdict::Interrupted);
        let token_changes: Vec<_> = p2
            .changes
            .iter()
            .filter(|c| c.kind == Kind::ApiToken)
            .map(|c| (c.action, c.reason.clone()))
            .collect();
        assert_eq!(token_changes.len(), 2, "{token_changes:?}");
        assert_eq!(token_changes[0].0, Action::Delete);
        assert!(
            token_changes[0].1.contains("interrupted"),
            "{token_changes:?}"
        );
        assert_eq!(token_changes[1].0, Action::Create);
        return;
    }
    panic!("no kill point left an undelivered token");
}

/// A cancelled apply starts nothing more and says so; the next one converges.
#[tokio::test]
async fn a_cancelled_apply_starts_nothing_more() {
    let d = cloud_drive();
    let a = array_for(&d);
    let token_journal = MemTokenJournal::new();
    let (p, _) = journal_planned(&a, &d, &token_journal).await;
    let cancel = Cancel::new();
    let c2 = cancel.clone();
    // One call at a time; cancel when the first change ends.
    let o = ApplyOptions {
        concurrency: 1,
        cancel: cancel.clone(),
        ..ApplyOptions::default()
    };
    let r = apply(p, &o, &move |ev| {
        if matches!(ev, ProgressEvent::ChangeFinished { .. }) {
            c2.cancel();
        }
    })
    .await;
    assert!(r.interrupted, "{r:?}");
    assert_eq!(r.applied.len(), 1, "{r:?}");
    assert!(r.failed.is_empty(), "{r:?}");
    assert!(!r.skipped.is_empty(), "{r:?}");
    assert!(
        r.skipped.iter().all(|s| s.reason.contains("interrupted")),
        "{r:?}"
    );
    let store = Store::default();
    if let Some(t) = &r.facts.api_token {
        store.put(t);
        token_journal.delivered(&admin(&d)).unwrap();
    }
    assert!(run(&a, &d, &token_journal, &store).await);
    assert!(store.get().is_some());
    let (p3, _) = journal_plan(&a, &d, &token_journal).await;
    assert!(!p3.has_changes(), "{}", p3.to_text(false));
}

/// The token POST took effect and its answer was lost (the array shows the value
/// only in it): the apply does not call that a success, the journal keeps the
/// intent, and the next run replaces the token and delivers the new one.
#[tokio::test(start_paused = true)]
async fn a_token_whose_answer_was_lost_is_a_failure_then_replaced() {
    let d = cloud_drive();
    let user = admin(&d);
    let mut seen = false;
    for n in 1..=8 {
        let a = array_for(&d);
        let token_journal = MemTokenJournal::new();
        // Settled by the one layer a caller puts around the array.
        let settling = flasharray::Settling::new(&a);
        let (p, _) = journal_planned(&settling, &d, &token_journal).await;
        a.faults().fail_write_after_effect(n);
        a.faults().withhold_token_values(true);
        let r = apply(p, &ApplyOptions::default(), &quiet).await;
        a.faults().clear();
        let on_array = token_created_at(&a, &user).await.is_some();
        if !on_array || r.facts.api_token.is_some() {
            continue;
        }
        // The array has a token and this run has no value for it.
        seen = true;
        assert!(
            !r.is_success(),
            "n={n}: a token nobody has is not a success: {r:?}"
        );
        assert!(
            r.failed
                .iter()
                .any(|f| f.change.kind == Kind::ApiToken && f.error.contains("lost")),
            "{r:?}"
        );
        let (_, journal) = journal_plan(&a, &d, &token_journal).await;
        assert_eq!(journal, JournalVerdict::Interrupted, "n={n}");
        let store = Store::default();
        assert!(run(&a, &d, &token_journal, &store).await);
        let held = store.get().expect("delivered");
        assert_eq!(a.api_token_owner(&held).as_deref(), Some(user.as_str()));
    }
    assert!(seen, "no write position lost the token's answer");
}
