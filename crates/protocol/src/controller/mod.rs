//! The RocketMQ 5 controller protocol (Java's `controller` module as brokers and mqadmin speak
//! it): its request and response codes (here), typed request headers with Java's extFields key order
//! (`header`) and response headers (`response`), and its bodies — SyncStateSet, ElectMasterResponseBody, BrokerReplicasInfo and
//! the broker-name list (`body`). No state: the server's controller, the test broker and the
//! tools build on it alike.

pub mod body;
pub mod header;
pub mod response;

/// Declares [`ControllerRequestCode`]: variant, wire number and Java constant name.
macro_rules! controller_codes {
    ($($variant:ident = $number:literal => $name:literal,)+) => {
        /// The request codes of the controller listener: Java's `RequestCode` controller
        /// numbers, BROKER_HEARTBEAT, the role-change push the controller sends, and the
        /// private peer codes of the Raft transport (unused by RocketMQ 5.3.3).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ControllerRequestCode {
            $(#[doc = $name] $variant = $number,)+
        }

        impl ControllerRequestCode {
            /// Every code, in numeric order.
            pub const ALL: &'static [ControllerRequestCode] = &[$(Self::$variant,)+];

            /// Maps a wire number to a known controller code.
            pub fn from_i32(code: i32) -> Option<Self> {
                match code {
                    $($number => Some(Self::$variant),)+
                    _ => None,
                }
            }

            /// The Java constant name (ours for the peer codes), for logs.
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)+
                }
            }
        }
    };
}

controller_codes! {
    BrokerHeartbeat = 904 => "BROKER_HEARTBEAT",
    AlterSyncStateSet = 1001 => "CONTROLLER_ALTER_SYNC_STATE_SET",
    ElectMaster = 1002 => "CONTROLLER_ELECT_MASTER",
    RegisterBroker = 1003 => "CONTROLLER_REGISTER_BROKER",
    GetReplicaInfo = 1004 => "CONTROLLER_GET_REPLICA_INFO",
    GetMetadataInfo = 1005 => "CONTROLLER_GET_METADATA_INFO",
    GetSyncStateData = 1006 => "CONTROLLER_GET_SYNC_STATE_DATA",
    GetBrokerEpochCache = 1007 => "GET_BROKER_EPOCH_CACHE",
    NotifyBrokerRoleChanged = 1008 => "NOTIFY_BROKER_ROLE_CHANGED",
    UpdateControllerConfig = 1009 => "UPDATE_CONTROLLER_CONFIG",
    GetControllerConfig = 1010 => "GET_CONTROLLER_CONFIG",
    CleanBrokerData = 1011 => "CLEAN_BROKER_DATA",
    GetNextBrokerId = 1012 => "CONTROLLER_GET_NEXT_BROKER_ID",
    ApplyBrokerId = 1013 => "CONTROLLER_APPLY_BROKER_ID",
    RaftAppendEntries = 1901 => "RAFT_APPEND_ENTRIES",
    RaftVote = 1902 => "RAFT_VOTE",
    RaftInstallSnapshot = 1903 => "RAFT_INSTALL_SNAPSHOT",
}

impl ControllerRequestCode {
    /// Whether this is a private peer code of the Raft transport.
    pub fn is_peer(self) -> bool {
        (1901..=1909).contains(&(self as i32))
    }
}

/// The controller's response codes (Java `ResponseCode` 2000–2016), beside the general ones of
/// [`crate::ResponseCode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControllerResponseCode {
    /// CONTROLLER_FENCED_MASTER_EPOCH
    FencedMasterEpoch = 2000,
    /// CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH
    FencedSyncStateSetEpoch = 2001,
    /// CONTROLLER_INVALID_MASTER
    InvalidMaster = 2002,
    /// CONTROLLER_INVALID_REPLICAS
    InvalidReplicas = 2003,
    /// CONTROLLER_MASTER_NOT_AVAILABLE
    MasterNotAvailable = 2004,
    /// CONTROLLER_INVALID_REQUEST
    InvalidRequest = 2005,
    /// CONTROLLER_BROKER_NOT_ALIVE
    BrokerNotAlive = 2006,
    /// CONTROLLER_NOT_LEADER
    NotLeader = 2007,
    /// CONTROLLER_BROKER_METADATA_NOT_EXIST
    BrokerMetadataNotExist = 2008,
    /// CONTROLLER_INVALID_CLEAN_BROKER_METADATA
    InvalidCleanBrokerMetadata = 2009,
    /// CONTROLLER_BROKER_NEED_TO_BE_REGISTERED
    BrokerNeedToBeRegistered = 2010,
    /// CONTROLLER_MASTER_STILL_EXIST
    MasterStillExist = 2011,
    /// CONTROLLER_ELECT_MASTER_FAILED
    ElectMasterFailed = 2012,
    /// CONTROLLER_ALTER_SYNC_STATE_SET_FAILED
    AlterSyncStateSetFailed = 2013,
    /// CONTROLLER_BROKER_ID_INVALID
    BrokerIdInvalid = 2014,
    /// CONTROLLER_JRAFT_INTERNAL_ERROR (JRaft only; never sent here)
    JraftInternalError = 2015,
    /// CONTROLLER_BROKER_LIVE_INFO_NOT_EXISTS (JRaft only; never sent here)
    BrokerLiveInfoNotExists = 2016,
}

impl ControllerResponseCode {
    /// Every code, in numeric order.
    pub const ALL: [ControllerResponseCode; 17] = [
        Self::FencedMasterEpoch,
        Self::FencedSyncStateSetEpoch,
        Self::InvalidMaster,
        Self::InvalidReplicas,
        Self::MasterNotAvailable,
        Self::InvalidRequest,
        Self::BrokerNotAlive,
        Self::NotLeader,
        Self::BrokerMetadataNotExist,
        Self::InvalidCleanBrokerMetadata,
        Self::BrokerNeedToBeRegistered,
        Self::MasterStillExist,
        Self::ElectMasterFailed,
        Self::AlterSyncStateSetFailed,
        Self::BrokerIdInvalid,
        Self::JraftInternalError,
        Self::BrokerLiveInfoNotExists,
    ];

    /// Maps a wire number to a known controller response code.
    pub fn from_i32(code: i32) -> Option<Self> {
        Self::ALL.into_iter().find(|c| *c as i32 == code)
    }

    /// The Java constant name (`CONTROLLER_NOT_LEADER`), for logs and metrics.
    pub fn name(self) -> &'static str {
        match self {
            Self::FencedMasterEpoch => "CONTROLLER_FENCED_MASTER_EPOCH",
            Self::FencedSyncStateSetEpoch => "CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH",
            Self::InvalidMaster => "CONTROLLER_INVALID_MASTER",
            Self::InvalidReplicas => "CONTROLLER_INVALID_REPLICAS",
            Self::MasterNotAvailable => "CONTROLLER_MASTER_NOT_AVAILABLE",
            Self::InvalidRequest => "CONTROLLER_INVALID_REQUEST",
            Self::BrokerNotAlive => "CONTROLLER_BROKER_NOT_ALIVE",
            Self::NotLeader => "CONTROLLER_NOT_LEADER",
            Self::BrokerMetadataNotExist => "CONTROLLER_BROKER_METADATA_NOT_EXIST",
            Self::InvalidCleanBrokerMetadata => "CONTROLLER_INVALID_CLEAN_BROKER_METADATA",
            Self::BrokerNeedToBeRegistered => "CONTROLLER_BROKER_NEED_TO_BE_REGISTERED",
            Self::MasterStillExist => "CONTROLLER_MASTER_STILL_EXIST",
            Self::ElectMasterFailed => "CONTROLLER_ELECT_MASTER_FAILED",
            Self::AlterSyncStateSetFailed => "CONTROLLER_ALTER_SYNC_STATE_SET_FAILED",
            Self::BrokerIdInvalid => "CONTROLLER_BROKER_ID_INVALID",
            Self::JraftInternalError => "CONTROLLER_JRAFT_INTERNAL_ERROR",
            Self::BrokerLiveInfoNotExists => "CONTROLLER_BROKER_LIVE_INFO_NOT_EXISTS",
        }
    }
}

/// The remark Java's controllers answer a non-leader request with (`CONTROLLER_NOT_LEADER`).
pub const NOT_LEADER_REMARK: &str = "The controller is not in leader state";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_through_their_numbers() {
        for code in ControllerRequestCode::ALL.iter().copied() {
            assert_eq!(ControllerRequestCode::from_i32(code as i32), Some(code));
        }
        assert_eq!(ControllerRequestCode::ApplyBrokerId as i32, 1013);
        assert_eq!(ControllerRequestCode::from_i32(105), None);
        assert!(ControllerRequestCode::RaftVote.is_peer() && !ControllerRequestCode::ElectMaster.is_peer());
        for (i, code) in ControllerResponseCode::ALL.iter().enumerate() {
            assert_eq!(*code as i32, 2000 + i as i32);
            assert_eq!(ControllerResponseCode::from_i32(2000 + i as i32), Some(*code));
        }
        assert_eq!(ControllerResponseCode::from_i32(2017), None);
    }
}
