//! `seam policy show|check`.

use seam_policy::{Access, FileAccess, PathAdmission};

use crate::cli::{AccessArg, PolicyCommand};
use crate::context::Context;
use crate::exit::Exit;
use crate::output;

pub fn run(ctx: &Context, cmd: PolicyCommand) -> anyhow::Result<Exit> {
    match cmd {
        PolicyCommand::Show { json } => {
            let enforced = ctx.policy.enforced();
            if json {
                output::json(&enforced);
            } else {
                output::text_ln(&enforced.render_text());
            }
            Ok(Exit::Ok)
        }
        PolicyCommand::Check { access, path } => {
            let access = match access {
                AccessArg::Read => Access::Owner(FileAccess::Read),
                AccessArg::Write => Access::Owner(FileAccess::Write),
            };
            let admission = PathAdmission::new(ctx.policy.clone());
            match admission.admitted_path(access, &path) {
                Ok(admitted) => {
                    output::line(&admitted.real.to_string_lossy());
                    if admitted.decision == seam_policy::Decision::Ask {
                        output::notice(
                            "admitted, but the policy says \"ask\" for filesystem.write: \
                             the change waits for the operator's consent",
                        );
                    }
                    Ok(Exit::Ok)
                }
                Err(refusal) => {
                    let message = seam_scrub::Scrubber::new().scrub(&refusal.message).text;
                    output::line(&format!("refused ({}): {}", refusal.code, message));
                    Ok(Exit::Refused)
                }
            }
        }
    }
}
