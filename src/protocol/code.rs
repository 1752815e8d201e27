//! Request, response and language codes with their wire numbers (spec §1.2, §1.7, §2.3).

/// The request codes the NameServer serves, with the numbers Java's `RequestCode` gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RequestCode {
    PutKvConfig = 100,
    GetKvConfig = 101,
    DeleteKvConfig = 102,
    RegisterBroker = 103,
    UnregisterBroker = 104,
    GetRouteinfoByTopic = 105,
    GetBrokerClusterInfo = 106,
    WipeWritePermOfBroker = 205,
    GetAllTopicListFromNameserver = 206,
    DeleteTopicInNamesrv = 216,
    RegisterTopicInNamesrv = 217,
    GetKvlistByNamespace = 219,
    GetTopicsByCluster = 224,
    GetSystemTopicListFromNs = 304,
    GetUnitTopicList = 311,
    GetHasUnitSubTopicList = 312,
    GetHasUnitSubUnunitTopicList = 313,
    UpdateNamesrvConfig = 318,
    GetNamesrvConfig = 319,
    QueryDataVersion = 322,
    AddWritePermOfBroker = 327,
    GetBrokerMemberGroup = 901,
    BrokerHeartbeat = 904,
    NotifyMinBrokerIdChange = 905,
}

impl RequestCode {
    /// Every request code, in numeric order.
    pub const ALL: [RequestCode; 24] = [
        Self::PutKvConfig,
        Self::GetKvConfig,
        Self::DeleteKvConfig,
        Self::RegisterBroker,
        Self::UnregisterBroker,
        Self::GetRouteinfoByTopic,
        Self::GetBrokerClusterInfo,
        Self::WipeWritePermOfBroker,
        Self::GetAllTopicListFromNameserver,
        Self::DeleteTopicInNamesrv,
        Self::RegisterTopicInNamesrv,
        Self::GetKvlistByNamespace,
        Self::GetTopicsByCluster,
        Self::GetSystemTopicListFromNs,
        Self::GetUnitTopicList,
        Self::GetHasUnitSubTopicList,
        Self::GetHasUnitSubUnunitTopicList,
        Self::UpdateNamesrvConfig,
        Self::GetNamesrvConfig,
        Self::QueryDataVersion,
        Self::AddWritePermOfBroker,
        Self::GetBrokerMemberGroup,
        Self::BrokerHeartbeat,
        Self::NotifyMinBrokerIdChange,
    ];

    /// Maps a wire number to a known request code.
    pub fn from_i32(code: i32) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| *c as i32 == code)
    }

    /// The Java constant name, used in logs so they can be searched against the Java source.
    pub fn name(self) -> &'static str {
        match self {
            Self::PutKvConfig => "PUT_KV_CONFIG",
            Self::GetKvConfig => "GET_KV_CONFIG",
            Self::DeleteKvConfig => "DELETE_KV_CONFIG",
            Self::RegisterBroker => "REGISTER_BROKER",
            Self::UnregisterBroker => "UNREGISTER_BROKER",
            Self::GetRouteinfoByTopic => "GET_ROUTEINFO_BY_TOPIC",
            Self::GetBrokerClusterInfo => "GET_BROKER_CLUSTER_INFO",
            Self::WipeWritePermOfBroker => "WIPE_WRITE_PERM_OF_BROKER",
            Self::GetAllTopicListFromNameserver => "GET_ALL_TOPIC_LIST_FROM_NAMESERVER",
            Self::DeleteTopicInNamesrv => "DELETE_TOPIC_IN_NAMESRV",
            Self::RegisterTopicInNamesrv => "REGISTER_TOPIC_IN_NAMESRV",
            Self::GetKvlistByNamespace => "GET_KVLIST_BY_NAMESPACE",
            Self::GetTopicsByCluster => "GET_TOPICS_BY_CLUSTER",
            Self::GetSystemTopicListFromNs => "GET_SYSTEM_TOPIC_LIST_FROM_NS",
            Self::GetUnitTopicList => "GET_UNIT_TOPIC_LIST",
            Self::GetHasUnitSubTopicList => "GET_HAS_UNIT_SUB_TOPIC_LIST",
            Self::GetHasUnitSubUnunitTopicList => "GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST",
            Self::UpdateNamesrvConfig => "UPDATE_NAMESRV_CONFIG",
            Self::GetNamesrvConfig => "GET_NAMESRV_CONFIG",
            Self::QueryDataVersion => "QUERY_DATA_VERSION",
            Self::AddWritePermOfBroker => "ADD_WRITE_PERM_OF_BROKER",
            Self::GetBrokerMemberGroup => "GET_BROKER_MEMBER_GROUP",
            Self::BrokerHeartbeat => "BROKER_HEARTBEAT",
            Self::NotifyMinBrokerIdChange => "NOTIFY_MIN_BROKER_ID_CHANGE",
        }
    }
}

/// The response codes the NameServer answers with (Java `ResponseCode` / `RemotingSysResponseCode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseCode {
    Success = 0,
    SystemError = 1,
    SystemBusy = 2,
    RequestCodeNotSupported = 3,
    NoPermission = 16,
    TopicNotExist = 17,
    QueryNotFound = 22,
}

/// The sender's language as carried in every header; the order gives the wire number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LanguageCode {
    Java = 0,
    Cpp = 1,
    Dotnet = 2,
    Python = 3,
    Delphi = 4,
    Erlang = 5,
    Ruby = 6,
    Other = 7,
    Http = 8,
    Go = 9,
    Php = 10,
    Oms = 11,
    Rust = 12,
    NodeJs = 13,
}

impl LanguageCode {
    const NAMES: [(&'static str, LanguageCode); 14] = [
        ("JAVA", Self::Java),
        ("CPP", Self::Cpp),
        ("DOTNET", Self::Dotnet),
        ("PYTHON", Self::Python),
        ("DELPHI", Self::Delphi),
        ("ERLANG", Self::Erlang),
        ("RUBY", Self::Ruby),
        ("OTHER", Self::Other),
        ("HTTP", Self::Http),
        ("GO", Self::Go),
        ("PHP", Self::Php),
        ("OMS", Self::Oms),
        ("RUST", Self::Rust),
        ("NODE_JS", Self::NodeJs),
    ];

    /// Reads the wire number; an unknown number is no language (Java reads it as null).
    pub fn from_u8(n: u8) -> Option<Self> {
        Self::NAMES.get(n as usize).map(|(_, l)| *l)
    }

    /// Reads the enum name as Java writes it; an unknown name is no language.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::NAMES.iter().find(|(n, _)| *n == name).map(|(_, l)| *l)
    }

    /// The enum name Java writes in JSON headers.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize].0
    }
}

/// MQVersion ordinals the NameServer compares against (spec §1.8).
pub mod version {
    /// V3_0_11: from here on the register body is a `RegisterBrokerBody`.
    pub const V3_0_11: i32 = 37;
    /// V4_9_4: from here on route bodies use standard JSON.
    pub const V4_9_4: i32 = 401;
    /// V5_0_0: from here on a compressed register body carries a mapping section.
    pub const V5_0_0: i32 = 413;
    /// V5_3_3: the version this server stamps on its responses by default.
    pub const V5_3_3: i32 = 479;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_codes_round_trip_through_numbers() {
        for code in RequestCode::ALL {
            assert_eq!(RequestCode::from_i32(code as i32), Some(code));
        }
        assert_eq!(RequestCode::from_i32(99999), None);
        assert_eq!(RequestCode::RegisterBroker as i32, 103);
    }

    #[test]
    fn languages_read_by_name_and_number() {
        assert_eq!(LanguageCode::from_name("NODE_JS"), Some(LanguageCode::NodeJs));
        assert_eq!(LanguageCode::from_u8(9), Some(LanguageCode::Go));
        assert_eq!(LanguageCode::from_u8(14), None);
        assert_eq!(LanguageCode::from_name("KLINGON"), None);
        assert_eq!(LanguageCode::Rust.name(), "RUST");
    }
}
