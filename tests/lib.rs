//! The integration tests live in `it/`. The library holds what the tests share with the `soak`
//! and `fuzz` binaries: the random scenario generator and runner (`soak`), the input generators
//! and checks of the scenario reader's fuzzer (`fuzz`), and the panic capture both binaries use
//! (`capture`). The binaries run them at full size; `it/` runs them small.

pub mod capture;
pub mod fuzz;
pub mod soak;
