//! The bounds on the route tables, all brokers together: distinct topics (`max_topics_total`)
//! and queue entries (`max_queue_entries_total`: the same topics under many broker names count
//! each time, as they cost). A registration (or REGISTER_TOPIC_IN_NAMESRV) that would add past
//! either is refused whole, before anything of it is applied; what is already held never counts
//! against re-registering it.

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
    /// It would take the route tables past `max_queue_entries_total` queue entries.
    #[error(
        "too many queue entries in the route tables: {entries} with this registration, max {max} (max_queue_entries_total)"
    )]
    TooManyQueueEntries { entries: usize, max: usize },
}

impl RouteTables {
    /// Refuses a registration that would take the tables past `max_topics_total` distinct
    /// topics. Only topics new to the tables count, so brokers re-registering what they hold
    /// are never refused; checking costs nothing until the tables are near the bound.
    pub fn check_topic_room(&self, reg: &Registration) -> Result<(), RegisterRefused> {
        let topics = &reg.body.topics;
        let max = self.options().max_topics_total;
        let (held, _, _) = self.sizes();
        if held.saturating_add(topics.len()) > max {
            let new = topics.iter().filter(|t| self.queues(t.name).is_none()).count();
            if held + new > max && new > 0 {
                return Err(RegisterRefused::TooManyTopics { topics: held + new, max });
            }
        }
        let (max, held) = (self.options().max_queue_entries_total, self.queue_entries());
        if held.saturating_add(topics.len()) > max {
            let broker = reg.broker_name.as_str();
            let new = topics.iter().filter(|t| !self.queues(t.name).is_some_and(|q| q.contains(broker))).count();
            if held + new > max && new > 0 {
                return Err(RegisterRefused::TooManyQueueEntries { entries: held + new, max });
            }
        }
        Ok(())
    }

    /// Refuses REGISTER_TOPIC_IN_NAMESRV of a topic new to tables already at
    /// `max_topics_total`, or queue data for `brokers` new to tables at
    /// `max_queue_entries_total`.
    pub fn check_new_topic<'b>(
        &self,
        topic: &str,
        brokers: impl Iterator<Item = &'b str>,
    ) -> Result<(), RegisterRefused> {
        let (held, max) = (self.sizes().0, self.options().max_topics_total);
        let queues = self.queues(topic);
        if held >= max && queues.is_none() {
            return Err(RegisterRefused::TooManyTopics { topics: held + 1, max });
        }
        let (held, max) = (self.queue_entries(), self.options().max_queue_entries_total);
        let new = brokers.filter(|b| !queues.is_some_and(|q| q.contains(b))).count();
        if new > 0 && held + new > max {
            return Err(RegisterRefused::TooManyQueueEntries { entries: held + new, max });
        }
        Ok(())
    }
}
