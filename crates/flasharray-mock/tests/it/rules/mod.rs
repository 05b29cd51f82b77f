//! The rules that need the mock itself (its clock, faults, statistics or settings),
//! one module per resource; the rules any array must follow are in `conformance`.

mod array;
mod faults;
mod pods;
mod realms;
mod tags;
mod tokens;
mod volumes;
