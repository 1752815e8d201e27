//! The keys Java's `NamesrvStartup` accepts in a `-c` file, so that a Java NameServer's file loads
//! here as it is: keys we have a setting for map to it (`JAVA_NAMES`), the others warn and are
//! ignored, and `enableControllerInNamesrv=true` turns the controller on.

/// NamesrvConfig's keys (Java's `MixAll.properties2Object` takes a key per public setter).
pub const NAMESRV_CONFIG_KEYS: &[&str] = &[
    "rocketmqHome",
    "kvConfigPath",
    "configStorePath",
    "productEnvName",
    "clusterTest",
    "orderMessageEnable",
    "returnOrderTopicConfigToBroker",
    "clientRequestThreadPoolNums",
    "defaultThreadPoolNums",
    "clientRequestThreadPoolQueueCapacity",
    "defaultThreadPoolQueueCapacity",
    "scanNotActiveBrokerInterval",
    "unRegisterBrokerQueueCapacity",
    "supportActingMaster",
    "enableAllTopicList",
    "enableTopicList",
    "notifyMinBrokerIdChanged",
    "enableControllerInNamesrv",
    "needWaitForService",
    "waitSecondsForService",
    "deleteTopicWithBrokerRegistration",
    "configBlackList",
];

/// NettyServerConfig's keys.
pub const NETTY_SERVER_CONFIG_KEYS: &[&str] = &[
    "bindAddress",
    "listenPort",
    "serverWorkerThreads",
    "serverCallbackExecutorThreads",
    "serverSelectorThreads",
    "serverOnewaySemaphoreValue",
    "serverAsyncSemaphoreValue",
    "serverChannelMaxIdleTimeSeconds",
    "serverSocketSndBufSize",
    "serverSocketRcvBufSize",
    "writeBufferHighWaterMark",
    "writeBufferLowWaterMark",
    "serverSocketBacklog",
    "serverNettyWorkerGroupEnable",
    "serverPooledByteBufAllocatorEnable",
    "enableShutdownGracefully",
    "shutdownWaitTimeSeconds",
    "useEpollNativeSelector",
];

/// NettyClientConfig's keys (the NameServer's outbound client; `-p` prints the field
/// `isScanAvailableNameSrv`, whose key is `scanAvailableNameSrv`: both are accepted).
pub const NETTY_CLIENT_CONFIG_KEYS: &[&str] = &[
    "clientWorkerThreads",
    "clientCallbackExecutorThreads",
    "clientOnewaySemaphoreValue",
    "clientAsyncSemaphoreValue",
    "connectTimeoutMillis",
    "channelNotActiveInterval",
    "scanAvailableNameSrv",
    "isScanAvailableNameSrv",
    "clientChannelMaxIdleTimeSeconds",
    "clientSocketSndBufSize",
    "clientSocketRcvBufSize",
    "clientPooledByteBufAllocatorEnable",
    "clientCloseSocketIfTimeout",
    "useTLS",
    "socksProxyConfig",
    "disableCallbackExecutor",
    "disableNettyWorkerGroup",
    "maxReconnectIntervalTimeSeconds",
    "enableReconnectForGoAway",
];

/// ControllerConfig's and JraftConfig's keys: Java reads them from the same file, only when
/// `enableControllerInNamesrv=true`; here those with a setting are read always (inert while the
/// controller is off).
pub const CONTROLLER_CONFIG_KEYS: &[&str] = &[
    "controllerType",
    "controllerThreadPoolNums",
    "controllerRequestThreadPoolQueueCapacity",
    "controllerDLegerGroup",
    "controllerDLegerPeers",
    "controllerDLegerSelfId",
    "mappedFileSize",
    "controllerStorePath",
    "electMasterMaxRetryCount",
    "enableElectUncleanMaster",
    "processReadEvent",
    "isProcessReadEvent",
    "notifyBrokerRoleChanged",
    "scanInactiveMasterInterval",
    "metricsExporterType",
    "metricsGrpcExporterTarget",
    "metricsGrpcExporterHeader",
    "metricGrpcExporterTimeOutInMills",
    "metricGrpcExporterIntervalInMills",
    "metricLoggingExporterIntervalInMills",
    "metricsPromExporterPort",
    "metricsPromExporterHost",
    "metricsLabel",
    "metricsInDelta",
    "jRaftElectionTimeoutMs",
    "jRaftScanWaitTimeoutMs",
    "jRaftSnapshotIntervalSecs",
    "jRaftGroupId",
    "jRaftServerId",
    "jRaftInitConf",
    "jRaftControllerRPCAddr",
];

/// The Java key that turns on the embedded controller.
pub const ENABLE_CONTROLLER_KEY: &str = "enableControllerInNamesrv";

/// What a key is, seen from Java's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JavaKey {
    /// Not a key Java reads (ours, or a typo: the settings type decides).
    NotJava,
    /// A key Java reads that has no setting here: warned about and ignored.
    Ignored,
    /// `enableControllerInNamesrv` set to true: the controller runs beside the NameServer.
    EmbeddedController,
}

/// Classifies `key` (exact Java spelling, as `Properties` keys are case-sensitive) with its value.
///
/// `has_setting` tells whether the key maps to one of our settings (then it is ours to apply).
pub fn classify(key: &str, value: &str, has_setting: bool) -> JavaKey {
    if key == ENABLE_CONTROLLER_KEY {
        // Java's Boolean.parseBoolean: only "true", in any case, is true. A stray space (which
        // Java would read as false) counts as true: better a controller than a lost one.
        return if value.trim().eq_ignore_ascii_case("true") { JavaKey::EmbeddedController } else { JavaKey::Ignored };
    }
    let java = [NAMESRV_CONFIG_KEYS, NETTY_SERVER_CONFIG_KEYS, NETTY_CLIENT_CONFIG_KEYS, CONTROLLER_CONFIG_KEYS]
        .iter()
        .any(|keys| keys.contains(&key));
    if java && !has_setting {
        JavaKey::Ignored
    } else {
        JavaKey::NotJava
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_keys_without_a_setting_are_ignored_and_the_controller_is_recognised() {
        assert_eq!(classify("serverWorkerThreads", "8", false), JavaKey::Ignored);
        assert_eq!(classify("useTLS", "true", false), JavaKey::Ignored);
        assert_eq!(classify("jRaftInitConf", "a:1", false), JavaKey::Ignored);
        assert_eq!(classify("listenPort", "1", true), JavaKey::NotJava);
        assert_eq!(classify("noSuchKey", "1", false), JavaKey::NotJava);
        assert_eq!(classify("enableControllerInNamesrv", "false", false), JavaKey::Ignored);
        assert_eq!(classify("enableControllerInNamesrv", " TRUE ", false), JavaKey::EmbeddedController);
    }

    #[test]
    fn every_key_of_java_s_namesrv_config_is_known() {
        assert_eq!(NAMESRV_CONFIG_KEYS.len(), 22);
        assert_eq!(NETTY_SERVER_CONFIG_KEYS.len(), 18);
    }
}
