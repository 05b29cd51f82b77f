//! `MockArrayBuilder` and `MockArray::new`: the settings a new [`MockArray`] starts from (name, version,
//! capacity, eradication delay, admins, clock, seed), and the initial state built from
//! them.

use std::time::Duration;

use flasharray::models::VolumePost;
use flasharray::size::{GIB, TIB};
use flasharray::{Size, VolumeName};

use crate::array::MockArray;
use crate::clock::MockClock;
use crate::faults::Faults;
use crate::seed::Seed;
use crate::state::{ArrayRec, Ctx, DestroyConnected, State};

/// Default eradication delay of a FlashArray: 24 hours.
pub const DEFAULT_ERADICATION_DELAY: Duration = Duration::from_secs(24 * 3600);

/// Usable capacity of a default mock array, in bytes.
pub const DEFAULT_CAPACITY: u64 = 100 * TIB;

/// The built-in admin every FlashArray has.
pub const DEFAULT_ADMIN: &str = crate::state::BUILTIN_ADMIN;

impl MockArray {
    /// An array named `pxfa-sim`, Purity 6.7.4, 100 TiB, 24 h eradication delay,
    /// admin `pureuser`, system clock.
    pub fn new() -> MockArray {
        MockArray::builder().build()
    }

    /// A builder for other settings.
    pub fn builder() -> MockArrayBuilder {
        MockArrayBuilder::default()
    }
}

impl Default for MockArray {
    fn default() -> Self {
        MockArray::new()
    }
}

/// Builds a [`MockArray`] with non-default settings.
#[derive(Debug, Clone)]
pub struct MockArrayBuilder {
    name: String,
    version: String,
    capacity: Size,
    eradication_delay: Duration,
    admins: Vec<String>,
    clock: Option<MockClock>,
    seed_volumes: usize,
    seed: Seed,
    destroy_connected: DestroyConnected,
    rest_version: Option<u32>,
}

impl Default for MockArrayBuilder {
    fn default() -> Self {
        MockArrayBuilder {
            name: "pxfa-sim".into(),
            version: "6.7.4".into(),
            capacity: Size::bytes(DEFAULT_CAPACITY),
            eradication_delay: DEFAULT_ERADICATION_DELAY,
            admins: Vec::new(),
            clock: None,
            seed_volumes: 0,
            seed: Seed::Empty,
            destroy_connected: DestroyConnected::default(),
            rest_version: None,
        }
    }
}

impl MockArrayBuilder {
    /// Array name (default `pxfa-sim`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The newest REST version the array answers as, `2.minor` (see
    /// [`MockArray::rest_version`]; parse a `2.N` text with
    /// `flasharray_sim::parse_rest_version`). Default: the simulator's newest.
    pub fn rest_version(mut self, minor: u32) -> Self {
        self.rest_version = Some(minor);
        self
    }

    /// Purity version reported by `GET /arrays` (default `6.7.4`).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// Usable capacity (default 100 TiB).
    pub fn capacity(mut self, capacity: Size) -> Self {
        self.capacity = capacity;
        self
    }

    /// Delay between destroy and automatic eradication (default 24 h).
    pub fn eradication_delay(mut self, d: Duration) -> Self {
        self.eradication_delay = d;
        self
    }

    /// An admin user that may own an API token; repeatable. `pureuser` always
    /// exists, as on every FlashArray.
    pub fn admin(mut self, name: impl Into<String>) -> Self {
        self.admins.push(name.into());
        self
    }

    /// The clock (default: the system clock).
    pub fn clock(mut self, clock: MockClock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Starts with `n` volumes `seed-vol-00001`… of 1 GiB (benchmarks).
    pub fn seed_volumes(mut self, n: usize) -> Self {
        self.seed_volumes = n;
        self
    }

    /// What the array starts with (default [`Seed::Empty`]). A brownfield seed
    /// replaces the array's name and capacity with its own and turns SafeMode on
    /// when it says so.
    pub fn seed(mut self, seed: Seed) -> Self {
        self.seed = seed;
        self
    }

    /// What destroying a connected volume does (default: refuse).
    pub fn destroy_connected(mut self, policy: DestroyConnected) -> Self {
        self.destroy_connected = policy;
        self
    }

    /// The array: the built-in `pureuser` plus the builder's admins, seeded as asked, on
    /// the system clock unless another was set.
    pub fn build(self) -> MockArray {
        let clock = self.clock.unwrap_or_else(MockClock::system);
        // Every FlashArray has the built-in `pureuser`; builder admins come on top.
        let mut admins = vec![DEFAULT_ADMIN.to_string()];
        admins.extend(self.admins);
        let (name, capacity) = match &self.seed {
            Seed::Empty => (self.name, self.capacity),
            Seed::Brownfield(b) => (b.array_name.clone(), b.capacity),
        };
        let mut state = State::new(
            ArrayRec {
                id: uuid::Uuid::new_v4().to_string(),
                name,
                version: self.version,
                capacity: capacity.as_u64(),
                eradication_delay_ms: u64::try_from(self.eradication_delay.as_millis())
                    .unwrap_or(u64::MAX),
                eradication_disabled_delay_ms: None,
                destroy_connected: self.destroy_connected,
            },
            &admins,
        );
        if self.seed_volumes > 0 {
            let names: Vec<VolumeName> = (1..=self.seed_volumes)
                .filter_map(|i| VolumeName::new(format!("seed-vol-{i:05}")).ok())
                .collect();
            let ctx = Ctx {
                now: clock.now_ms(),
                safemode: false,
            };
            let body = VolumePost::default().with_provisioned(GIB);
            // Names and size are valid by construction; a failure here is a bug in
            // the rules, not an input problem.
            if let Err(e) = state.insert_volumes(ctx, &names, &body) {
                panic!("seeding {} volumes failed: {e}", names.len());
            }
        }
        let faults = Faults::default();
        if let Seed::Brownfield(b) = &self.seed {
            let ctx = Ctx {
                now: clock.now_ms(),
                safemode: false,
            };
            // The site is valid by construction; a refusal is a bug in the seed or
            // in the rules.
            if let Err(e) = state.seed_brownfield(ctx, b) {
                panic!("seeding the brownfield array failed: {e}");
            }
            faults.set_safemode(b.safemode);
        }
        MockArray::from_parts(state, clock, faults, self.rest_version)
    }
}
