//! The per-array observation cache: every tenant's drift check and plan read one
//! listing per object kind per array per interval, instead of its own objects, so
//! that the reads of a resync pass depend on the number of arrays, not of tenants.
//!
//! [`ObservationCache`] wraps the array's client (any [`FlashArray`]) and keeps one
//! listing of each kind the tenant pipeline reads: volumes, hosts (the management
//! hosts are found by initiator among all of them), host groups, pods (destroyed
//! ones included, as the lookups ask), pxfa's tags per tagged kind (the `pxfa.io`
//! namespace only), connections, and the admins with their API tokens (never the
//! token values: a read that exposes them always goes to the array). A listing is
//! one paged call (the client's paging) taken on the first read after the interval
//! ends; the reads the pipeline makes (by name membership filter, or everything)
//! are answered from it. Any other read goes to the array.
//!
//! Writes go to the array and mark what they touched, before and after the call:
//! the named objects, their tags and connection rows, and where a write reaches
//! further than its names (a host group's members see its connections, a pod's
//! destroy takes its volumes) every name of that kind. A read naming a marked
//! object goes to the array until the next listing started after the write ended;
//! a read of everything lists again. The cached view is trusted only to say that
//! nothing needs doing: a plan that would write is made again from
//! [`ObservationCache::fresh`], which reads the array itself (see
//! `reconcile.rs`), so nothing is written from a listing.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use flasharray::array::ItemStream;
use flasharray::models::*;
use flasharray::params::*;
use flasharray::{
    FlashArray, FlashArrayExt, HostGroupName, HostName, PodName, RealmName, Result, VolumeName,
};
use px_topology::TAG_NAMESPACE;

/// How long a listing answers reads when the controller is not told otherwise: a
/// drift check sees the array as it was at most this long ago, and a resync pass
/// costs one listing per kind per this interval.
pub(crate) const DEFAULT_LISTING_INTERVAL: Duration = Duration::from_secs(60);

/// A listing key: the field a filter selects on and a lower-cased name ([`EVERY`]
/// stands for every name of the field).
type Key = (&'static str, String);

/// The name that marks every name of a field.
const EVERY: &str = "*";

const NAME: &str = "name";
const VOLUME: &str = "volume.name";
const HOST: &str = "host.name";
const GROUP: &str = "host_group.name";

/// One listing and what was written since it was taken.
struct Slot<T> {
    state: Mutex<SlotState<T>>,
    /// One listing call at a time: concurrent readers wait for it.
    listing: tokio::sync::Mutex<()>,
}

struct SlotState<T> {
    items: Option<Arc<Listed<T>>>,
    taken: Option<Instant>,
    /// Marked keys and the write sequence number of their last mark.
    marked: HashMap<Key, u64>,
}

/// What a read wants of a listing.
enum Want {
    /// Everything.
    All,
    /// The items with any of these keys.
    Keys(Vec<Key>),
}

/// A listing's items and where each key's items are, indexed once when it is taken
/// or merged: a read of a few names looks at those, not at every item (each drift
/// check makes several such reads, on listings that grow with the tenants).
///
/// Items are shared (`Arc`) between a listing and the listings merged from it:
/// while writes run, nearly every observation merges a few written names into the
/// listing, and a merge that copied every item (and lower-cased every key again)
/// made a new copy of each whole tag listing per reconcile (#26: the controller's
/// memory at 1,000 tenants).
struct Listed<T> {
    items: Vec<Arc<T>>,
    by_key: HashMap<Key, Vec<usize>>,
}

impl<T: Keyed> Listed<T> {
    fn new(items: Vec<T>) -> Self {
        let mut listed = Listed {
            items: Vec::with_capacity(items.len()),
            by_key: HashMap::new(),
        };
        listed.extend(items);
        listed
    }

    fn extend(&mut self, items: Vec<T>) {
        for item in items {
            let i = self.items.len();
            for k in item.keys() {
                self.by_key.entry(k).or_default().push(i);
            }
            self.items.push(Arc::new(item));
        }
    }

    /// This listing with the items of the `read` keys replaced by `fetched`; the
    /// other items and their keys are carried over, not copied or computed again.
    fn merged(&self, read: &HashSet<Key>, fetched: Vec<T>) -> Self {
        let gone: HashSet<usize> = read
            .iter()
            .filter_map(|k| self.by_key.get(k))
            .flatten()
            .copied()
            .collect();
        // Each old position's place in the merged listing.
        let mut moved = Vec::with_capacity(self.items.len());
        let mut items = Vec::with_capacity(self.items.len() - gone.len() + fetched.len());
        for (i, item) in self.items.iter().enumerate() {
            moved.push(items.len());
            if !gone.contains(&i) {
                items.push(item.clone());
            }
        }
        let mut by_key = HashMap::with_capacity(self.by_key.len());
        for (k, at) in &self.by_key {
            let kept: Vec<usize> = (at.iter().filter(|i| !gone.contains(i)))
                .map(|&i| moved[i])
                .collect();
            if !kept.is_empty() {
                by_key.insert(k.clone(), kept);
            }
        }
        let mut listed = Listed { items, by_key };
        listed.extend(fetched);
        listed
    }

    /// The items `want` asks for, in listing order.
    fn pick(&self, want: &Want) -> Vec<T>
    where
        T: Clone,
    {
        let keys = match want {
            Want::All => return self.items.iter().map(|i| T::clone(i)).collect(),
            Want::Keys(keys) => keys,
        };
        let mut at: Vec<usize> = keys
            .iter()
            .filter_map(|k| self.by_key.get(k))
            .flatten()
            .copied()
            .collect();
        at.sort_unstable();
        at.dedup();
        at.into_iter().map(|i| T::clone(&self.items[i])).collect()
    }
}

/// How a read is answered.
enum Answer<T> {
    Listing(Arc<Listed<T>>),
    Array,
    /// The listing, once these names (written since it was taken) are read again.
    Refresh(Vec<String>),
    List,
}

/// Most written names read again into a listing at once; more, and it lists again.
const MOST_REFRESHED: usize = 50;

/// The names of `marked` when every mark names one object by name.
fn named_marks(marked: &HashMap<Key, u64>) -> Option<Vec<String>> {
    let named = marked.keys().all(|(f, n)| *f == NAME && n != EVERY);
    (named && marked.len() <= MOST_REFRESHED).then(|| marked.keys().map(|k| k.1.clone()).collect())
}

impl<T> Slot<T> {
    fn new() -> Self {
        Slot {
            state: Mutex::new(SlotState {
                items: None,
                taken: None,
                marked: HashMap::new(),
            }),
            listing: tokio::sync::Mutex::new(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SlotState<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn answer(&self, want: &Want, interval: Duration) -> Answer<T> {
        let s = self.lock();
        let Some(items) = s
            .items
            .clone()
            .filter(|_| s.taken.is_some_and(|t| t.elapsed() < interval))
        else {
            return Answer::List;
        };
        match want {
            Want::All if s.marked.is_empty() => Answer::Listing(items),
            Want::All => named_marks(&s.marked).map_or(Answer::List, Answer::Refresh),
            Want::Keys(keys) if keys.iter().any(|k| is_marked(&s.marked, k)) => Answer::Array,
            Want::Keys(_) => Answer::Listing(items),
        }
    }

    fn mark(&self, key: Key, seq: u64) {
        self.lock().marked.insert(key, seq);
    }

    /// A listing that started when the write sequence was at `started`: marks of
    /// writes that ended before it are answered by it.
    fn install(&self, items: Vec<T>, started: u64)
    where
        T: Keyed,
    {
        let listed = Arc::new(Listed::new(items));
        let mut s = self.lock();
        s.items = Some(listed);
        s.taken = Some(Instant::now());
        s.marked.retain(|_, seq| *seq > started);
    }

    /// `fetched` is what the array holds of `names` now, read from when the write
    /// sequence was at `started`: it replaces the listing's items of those names.
    fn merge(&self, names: &[String], fetched: Vec<T>, started: u64)
    where
        T: Keyed + Clone,
    {
        let mut s = self.lock();
        let Some(listed) = &s.items else {
            return;
        };
        let read: HashSet<Key> = names.iter().map(|n| key(NAME, n)).collect();
        s.items = Some(Arc::new(listed.merged(&read, fetched)));
        s.marked
            .retain(|k, seq| !(read.contains(k) && *seq <= started));
    }

    fn expire(&self) {
        let mut s = self.lock();
        s.items = None;
        s.taken = None;
    }
}

fn is_marked(marked: &HashMap<Key, u64>, key: &Key) -> bool {
    marked.contains_key(key) || marked.contains_key(&(key.0, EVERY.to_string()))
}

fn key(field: &'static str, name: &str) -> Key {
    (field, name.to_ascii_lowercase())
}

/// The names of `field=('a','b')`, the membership filter the lookups send
/// ([`flasharray::membership_filter`]); `None` for any other expression.
fn filter_names(filter: &str, field: &str) -> Option<Vec<String>> {
    let inner = filter
        .strip_prefix(field)?
        .strip_prefix("=(")?
        .strip_suffix(')')?;
    inner
        .split(',')
        .map(|q| {
            let name = q.trim().strip_prefix('\'')?.strip_suffix('\'')?;
            (!name.is_empty() && !name.contains('\'')).then(|| name.to_string())
        })
        .collect()
}

/// What a list call of a named kind wants: everything, or a name membership
/// filter; `None` for anything else (it goes to the array).
fn want_of_list(params: &ListParams) -> Option<Want> {
    let plain = ListParams {
        filter: None,
        ..params.clone()
    };
    if plain != ListParams::all() {
        return None;
    }
    match &params.filter {
        None => Some(Want::All),
        Some(f) => filter_names(f, NAME).map(|n| Want::Keys(keys(NAME, &n))),
    }
}

/// What a connection listing call wants: everything, or one field's membership.
fn want_of_connections(params: &ConnectionParams) -> Option<Want> {
    let plain = ConnectionParams {
        filter: None,
        ..params.clone()
    };
    if plain != ConnectionParams::default() {
        return None;
    }
    let Some(f) = &params.filter else {
        return Some(Want::All);
    };
    [VOLUME, HOST, GROUP]
        .into_iter()
        .find_map(|field| filter_names(f, field).map(|n| Want::Keys(keys(field, &n))))
}

fn keys(field: &'static str, names: &[impl AsRef<str>]) -> Vec<Key> {
    names.iter().map(|n| key(field, n.as_ref())).collect()
}

/// The keys a listed item answers to.
trait Keyed {
    fn keys(&self) -> Vec<Key>;
}

macro_rules! keyed_by_name {
    ($($ty:ty),*) => {$(
        impl Keyed for $ty {
            fn keys(&self) -> Vec<Key> {
                vec![key(NAME, &self.name)]
            }
        }
    )*};
}

keyed_by_name!(Volume, Host, HostGroup, Pod, AdminApiToken);

impl Keyed for String {
    fn keys(&self) -> Vec<Key> {
        vec![key(NAME, self)]
    }
}

impl Keyed for Tag {
    fn keys(&self) -> Vec<Key> {
        self.resource.name.iter().map(|n| key(NAME, n)).collect()
    }
}

impl Keyed for Connection {
    fn keys(&self) -> Vec<Key> {
        [
            (VOLUME, &self.volume.name),
            (HOST, &self.host.name),
            (GROUP, &self.host_group.name),
        ]
        .into_iter()
        .filter_map(|(field, name)| name.as_deref().map(|n| key(field, n)))
        .collect()
    }
}

/// Which listing a write touched.
#[derive(Debug, Clone, Copy)]
enum Listing {
    Volumes,
    Hosts,
    HostGroups,
    Pods,
    Tags(TagResource),
    Connections,
    Admins,
    Tokens,
}

const TAGGED: [TagResource; 4] = [
    TagResource::Volume,
    TagResource::Host,
    TagResource::HostGroup,
    TagResource::Pod,
];

/// One array's listings, over its client. Build it with [`ObservationCache::new`]
/// and hand out [`ObservationCache::cached`] and [`ObservationCache::fresh`].
pub struct ObservationCache {
    inner: Arc<dyn FlashArray>,
    interval: Duration,
    /// Write sequence: every mark takes the next number.
    seq: AtomicU64,
    volumes: Slot<Volume>,
    hosts: Slot<Host>,
    host_groups: Slot<HostGroup>,
    pods: Slot<Pod>,
    tags: [Slot<Tag>; 4],
    connections: Slot<Connection>,
    /// Admin names only: nothing else of an admin is kept.
    admins: Slot<String>,
    tokens: Slot<AdminApiToken>,
}

impl std::fmt::Debug for ObservationCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObservationCache")
            .field("inner", &self.inner)
            .field("interval", &self.interval)
            .finish_non_exhaustive()
    }
}

impl ObservationCache {
    /// Listings of `inner` that answer reads for `interval` (zero: no listing, every
    /// read goes to the array).
    pub fn new(inner: Arc<dyn FlashArray>, interval: Duration) -> Arc<Self> {
        Arc::new(ObservationCache {
            inner,
            interval,
            seq: AtomicU64::new(0),
            volumes: Slot::new(),
            hosts: Slot::new(),
            host_groups: Slot::new(),
            pods: Slot::new(),
            tags: [Slot::new(), Slot::new(), Slot::new(), Slot::new()],
            connections: Slot::new(),
            admins: Slot::new(),
            tokens: Slot::new(),
        })
    }

    /// The array as the listings see it: for observing.
    pub fn cached(self: &Arc<Self>) -> Arc<dyn FlashArray> {
        Arc::new(View {
            cache: self.clone(),
            fresh: false,
        })
    }

    /// The array itself for every read (writes still mark the listings): for a plan
    /// that will write, and for the apply.
    pub fn fresh(self: &Arc<Self>) -> Arc<dyn FlashArray> {
        Arc::new(View {
            cache: self.clone(),
            fresh: true,
        })
    }

    /// Ends the interval now: the next read of each kind lists it again.
    pub fn expire(&self) {
        self.volumes.expire();
        self.hosts.expire();
        self.host_groups.expire();
        self.pods.expire();
        self.tags.iter().for_each(Slot::expire);
        self.connections.expire();
        self.admins.expire();
        self.tokens.expire();
    }

    fn tag_slot(&self, kind: TagResource) -> &Slot<Tag> {
        let i = TAGGED.iter().position(|k| *k == kind).unwrap_or(0);
        &self.tags[i]
    }

    fn mark(&self, touched: &[(Listing, Key)]) {
        let seq = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
        for (listing, k) in touched {
            let k = k.clone();
            match listing {
                Listing::Volumes => self.volumes.mark(k, seq),
                Listing::Hosts => self.hosts.mark(k, seq),
                Listing::HostGroups => self.host_groups.mark(k, seq),
                Listing::Pods => self.pods.mark(k, seq),
                Listing::Tags(kind) => self.tag_slot(*kind).mark(k, seq),
                Listing::Connections => self.connections.mark(k, seq),
                Listing::Admins => self.admins.mark(k, seq),
                Listing::Tokens => self.tokens.mark(k, seq),
            }
        }
    }

    /// A write: marked before (a read while it runs goes to the array) and after
    /// (a listing that started before it ended does not answer for it).
    async fn write<T>(
        &self,
        touched: Vec<(Listing, Key)>,
        call: impl Future<Output = Result<T>>,
    ) -> Result<T> {
        self.mark(&touched);
        let r = call.await;
        self.mark(&touched);
        r
    }

    /// The listing answering `want`: as it is, with the names written since it was
    /// taken read again (`refresh`; `Ok(None)` where a kind cannot), or listed again
    /// when it is missing, old or marked for every name; `None` when the read must
    /// go to the array.
    async fn listing<T, L, LF, R, RF>(
        &self,
        slot: &Slot<T>,
        want: &Want,
        list: L,
        refresh: R,
    ) -> Result<Option<Arc<Listed<T>>>>
    where
        T: Keyed + Clone,
        L: FnOnce() -> LF,
        LF: Future<Output = Result<Vec<T>>>,
        R: FnOnce(Vec<String>) -> RF,
        RF: Future<Output = Result<Option<Vec<T>>>>,
    {
        if self.interval.is_zero() {
            return Ok(None);
        }
        let settled = |a: Answer<T>| match a {
            Answer::Listing(items) => Some(Some(items)),
            Answer::Array => Some(None),
            Answer::Refresh(_) | Answer::List => None,
        };
        if let Some(answer) = settled(slot.answer(want, self.interval)) {
            return Ok(answer);
        }
        let _one = slot.listing.lock().await;
        let answer = slot.answer(want, self.interval);
        if let Answer::Refresh(names) = &answer {
            let started = self.seq.load(Ordering::SeqCst);
            // Names gone from the array may make the read fail: then list again.
            if let Ok(Some(fetched)) = refresh(names.clone()).await {
                slot.merge(names, fetched, started);
                return Ok(settled(slot.answer(want, self.interval)).flatten());
            }
        } else if let Some(answer) = settled(answer) {
            return Ok(answer);
        }
        let started = self.seq.load(Ordering::SeqCst);
        let items = list().await?;
        slot.install(items, started);
        Ok(settled(slot.answer(want, self.interval)).flatten())
    }

    /// A read of a named kind: from the listing when `want` is one the listing
    /// answers, else from the array.
    async fn read<T, L, LF, A, AF>(
        &self,
        slot: &Slot<T>,
        want: Option<Want>,
        list: L,
        array: A,
    ) -> Result<Vec<T>>
    where
        T: Keyed + Clone,
        L: FnOnce() -> LF,
        LF: Future<Output = Result<Vec<T>>>,
        A: FnOnce() -> AF,
        AF: Future<Output = Result<Vec<T>>>,
    {
        self.read_refreshing(slot, want, list, no_refresh, array)
            .await
    }

    /// [`Self::read`], reading written names again into the listing with `refresh`.
    async fn read_refreshing<T, L, LF, R, RF, A, AF>(
        &self,
        slot: &Slot<T>,
        want: Option<Want>,
        list: L,
        refresh: R,
        array: A,
    ) -> Result<Vec<T>>
    where
        T: Keyed + Clone,
        L: FnOnce() -> LF,
        LF: Future<Output = Result<Vec<T>>>,
        R: FnOnce(Vec<String>) -> RF,
        RF: Future<Output = Result<Option<Vec<T>>>>,
        A: FnOnce() -> AF,
        AF: Future<Output = Result<Vec<T>>>,
    {
        let Some(want) = want else {
            return array().await;
        };
        match self.listing(slot, &want, list, refresh).await? {
            Some(listed) => Ok(listed.pick(&want)),
            None => array().await,
        }
    }

    /// The tokens of `admins` when both listings answer and name every one of them
    /// (an admin the listing does not know goes to the array, which says what a
    /// missing admin is).
    async fn read_tokens(&self, admins: &[String]) -> Result<Option<Vec<AdminApiToken>>> {
        let want = Want::Keys(keys(NAME, admins));
        let known = self
            .listing(
                &self.admins,
                &want,
                || async {
                    let all = self.inner.list_admins(&[]).await?;
                    Ok(all.into_iter().map(|a| a.name).collect())
                },
                no_refresh,
            )
            .await?;
        let Some(known) = known else {
            return Ok(None);
        };
        if !admins
            .iter()
            .all(|a| known.by_key.contains_key(&key(NAME, a)))
        {
            return Ok(None);
        }
        let tokens = self
            .listing(
                &self.tokens,
                &want,
                || self.inner.list_api_tokens(&[], false),
                no_refresh,
            )
            .await?;
        Ok(tokens.map(|t| t.pick(&want)))
    }
}

/// For the kinds whose written names are not read again: they list again.
async fn no_refresh<T>(_names: Vec<String>) -> Result<Option<Vec<T>>> {
    Ok(None)
}

/// What a write of named objects touches.
fn touched_volumes(names: &[impl AsRef<str>]) -> Vec<(Listing, Key)> {
    let mut t = Vec::new();
    for n in names {
        let n = n.as_ref();
        t.push((Listing::Volumes, key(NAME, n)));
        t.push((Listing::Connections, key(VOLUME, n)));
        t.push((Listing::Tags(TagResource::Volume), key(NAME, n)));
    }
    t
}

fn touched_hosts(names: &[impl AsRef<str>]) -> Vec<(Listing, Key)> {
    let mut t = vec![(Listing::HostGroups, key(NAME, EVERY))];
    for n in names {
        let n = n.as_ref();
        t.push((Listing::Hosts, key(NAME, n)));
        t.push((Listing::Connections, key(HOST, n)));
        t.push((Listing::Tags(TagResource::Host), key(NAME, n)));
    }
    t
}

/// A host group's hosts and their connection rows follow the group.
fn touched_groups(names: &[impl AsRef<str>]) -> Vec<(Listing, Key)> {
    let mut t = vec![
        (Listing::Hosts, key(NAME, EVERY)),
        (Listing::Connections, key(HOST, EVERY)),
    ];
    for n in names {
        let n = n.as_ref();
        t.push((Listing::HostGroups, key(NAME, n)));
        t.push((Listing::Connections, key(GROUP, n)));
        t.push((Listing::Tags(TagResource::HostGroup), key(NAME, n)));
    }
    t
}

/// A pod's volumes go with it when its contents are destroyed, or it is renamed.
fn touched_pods(names: &[impl AsRef<str>], contents: bool) -> Vec<(Listing, Key)> {
    let mut t = Vec::new();
    for n in names {
        t.push((Listing::Pods, key(NAME, n.as_ref())));
        t.push((Listing::Tags(TagResource::Pod), key(NAME, n.as_ref())));
    }
    if contents {
        t.extend(touched_volumes(&[EVERY]));
    }
    t
}

/// A realm's destroy may take everything inside it.
fn touched_everything() -> Vec<(Listing, Key)> {
    let mut t = touched_volumes(&[EVERY]);
    t.extend(touched_hosts(&[EVERY]));
    t.extend(touched_groups(&[EVERY]));
    t.extend(touched_pods(&[EVERY], false));
    t.push((Listing::Connections, key(GROUP, EVERY)));
    t
}

fn touched_admins(names: &[impl AsRef<str>]) -> Vec<(Listing, Key)> {
    names
        .iter()
        .flat_map(|n| {
            [
                (Listing::Admins, key(NAME, n.as_ref())),
                (Listing::Tokens, key(NAME, n.as_ref())),
            ]
        })
        .collect()
}

fn with_rename(mut names: Vec<String>, new: Option<&String>) -> Vec<String> {
    names.extend(new.cloned());
    names
}

fn strs<N: AsRef<str>>(names: &[N]) -> Vec<String> {
    names.iter().map(|n| n.as_ref().to_string()).collect()
}

/// The array as an [`ObservationCache`] shows it: from its listings, or (`fresh`)
/// the array's own answers; writes always go to the array and mark the listings.
struct View {
    cache: Arc<ObservationCache>,
    fresh: bool,
}

impl std::fmt::Debug for View {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObservationCache::View")
            .field("fresh", &self.fresh)
            .field("cache", &self.cache)
            .finish()
    }
}

/// Expands the method table into the view: a read goes to [`cached_read!`], a write
/// to the array through [`ObservationCache::write`] with what [`touches`] says it
/// touched; the stream and the session methods go to the array as they are (a stream
/// reads page by page: no listing holds it).
macro_rules! view {
    (
        []
        calls { $($(#[$cm:meta])* $kind:ident $op:ident $request:literal
            fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty;)* }
        streams { $($(#[$sm:meta])* fn $sname:ident(&$sself:ident $(, $sarg:ident: $sty:ty)* $(,)?)
            -> $sret:ty $sbody:block)* }
        session { $($(#[$pm:meta])* fn $pname:ident(&$pself:ident) -> $pret:ty $pbody:block)* }
    ) => {
        #[async_trait]
        impl FlashArray for View {
            $( async fn $name(&self, $($arg: $ty),*) -> Result<$ret> {
                let view = self;
                view_call!($kind, view, $name($($arg),*))
            } )*
            $( fn $sname(&self, $($sarg: $sty),*) -> ItemStream<'_, $sret> {
                self.inner().$sname($($sarg),*)
            } )*
            $( async fn $pname(&self) -> Result<$pret> {
                self.inner().$pname().await
            } )*
        }
    };
}

/// One call of the table, by its kind.
macro_rules! view_call {
    (read, $view:ident, $name:ident($($arg:ident),*)) => {
        cached_read!($view, $name($($arg),*))
    };
    (write, $view:ident, $name:ident($($arg:ident),*)) => {{
        let touched = touches::$name($($arg),*);
        $view
            .cache
            .write(touched, $view.inner().$name($($arg),*))
            .await
    }};
}

/// The reads a listing answers, each by the view's inherent method of the same name;
/// any other read goes to the array.
macro_rules! cached_read {
    ($view:ident, list_volumes($($a:ident),*)) => { $view.list_volumes($($a),*).await };
    ($view:ident, list_tags($($a:ident),*)) => { $view.list_tags($($a),*).await };
    ($view:ident, list_hosts($($a:ident),*)) => { $view.list_hosts($($a),*).await };
    ($view:ident, list_host_groups($($a:ident),*)) => { $view.list_host_groups($($a),*).await };
    ($view:ident, list_connections($($a:ident),*)) => { $view.list_connections($($a),*).await };
    ($view:ident, list_pods($($a:ident),*)) => { $view.list_pods($($a),*).await };
    ($view:ident, list_api_tokens($($a:ident),*)) => { $view.list_api_tokens($($a),*).await };
    ($view:ident, $name:ident($($a:ident),*)) => { $view.inner().$name($($a),*).await };
}

flasharray::for_each_method!(view);

impl View {
    fn want(&self, want: Option<Want>) -> Option<Want> {
        want.filter(|_| !self.fresh)
    }

    fn inner(&self) -> &dyn FlashArray {
        self.cache.inner.as_ref()
    }

    async fn list_volumes(&self, params: &ListParams) -> Result<Vec<Volume>> {
        let c = &self.cache;
        let all = ListParams::all();
        c.read(
            &c.volumes,
            self.want(want_of_list(params)),
            || self.inner().list_volumes(&all),
            || self.inner().list_volumes(params),
        )
        .await
    }

    async fn list_tags(&self, kind: TagResource, params: &TagParams) -> Result<Vec<Tag>> {
        let c = &self.cache;
        let ours = params.namespaces == [TAG_NAMESPACE] && params.resource_destroyed.is_none();
        let want = ours.then(|| {
            if params.resource_names.is_empty() {
                Want::All
            } else {
                Want::Keys(keys(NAME, &params.resource_names))
            }
        });
        let all = TagParams {
            resource_names: Vec::new(),
            ..params.clone()
        };
        let of = |resource_names| TagParams {
            resource_names,
            ..all.clone()
        };
        c.read_refreshing(
            c.tag_slot(kind),
            self.want(want),
            || self.inner().list_tags(kind, &all),
            |names| async move { self.inner().list_tags(kind, &of(names)).await.map(Some) },
            || self.inner().list_tags(kind, params),
        )
        .await
    }

    async fn list_hosts(&self, params: &ListParams) -> Result<Vec<Host>> {
        let c = &self.cache;
        let all = ListParams::all();
        c.read_refreshing(
            &c.hosts,
            self.want(want_of_list(params)),
            || self.inner().list_hosts(&all),
            |names| async move { self.inner().lookup_hosts(&names).await.map(Some) },
            || self.inner().list_hosts(params),
        )
        .await
    }

    async fn list_host_groups(&self, params: &ListParams) -> Result<Vec<HostGroup>> {
        let c = &self.cache;
        let all = ListParams::all();
        c.read(
            &c.host_groups,
            self.want(want_of_list(params)),
            || self.inner().list_host_groups(&all),
            || self.inner().list_host_groups(params),
        )
        .await
    }

    async fn list_connections(&self, params: &ConnectionParams) -> Result<Vec<Connection>> {
        let c = &self.cache;
        let all = ConnectionParams::default();
        c.read(
            &c.connections,
            self.want(want_of_connections(params)),
            || self.inner().list_connections(&all),
            || self.inner().list_connections(params),
        )
        .await
    }

    async fn list_pods(&self, params: &ListParams) -> Result<Vec<Pod>> {
        let c = &self.cache;
        let all = ListParams::all();
        c.read(
            &c.pods,
            self.want(want_of_list(params)),
            || self.inner().list_pods(&all),
            || self.inner().list_pods(params),
        )
        .await
    }

    async fn list_api_tokens(&self, admins: &[String], expose: bool) -> Result<Vec<AdminApiToken>> {
        if self.fresh || expose || admins.is_empty() {
            return self.inner().list_api_tokens(admins, expose).await;
        }
        match self.cache.read_tokens(admins).await? {
            Some(tokens) => Ok(tokens),
            None => self.inner().list_api_tokens(admins, expose).await,
        }
    }
}

/// What each write of the method table touches, named after the write: a new write
/// does not compile until it says so.
mod touches {
    use super::*;

    type Touched = Vec<(Listing, Key)>;

    pub(super) fn create_volumes(names: &[VolumeName], _: &VolumePost) -> Touched {
        touched_volumes(names)
    }

    pub(super) fn create_volumes_batch(items: &[VolumeBatchPost]) -> Touched {
        let names: Vec<&str> = items.iter().map(|i| i.name.as_str()).collect();
        touched_volumes(&names)
    }

    pub(super) fn patch_volumes(names: &[VolumeName], patch: &VolumePatch, _: bool) -> Touched {
        touched_volumes(&with_rename(strs(names), patch.name.as_ref()))
    }

    pub(super) fn eradicate_volumes(names: &[VolumeName]) -> Touched {
        touched_volumes(names)
    }

    pub(super) fn set_tags(kind: TagResource, tags: &[Tag]) -> Touched {
        tags.iter()
            .filter_map(|t| t.resource.name.as_deref())
            .map(|n| (Listing::Tags(kind), key(NAME, n)))
            .collect()
    }

    pub(super) fn delete_tags(
        kind: TagResource,
        resource_names: &[String],
        _: &[String],
        _: &[String],
    ) -> Touched {
        resource_names
            .iter()
            .map(|n| (Listing::Tags(kind), key(NAME, n)))
            .collect()
    }

    pub(super) fn create_hosts(names: &[HostName], _: &HostPost) -> Touched {
        touched_hosts(names)
    }

    pub(super) fn patch_hosts(names: &[HostName], patch: &HostPatch) -> Touched {
        touched_hosts(&with_rename(strs(names), patch.name.as_ref()))
    }

    pub(super) fn delete_hosts(names: &[HostName]) -> Touched {
        touched_hosts(names)
    }

    pub(super) fn create_host_groups(names: &[HostGroupName], _: &HostGroupPost) -> Touched {
        touched_groups(names)
    }

    pub(super) fn delete_host_groups(names: &[HostGroupName]) -> Touched {
        touched_groups(names)
    }

    pub(super) fn add_host_group_members(group: &HostGroupName, hosts: &[HostName]) -> Touched {
        let mut touched = touched_groups(&[group]);
        touched.extend(touched_hosts(hosts));
        touched
    }

    pub(super) fn remove_host_group_members(group: &HostGroupName, hosts: &[HostName]) -> Touched {
        add_host_group_members(group, hosts)
    }

    pub(super) fn create_connections(
        target: &ConnectionTarget,
        volumes: &[VolumeName],
        _: Option<u32>,
    ) -> Touched {
        touched_connections(target, volumes)
    }

    pub(super) fn delete_connections(target: &ConnectionTarget, volumes: &[VolumeName]) -> Touched {
        touched_connections(target, volumes)
    }

    pub(super) fn create_pods(names: &[PodName], _: &PodPost) -> Touched {
        touched_pods(names, false)
    }

    pub(super) fn patch_pods(
        names: &[PodName],
        patch: &PodPatch,
        destroy_contents: bool,
    ) -> Touched {
        let contents = destroy_contents || patch.destroyed.is_some() || patch.name.is_some();
        touched_pods(&with_rename(strs(names), patch.name.as_ref()), contents)
    }

    pub(super) fn eradicate_pods(names: &[PodName], _: bool) -> Touched {
        touched_pods(names, true)
    }

    pub(super) fn create_api_token(admin: &str, _: Option<Duration>) -> Touched {
        vec![(Listing::Tokens, key(NAME, admin))]
    }

    pub(super) fn delete_api_token(admin: &str) -> Touched {
        vec![(Listing::Tokens, key(NAME, admin))]
    }

    /// No listing holds realms.
    pub(super) fn create_realms(_: &[RealmName], _: &RealmPost) -> Touched {
        Vec::new()
    }

    pub(super) fn patch_realms(_: &[RealmName], _: &RealmPatch, _: bool) -> Touched {
        touched_everything()
    }

    pub(super) fn eradicate_realms(_: &[RealmName], _: bool) -> Touched {
        touched_everything()
    }

    /// No listing holds policies.
    pub(super) fn create_management_access_policies(
        _: &[String],
        _: &ManagementAccessPolicyPost,
    ) -> Touched {
        Vec::new()
    }

    pub(super) fn delete_management_access_policies(_: &[String]) -> Touched {
        Vec::new()
    }

    pub(super) fn create_admins(names: &[String], _: &AdminPost) -> Touched {
        touched_admins(names)
    }

    pub(super) fn delete_admins(names: &[String]) -> Touched {
        touched_admins(names)
    }
}

/// A connection write: the volumes' rows and the target's; a host group's rows
/// are also its members', whose names the write does not know.
fn touched_connections(target: &ConnectionTarget, volumes: &[VolumeName]) -> Vec<(Listing, Key)> {
    let mut t: Vec<(Listing, Key)> = volumes
        .iter()
        .flat_map(|v| {
            [
                (Listing::Connections, key(VOLUME, v.as_str())),
                (Listing::Volumes, key(NAME, v.as_str())),
            ]
        })
        .collect();
    match target {
        ConnectionTarget::Host(h) => t.push((Listing::Connections, key(HOST, h.as_str()))),
        ConnectionTarget::HostGroup(g) => {
            t.push((Listing::Connections, key(GROUP, g.as_str())));
            t.push((Listing::Connections, key(HOST, EVERY)));
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_method_reaches_the_array_once_when_nothing_is_listed() {
        let fresh = flasharray::forwarding::unforwarded(|inner| {
            ObservationCache::new(inner, DEFAULT_LISTING_INTERVAL).fresh()
        })
        .await;
        assert!(fresh.is_empty(), "the fresh view: {fresh:?}");
        let off = flasharray::forwarding::unforwarded(|inner| {
            ObservationCache::new(inner, Duration::ZERO).cached()
        })
        .await;
        assert!(off.is_empty(), "a zero interval: {off:?}");
    }

    /// A merge replaces the read names' items (a name gone from the array leaves
    /// none), shares every other item with the old listing, and its index finds
    /// each name's items at their new places.
    #[test]
    fn a_merge_replaces_the_read_names_and_shares_the_rest() {
        let tag = |name: &str, k: &str| Tag::new(name, TAG_NAMESPACE, k, "v");
        let old = Listed::new(vec![
            tag("a", "1"),
            tag("B", "1"),
            tag("c", "1"),
            tag("b", "2"),
            tag("d", "1"),
        ]);
        let read: HashSet<Key> = [key(NAME, "b"), key(NAME, "d")].into();
        let merged = old.merged(&read, vec![tag("b", "3")]);
        let names = |want: &Want| -> Vec<(Option<String>, String)> {
            (merged.pick(want).into_iter())
                .map(|t| (t.resource.name, t.key))
                .collect()
        };
        assert_eq!(
            names(&Want::All),
            [("a", "1"), ("c", "1"), ("b", "3")].map(|(n, k)| (Some(n.into()), k.into()))
        );
        assert_eq!(
            names(&Want::Keys(keys(NAME, &["C", "b", "d"]))),
            [("c", "1"), ("b", "3")].map(|(n, k)| (Some(n.into()), k.into()))
        );
        assert!(Arc::ptr_eq(&old.items[0], &merged.items[0]));
        assert!(Arc::ptr_eq(&old.items[2], &merged.items[1]));
        assert_eq!(merged.by_key.len(), 3, "no key is left for d");
    }

    #[test]
    fn only_the_lookups_membership_filter_is_answered_from_a_listing() {
        let names = |f: &str| filter_names(f, NAME);
        assert_eq!(
            names("name=('a','p::b')"),
            Some(vec!["a".into(), "p::b".into()])
        );
        assert_eq!(names("name=('a')"), Some(vec!["a".into()]));
        assert_eq!(names("name='a'"), None);
        assert_eq!(names("name=('a') and destroyed=false"), None);
        assert_eq!(names("name=('a'b')"), None);
        assert_eq!(names("name=('')"), None);
        let f = flasharray::membership_filter(VOLUME, &["v1".into(), "V2".into()]);
        assert!(matches!(
            want_of_connections(&ConnectionParams { filter: Some(f), ..Default::default() }),
            Some(Want::Keys(k)) if k == vec![key(VOLUME, "v1"), key(VOLUME, "v2")]
        ));
        let sorted = ListParams {
            sort: vec!["name".into()],
            ..ListParams::all()
        };
        assert!(
            want_of_list(&sorted).is_none(),
            "anything else goes to the array"
        );
        assert!(matches!(want_of_list(&ListParams::all()), Some(Want::All)));
    }
}
