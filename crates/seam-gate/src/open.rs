//! The gate composed in one place: [`Gate::open`].
//!
//! "Every value the keeper holds is removed from every output" is true of a toolbox only if
//! whoever built it handed the keeper's values to its scrubber. Every process that runs governed
//! tools (`seam gate`, `seam invoke`, `seam mcp`, and the listings of the tools) opens its gate
//! here, so that wiring is written once: the keeper, then the scrubber with every value it
//! holds, then the tools (web.search's key resolved in the keeper, web.fetch's allow-list from
//! the config), then the upstream MCP servers the config declares, their secrets resolved in
//! the same keeper.

use std::path::Path;
use std::sync::Arc;

use seam_keeper::{Keeper, KeeperError};
use seam_policy::Policy;
use seam_scrub::{ScrubError, Scrubber};

use crate::config::GateConfig;
use crate::mcp::UpstreamReport;
use crate::tools::ToolboxConfig;
use seam_toolbox::LedgerHook;
use seam_toolbox::{GateError, Toolbox};

/// An opened gate: its toolbox, and what became of each upstream MCP server.
#[derive(Debug)]
pub struct Gate {
    /// The built-in tools and the upstream servers' governed tools, behind one scrubber
    /// that knows every value of the keeper.
    pub toolbox: Toolbox,
    /// One report per configured upstream (started or not, each tool's state), for the
    /// operator to be told: this crate does not print.
    pub upstreams: Vec<UpstreamReport>,
}

/// Why a gate could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("opening the keeper")]
    Keeper(#[source] KeeperError),
    #[error("handing the keeper's values to the scrubber")]
    Scrubber(#[source] ScrubError),
    #[error("building the toolbox")]
    Toolbox(#[source] GateError),
}

impl Gate {
    /// Opens the gate of `seam_home` under `policy` and `config`: the keeper's values go to the
    /// scrubber, its keys to the tools and upstreams that name them. Calls are recorded by
    /// `ledger`; `files_read_max_bytes` bounds what `files.read` returns in one call.
    pub fn open(
        seam_home: &Path,
        policy: Arc<Policy>,
        config: &GateConfig,
        ledger: Arc<dyn LedgerHook>,
        files_read_max_bytes: u64,
    ) -> Result<Gate, OpenError> {
        let keeper = Keeper::open(seam_home).map_err(OpenError::Keeper)?;
        let scrubber =
            Scrubber::with_known_values(keeper.values().cloned()).map_err(OpenError::Scrubber)?;
        let tools_config = ToolboxConfig {
            files_read_max_bytes,
            web: config.web_search_setup(&keeper),
            fetch: config.web_fetch_setup(),
        };
        let mut tools = crate::tools::builtin(&tools_config, &policy);
        let upstreams = crate::mcp::start_upstreams(&config.mcp, seam_home, &keeper);
        tools.extend(upstreams.tools);
        let toolbox = Toolbox::with_tools(policy, Arc::new(scrubber), ledger, tools)
            .map_err(OpenError::Toolbox)?;
        Ok(Gate {
            toolbox,
            upstreams: upstreams.reports,
        })
    }
}
