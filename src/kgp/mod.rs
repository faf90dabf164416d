//! Agents of the Kalah Game Protocol (KGP, the protocol of the go-kgp tournament server and
//! of the pykgp, jkgp and kgpc client libraries) as kalaha engines, unchanged: kalaha acts
//! as their KGP server on the loopback interface (see `docs/kgp.md`).
//!
//! - [`command`]: KGP command lines, parsed and printed (pure);
//! - [`agent`]: [`KgpEngine`], a supervised agent process and its connection, one side of
//!   the referee's games;
//! - [`check`]: `kalaha check --protocol kgp`, the compliance steps for an agent.

pub(crate) mod agent;
pub(crate) mod check;
pub(crate) mod command;
mod error;
pub(crate) mod peer;

pub use agent::{AgentInfo, KgpEngine, Launch, agent_command, state_time};
pub use check::check_agent;
pub use command::{Arg, Board, Command, ParseError, VERSION, board_of};
pub use error::KgpError;
