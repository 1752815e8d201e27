//! Request, response and language codes with their wire numbers (Java's `RequestCode`,
//! `ResponseCode` and `LanguageCode`).

/// Declares an enum of wire codes once: each variant with its number and Java constant name,
/// and `ALL`, `from_i32` and `name` from that one list (every code enum of the protocol).
macro_rules! wire_codes {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($variant:ident = $number:literal => $java:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $(#[doc = $java] $variant = $number,)+
        }

        impl $name {
            /// Every code, in numeric order.
            pub const ALL: &'static [$name] = &[$(Self::$variant,)+];

            /// Maps a wire number to a known code.
            pub fn from_i32(code: i32) -> Option<Self> {
                match code {
                    $($number => Some(Self::$variant),)+
                    _ => None,
                }
            }

            /// The Java constant name, used in logs and metrics so they can be searched
            /// against the Java source.
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $java,)+
                }
            }
        }
    };
}
pub(crate) use wire_codes;

wire_codes! {
    /// The request codes the NameServer serves, with the numbers Java's `RequestCode` gives them.
    pub enum RequestCode {
        PutKvConfig = 100 => "PUT_KV_CONFIG",
        GetKvConfig = 101 => "GET_KV_CONFIG",
        DeleteKvConfig = 102 => "DELETE_KV_CONFIG",
        RegisterBroker = 103 => "REGISTER_BROKER",
        UnregisterBroker = 104 => "UNREGISTER_BROKER",
        GetRouteinfoByTopic = 105 => "GET_ROUTEINFO_BY_TOPIC",
        GetBrokerClusterInfo = 106 => "GET_BROKER_CLUSTER_INFO",
        WipeWritePermOfBroker = 205 => "WIPE_WRITE_PERM_OF_BROKER",
        GetAllTopicListFromNameserver = 206 => "GET_ALL_TOPIC_LIST_FROM_NAMESERVER",
        DeleteTopicInNamesrv = 216 => "DELETE_TOPIC_IN_NAMESRV",
        RegisterTopicInNamesrv = 217 => "REGISTER_TOPIC_IN_NAMESRV",
        GetKvlistByNamespace = 219 => "GET_KVLIST_BY_NAMESPACE",
        GetTopicsByCluster = 224 => "GET_TOPICS_BY_CLUSTER",
        GetSystemTopicListFromNs = 304 => "GET_SYSTEM_TOPIC_LIST_FROM_NS",
        GetUnitTopicList = 311 => "GET_UNIT_TOPIC_LIST",
        GetHasUnitSubTopicList = 312 => "GET_HAS_UNIT_SUB_TOPIC_LIST",
        GetHasUnitSubUnunitTopicList = 313 => "GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST",
        UpdateNamesrvConfig = 318 => "UPDATE_NAMESRV_CONFIG",
        GetNamesrvConfig = 319 => "GET_NAMESRV_CONFIG",
        QueryDataVersion = 322 => "QUERY_DATA_VERSION",
        AddWritePermOfBroker = 327 => "ADD_WRITE_PERM_OF_BROKER",
        GetBrokerMemberGroup = 901 => "GET_BROKER_MEMBER_GROUP",
        BrokerHeartbeat = 904 => "BROKER_HEARTBEAT",
        NotifyMinBrokerIdChange = 905 => "NOTIFY_MIN_BROKER_ID_CHANGE",
    }
}

wire_codes! {
    /// The response codes the NameServer answers with (Java `ResponseCode` /
    /// `RemotingSysResponseCode`).
    pub enum ResponseCode {
        Success = 0 => "SUCCESS",
        SystemError = 1 => "SYSTEM_ERROR",
        SystemBusy = 2 => "SYSTEM_BUSY",
        RequestCodeNotSupported = 3 => "REQUEST_CODE_NOT_SUPPORTED",
        NoPermission = 16 => "NO_PERMISSION",
        TopicNotExist = 17 => "TOPIC_NOT_EXIST",
        QueryNotFound = 22 => "QUERY_NOT_FOUND",
    }
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

/// MQVersion ordinals the NameServer compares against (Java's `MQVersion.Version`).
pub mod version {
    /// V3_0_11: from here on the register body is a `RegisterBrokerBody`.
    pub const V3_0_11: i32 = 37;
    /// V4_9_3: clients up to here did not sign `_UNIQUE_KEY_QUERY` (Java's `PlainAccessResource`).
    pub const V4_9_3: i32 = 399;
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
        for code in RequestCode::ALL.iter().copied() {
            assert_eq!(RequestCode::from_i32(code as i32), Some(code));
        }
        assert_eq!(RequestCode::ALL.len(), 24);
        assert_eq!(RequestCode::GetRouteinfoByTopic.name(), "GET_ROUTEINFO_BY_TOPIC");
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
