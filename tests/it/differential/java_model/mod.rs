//! An executable reference model of the Java 5.x NameServer's routing rules
//! (`RouteInfoManager`, `DefaultRequestProcessor`, `ClientRequestProcessor`, `ZoneRouteRPCHook`,
//! `KVConfigManager`), plus the namesrv's deliberate differences, each a named [`Exceptions`] flag.
//!
//! Plain maps, no caching: every answer is computed from the tables when asked. The model knows
//! nothing of the wire; `answer::Answer` is what a request should get back.

pub mod admin;
pub mod answer;
#[cfg(test)]
mod examples;
pub mod pending;
pub mod queries;
pub mod register;
pub mod route;
pub mod tables;
pub mod unregister;

pub use answer::{Answer, Body};
pub use pending::Pending;
pub use tables::{ConnId, Dv, QueueData, Tables};

/// The NamesrvConfig switches a run is started with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Config {
    /// `supportActingMaster`: rewrite routes of master-less acting-master groups.
    pub support_acting_master: bool,
    /// `orderMessageEnable`: fill `orderTopicConf` in routes.
    pub order_message_enable: bool,
    /// `deleteTopicWithBrokerRegistration`: drop topics a registration no longer lists.
    pub delete_topic_with_broker_registration: bool,
}

/// Where the namesrv deliberately differs from Java; each flag switches one difference on.
/// With every flag off the model is plain Java.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exceptions {
    /// A closed connection removes every broker whose latest registration came over it; Java's
    /// `onChannelDestroy(Channel)` removes only the first live entry it finds.
    pub close_removes_all: bool,
    /// A live entry whose address no broker group lists any more is dropped; Java keeps it
    /// until it expires, and then `setupUnRegisterRequest` finds nothing and keeps it forever.
    pub orphan_live_dropped: bool,
    /// A registration at an address whose live registration belongs to another (cluster, name)
    /// first unregisters that one; Java lets both groups list the address.
    pub one_broker_per_address: bool,
    /// Removing the live entry at an address removes the address from every group listing it;
    /// Java's `unRegisterBroker` only edits the group the request names.
    pub complete_removal: bool,
    /// After `one_broker_per_address` replaced a broker, the server closes the replaced broker's
    /// connection if no live registration is left on it; never the connection the registration
    /// came over. Java never closes it.
    pub close_replaced_connection: bool,
}

impl Exceptions {
    /// Switches on the exception named `name` (its field name); false if there is none.
    pub fn set(&mut self, name: &str) -> bool {
        let flag = match name {
            "close_removes_all" => &mut self.close_removes_all,
            "orphan_live_dropped" => &mut self.orphan_live_dropped,
            "one_broker_per_address" => &mut self.one_broker_per_address,
            "complete_removal" => &mut self.complete_removal,
            "close_replaced_connection" => &mut self.close_replaced_connection,
            _ => return false,
        };
        *flag = true;
        true
    }

    /// No difference: plain Java.
    pub const NONE: Exceptions = Exceptions {
        close_removes_all: false,
        orphan_live_dropped: false,
        one_broker_per_address: false,
        complete_removal: false,
        close_replaced_connection: false,
    };

    /// Every deliberate difference, as the namesrv is specified.
    pub const ALL: Exceptions = Exceptions {
        close_removes_all: true,
        orphan_live_dropped: true,
        one_broker_per_address: true,
        complete_removal: true,
        close_replaced_connection: true,
    };
}

/// The model: tables, the run's configuration and the differences in force.
#[derive(Debug, Clone)]
pub struct Model {
    pub tables: Tables,
    pub config: Config,
    pub exceptions: Exceptions,
    /// Known server divergences the model follows for now.
    pub pending: Pending,
    /// Connections the server is expected to close by itself, oldest first (taken by the driver).
    pub closed_by_server: Vec<ConnId>,
}

impl Model {
    /// An empty NameServer with nothing pending.
    pub fn new(config: Config, exceptions: Exceptions) -> Self {
        Self { tables: Tables::default(), config, exceptions, pending: Pending::NONE, closed_by_server: Vec::new() }
    }
}
