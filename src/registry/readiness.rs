//! Whether route queries are served yet (Java's `needWaitForService`): a gate the registry
//! decides once at start from the routing settings, and opens for good at its deadline or as
//! soon as a warm start has loaded routes. Nothing closes it again: runtime configuration
//! updates and reloads change the settings, never this state.

use std::time::Duration;

use tokio::time::Instant;

use crate::settings::RoutingSettings;

/// The longest readiness wait honoured; a larger `wait_seconds_for_service` waits this long.
const MAX_WAIT: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// The readiness gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    /// Route queries answer "not ready" until then.
    Waiting {
        /// When the gate opens.
        until: Instant,
    },
    /// Route queries are served.
    Ready,
}

impl Readiness {
    /// The gate of a registry started at `started` with `routing`.
    pub fn at_start(routing: &RoutingSettings, started: Instant) -> Self {
        if !routing.need_wait_for_service {
            return Readiness::Ready;
        }
        let wait = Duration::from_secs(routing.wait_seconds_for_service).min(MAX_WAIT);
        Readiness::Waiting { until: started + wait }
    }

    /// Opens the gate for good (a warm start loaded routes).
    pub fn open(&mut self) {
        *self = Readiness::Ready;
    }

    /// How long route queries still wait at `now`; `None` once ready (the gate stays open once
    /// its deadline has passed).
    pub fn left(&mut self, now: Instant) -> Option<Duration> {
        match *self {
            Readiness::Ready => None,
            Readiness::Waiting { until } if now >= until => {
                self.open();
                None
            }
            Readiness::Waiting { until } => Some(until - now),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_opens_at_its_deadline_or_when_told_and_never_closes_again() {
        let start = Instant::now();
        let waiting =
            RoutingSettings { need_wait_for_service: true, wait_seconds_for_service: 45, ..Default::default() };
        let mut gate = Readiness::at_start(&waiting, start);
        assert_eq!(gate.left(start + Duration::from_secs(5)), Some(Duration::from_secs(40)));
        assert_eq!(gate.left(start + Duration::from_secs(45)), None);
        assert_eq!(gate.left(start), None, "open for good");
        let mut told = Readiness::at_start(&waiting, start);
        told.open();
        assert_eq!(told.left(start), None);
        let off = RoutingSettings { need_wait_for_service: false, ..waiting.clone() };
        assert_eq!(Readiness::at_start(&off, start), Readiness::Ready);
        let forever = RoutingSettings { wait_seconds_for_service: u64::MAX, ..waiting };
        assert!(Readiness::at_start(&forever, start).left(start).is_some(), "no overflow");
    }
}
