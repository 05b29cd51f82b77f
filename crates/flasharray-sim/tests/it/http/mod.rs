//! The simulator over real HTTPS, one module per endpoint family: raw requests with
//! reqwest (exact statuses, bodies and headers), and the typed `RestArray` client.

mod client;
mod faults;
mod hostile;
mod hosts;
mod limits;
mod paging;
mod realms;
mod replication;
mod sessions;
mod state_file;
mod versions;
mod volumes;
mod wire;
