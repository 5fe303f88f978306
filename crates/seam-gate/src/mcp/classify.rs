//! What each upstream tool is, as policy: which tools read (their result taints the turn),
//! which reach the world (egress: refused in a tainted turn, except to destinations endorsed
//! for it when the config declares the tool's `destinations`), which change state (the call
//! decides `ask`). Data and rules only, no I/O: [`upstream`](super::upstream) is the mechanism
//! that builds the governed tool from the [`ToolClass`] this module decides.
//!
//! Where a tool's class comes from, in order:
//!
//! 1. `[mcp.upstream.tools.NAME] effects = [...]` in the gate's config: the operator's word,
//!    exactly (it can say less than the server's annotations, or more). Names are compared
//!    exactly, so an entry for `Send_Money` says nothing of `send_money`.
//! 2. Otherwise the server's defaults, made stricter by its MCP tool annotations. An
//!    annotation is the server's own claim and is not trusted to loosen anything: it can add
//!    an effect, never remove one. `readOnlyHint: false` or `destructiveHint: true` add
//!    `change`; `openWorldHint: true` adds `egress`. `readOnlyHint: true` or
//!    `openWorldHint: false` remove nothing. The server's defaults are: the result taints
//!    (it is content from outside), egress when the server is declared `egress = true`, no
//!    change.
//!
//! The decision of a call: a tool's own `capability` when the config gives one; otherwise the
//! server's `capability`, raised to `ask` for a tool that changes state. The policy's
//! capability decision applies on top (the strictest wins), and `ask` goes to the consent
//! desk like any governed call: with nobody to ask, it is refused.

use std::collections::BTreeSet;

use seam_policy::Decision;
use serde::{Deserialize, Serialize};

use super::config::UpstreamConfig;

/// One effect a tool can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Effect {
    /// Its result is the owner's data or content from outside: it taints the turn.
    Read,
    /// It reaches the world (sends, posts, pays, fetches): refused in a tainted turn, unless
    /// the config declares its `destinations` and each one in the call is endorsed for the turn.
    Egress,
    /// It changes state: a call decides `ask`.
    Change,
}

/// The names of the effects in the config file, in [`Effect`]'s order.
pub const EFFECT_NAMES: &[&str] = &["read", "egress", "change"];

impl Effect {
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Read => "read",
            Effect::Egress => "egress",
            Effect::Change => "change",
        }
    }

    pub fn parse(word: &str) -> Option<Effect> {
        match word {
            "read" => Some(Effect::Read),
            "egress" => Some(Effect::Egress),
            "change" => Some(Effect::Change),
            _ => None,
        }
    }
}

/// What an MCP server says of a tool in its `annotations`: hints, not facts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolHints {
    #[serde(
        rename = "readOnlyHint",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub read_only: Option<bool>,
    #[serde(
        rename = "destructiveHint",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub destructive: Option<bool>,
    #[serde(
        rename = "openWorldHint",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub open_world: Option<bool>,
}

impl ToolHints {
    /// None when the server said none of the three.
    pub fn nonempty(self) -> Option<ToolHints> {
        (self != ToolHints::default()).then_some(self)
    }
}

/// Who decided a tool's effects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassSource {
    /// `effects` in the tool's config entry.
    Config,
    /// The server's defaults, made stricter by its annotations.
    ServerAndHints,
}

/// A tool's class: its effects and the decision of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolClass {
    pub effects: BTreeSet<Effect>,
    pub decision: Decision,
    pub source: ClassSource,
}

impl ToolClass {
    pub fn reads(&self) -> bool {
        self.effects.contains(&Effect::Read)
    }
    pub fn egress(&self) -> bool {
        self.effects.contains(&Effect::Egress)
    }
    pub fn changes(&self) -> bool {
        self.effects.contains(&Effect::Change)
    }

    /// `read, egress` (or `none`), for reports.
    pub fn effects_text(&self) -> String {
        if self.effects.is_empty() {
            return "none".to_owned();
        }
        self.effects
            .iter()
            .map(|e| e.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The class of `tool` (the upstream's own name for it) on the server `cfg`, given the
/// annotations the server showed for it.
pub fn classify(cfg: &UpstreamConfig, tool: &str, hints: Option<&ToolHints>) -> ToolClass {
    let entry = cfg.tools.get(tool);
    let (effects, source) = match entry.and_then(|t| t.effects.clone()) {
        Some(effects) => (effects, ClassSource::Config),
        None => {
            let mut effects = BTreeSet::from([Effect::Read]);
            if cfg.egress {
                effects.insert(Effect::Egress);
            }
            if let Some(h) = hints {
                if h.read_only == Some(false) || h.destructive == Some(true) {
                    effects.insert(Effect::Change);
                }
                if h.open_world == Some(true) {
                    effects.insert(Effect::Egress);
                }
            }
            (effects, ClassSource::ServerAndHints)
        }
    };
    let decision = match entry.and_then(|t| t.capability) {
        Some(d) => d,
        None if effects.contains(&Effect::Change) => cfg.capability.max(Decision::Ask),
        None => cfg.capability,
    };
    ToolClass {
        effects,
        decision,
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GateConfig;
    use std::path::Path;

    fn upstream(text: &str) -> UpstreamConfig {
        let head = "[[mcp.upstream]]\nname = \"bank\"\ncommand = \"x\"\n";
        GateConfig::from_toml_str(&format!("{head}{text}"), Path::new("config.toml"))
            .unwrap()
            .mcp
            .upstreams
            .remove(0)
    }

    fn effects(c: &ToolClass) -> Vec<Effect> {
        c.effects.iter().copied().collect()
    }

    const LIES: ToolHints = ToolHints {
        read_only: Some(true),
        destructive: Some(false),
        open_world: Some(false),
    };

    #[test]
    fn the_config_says_exactly_what_a_tool_is() {
        let u = upstream(
            "egress = true\n[mcp.upstream.tools]\n\
             get_balance = { effects = [\"read\"] }\n\
             send_money = { effects = [\"egress\", \"change\"] }\n\
             get_day = { effects = [] }\n\
             pay_rent = { effects = [\"egress\", \"change\"], capability = \"allow\" }\n",
        );
        let c = classify(&u, "get_balance", None);
        assert_eq!(effects(&c), [Effect::Read]);
        assert_eq!(c.decision, Decision::Allow);
        assert_eq!(c.source, ClassSource::Config);
        let c = classify(&u, "send_money", Some(&LIES));
        assert_eq!(effects(&c), [Effect::Egress, Effect::Change]);
        assert_eq!(c.decision, Decision::Ask);
        assert!(!c.reads(), "a result the config says is no read tainted");
        assert_eq!(effects(&classify(&u, "get_day", None)), []);
        // the tool's own capability is the operator's word for it
        assert_eq!(classify(&u, "pay_rent", None).decision, Decision::Allow);
    }

    #[test]
    fn a_tool_the_config_does_not_name_gets_the_servers_class() {
        let u = upstream("egress = true\ncapability = \"ask\"\n");
        let c = classify(&u, "anything", None);
        assert_eq!(effects(&c), [Effect::Read, Effect::Egress]);
        assert_eq!(c.decision, Decision::Ask);
        assert_eq!(c.source, ClassSource::ServerAndHints);
        let quiet = upstream("egress = false\n");
        let c = classify(&quiet, "anything", None);
        assert_eq!(effects(&c), [Effect::Read]);
        assert_eq!(c.decision, Decision::Allow);
    }

    #[test]
    fn annotations_add_effects_and_never_remove_one() {
        let egress = upstream("egress = true\n");
        // a server that claims its tool is a harmless local read stays what its config says
        let c = classify(&egress, "send_money", Some(&LIES));
        assert_eq!(effects(&c), [Effect::Read, Effect::Egress]);
        assert_eq!(c.decision, Decision::Allow);
        let quiet = upstream("egress = false\n");
        let writes = ToolHints {
            read_only: Some(false),
            destructive: None,
            open_world: Some(true),
        };
        let c = classify(&quiet, "post", Some(&writes));
        assert_eq!(effects(&c), [Effect::Read, Effect::Egress, Effect::Change]);
        assert_eq!(c.decision, Decision::Ask);
        // contradictory hints: the stricter reading
        let both = ToolHints {
            read_only: Some(true),
            destructive: Some(true),
            open_world: None,
        };
        assert!(classify(&quiet, "t", Some(&both)).changes());
        // a server-wide deny is not softened by a change's ask
        let denied = upstream("egress = false\ncapability = \"deny\"\n");
        assert_eq!(
            classify(&denied, "t", Some(&writes)).decision,
            Decision::Deny
        );
    }

    #[test]
    fn names_are_compared_exactly() {
        let u = upstream(
            "egress = true\n[mcp.upstream.tools]\nGet_Balance = { effects = [] }\n\
             \"get_balance \" = { effects = [] }\n",
        );
        let c = classify(&u, "get_balance", None);
        assert_eq!(c.source, ClassSource::ServerAndHints);
        assert_eq!(effects(&c), [Effect::Read, Effect::Egress]);
    }
}
