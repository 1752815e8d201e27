//! `wait`: polls GET_BROKER_CLUSTER_INFO until a broker group is listed (or gone) on every
//! NameServer of `-n`, for scripts. A NameServer that does not answer satisfies neither.

use std::time::{Duration, Instant};

use namesrv_protocol::RequestCode;

use crate::cli::WaitArgs;
use crate::escape::printable;
use crate::fleet::{body, success, CmdError};
use crate::output::{print_error, Ctx, Exit};
use crate::wire::{self, ClusterInfo};

/// Time between two polls.
const POLL: Duration = Duration::from_millis(200);

/// Runs `wait`: exit 0 once the condition holds everywhere, 1 when the timeout passes first.
pub async fn run(ctx: &Ctx, args: &WaitArgs) -> Result<Exit, CmdError> {
    let deadline = Instant::now() + Duration::from_secs_f64(args.timeout_secs.max(0.0));
    let cmd = wire::request(RequestCode::GetBrokerClusterInfo, &[]);
    loop {
        let mut pending = Vec::new();
        for (addr, answer) in ctx.fleet.each(&cmd).await {
            let listed = answer
                .and_then(|a| success(&addr, a))
                .and_then(|a| body::<ClusterInfo>(&addr, &a))
                .map(|info| info.broker_addr_table.contains_key(&args.broker));
            match listed {
                Ok(listed) if listed != args.gone => {}
                Ok(_) => pending.push(addr),
                Err(e) => pending.push(e.to_string()),
            }
        }
        let state = if args.gone { "gone" } else { "listed" };
        if pending.is_empty() {
            if !ctx.json {
                println!(
                    "broker group {} {state} on {}",
                    printable(&args.broker),
                    printable(&ctx.fleet.addrs.join(", "))
                );
            }
            return Ok(Exit::Ok);
        }
        if Instant::now() + POLL > deadline {
            print_error(&format!(
                "broker group {} not {state} within {} s on: {}",
                args.broker,
                args.timeout_secs,
                pending.join("; ")
            ));
            return Ok(Exit::Failed);
        }
        tokio::time::sleep(POLL).await;
    }
}
