//! The RocketMQ 5 controller protocol (Java's `controller` module as brokers and mqadmin speak
//! it): its request and response codes (here), typed request headers with Java's extFields key order
//! (`header`) and response headers (`response`), and its bodies — SyncStateSet, ElectMasterResponseBody, BrokerReplicasInfo and
//! the broker-name list (`body`). No state: the server's controller, the test broker and the
//! tools build on it alike.

pub mod body;
pub mod header;
pub mod response;

use crate::code::wire_codes;

wire_codes! {
    /// The request codes of the controller listener: Java's `RequestCode` controller numbers,
    /// BROKER_HEARTBEAT, the role-change push the controller sends, and the private peer codes
    /// of the Raft transport (unused by RocketMQ 5.3.3).
    pub enum ControllerRequestCode {
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
}

impl ControllerRequestCode {
    /// Whether this is a private peer code of the Raft transport.
    pub fn is_peer(self) -> bool {
        (1901..=1909).contains(&(self as i32))
    }
}

wire_codes! {
    /// The controller's response codes (Java `ResponseCode` 2000–2016; 2015 and 2016 are
    /// JRaft's and never sent here), beside the general ones of [`crate::ResponseCode`].
    pub enum ControllerResponseCode {
        FencedMasterEpoch = 2000 => "CONTROLLER_FENCED_MASTER_EPOCH",
        FencedSyncStateSetEpoch = 2001 => "CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH",
        InvalidMaster = 2002 => "CONTROLLER_INVALID_MASTER",
        InvalidReplicas = 2003 => "CONTROLLER_INVALID_REPLICAS",
        MasterNotAvailable = 2004 => "CONTROLLER_MASTER_NOT_AVAILABLE",
        InvalidRequest = 2005 => "CONTROLLER_INVALID_REQUEST",
        BrokerNotAlive = 2006 => "CONTROLLER_BROKER_NOT_ALIVE",
        NotLeader = 2007 => "CONTROLLER_NOT_LEADER",
        BrokerMetadataNotExist = 2008 => "CONTROLLER_BROKER_METADATA_NOT_EXIST",
        InvalidCleanBrokerMetadata = 2009 => "CONTROLLER_INVALID_CLEAN_BROKER_METADATA",
        BrokerNeedToBeRegistered = 2010 => "CONTROLLER_BROKER_NEED_TO_BE_REGISTERED",
        MasterStillExist = 2011 => "CONTROLLER_MASTER_STILL_EXIST",
        ElectMasterFailed = 2012 => "CONTROLLER_ELECT_MASTER_FAILED",
        AlterSyncStateSetFailed = 2013 => "CONTROLLER_ALTER_SYNC_STATE_SET_FAILED",
        BrokerIdInvalid = 2014 => "CONTROLLER_BROKER_ID_INVALID",
        JraftInternalError = 2015 => "CONTROLLER_JRAFT_INTERNAL_ERROR",
        BrokerLiveInfoNotExists = 2016 => "CONTROLLER_BROKER_LIVE_INFO_NOT_EXISTS",
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
