//! The bound on distinct topics in the route tables, all brokers together (`max_topics_total`):
//! a registration (or REGISTER_TOPIC_IN_NAMESRV) that would add topics past it is refused
//! whole, before anything of it is applied, so many brokers with distinct topics cannot grow
//! the tables without bound.

use thiserror::Error;

use super::binding::BoundElsewhere;
use super::register::Registration;
use super::tables::RouteTables;

/// Why a registration was refused.
#[derive(Debug, Error)]
pub enum RegisterRefused {
    /// The broker is live under another access key.
    #[error(transparent)]
    BoundElsewhere(#[from] BoundElsewhere),
    /// It would take the route tables past `max_topics_total` distinct topics.
    #[error("too many topics in the route tables: {topics} with this registration, max {max} (max_topics_total)")]
    TooManyTopics { topics: usize, max: usize },
}

impl RouteTables {
    /// Refuses a registration that would take the tables past `max_topics_total` distinct
    /// topics. Only topics new to the tables count, so brokers re-registering what they hold
    /// are never refused; checking costs nothing until the tables are near the bound.
    pub fn check_topic_room(&self, reg: &Registration) -> Result<(), RegisterRefused> {
        let max = self.options().max_topics_total;
        let (held, _, _) = self.sizes();
        if held.saturating_add(reg.body.topics.len()) <= max {
            return Ok(());
        }
        let new = reg.body.topics.iter().filter(|t| self.queues(t.name).is_none()).count();
        match held + new {
            topics if topics > max && new > 0 => Err(RegisterRefused::TooManyTopics { topics, max }),
            _ => Ok(()),
        }
    }

    /// Refuses REGISTER_TOPIC_IN_NAMESRV of a topic new to tables already at `max_topics_total`.
    pub fn check_new_topic(&self, topic: &str) -> Result<(), RegisterRefused> {
        let (held, max) = (self.sizes().0, self.options().max_topics_total);
        if held >= max && self.queues(topic).is_none() {
            return Err(RegisterRefused::TooManyTopics { topics: held + 1, max });
        }
        Ok(())
    }
}
