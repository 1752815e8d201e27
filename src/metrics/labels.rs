//! The label sets of the `namesrv_*` families: `&'static str` values from small fixed sets.

use prometheus_client::encoding::EncodeLabelSet;

/// `code` and `result` of `namesrv_requests_total`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct RequestLabels {
    pub(super) code: &'static str,
    pub(super) result: &'static str,
}

/// `code` of `namesrv_request_duration_seconds`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct CodeLabel {
    pub(super) code: &'static str,
}

/// A single low-cardinality label.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct ResultLabel {
    pub(super) result: &'static str,
}

/// `reason` of the counters of things that went wrong.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct ReasonLabel {
    pub(super) reason: &'static str,
}

/// `file` and `result` of `namesrv_security_reloads_total`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct FileResultLabels {
    pub(super) file: &'static str,
    pub(super) result: &'static str,
}

/// `actor` of the mailbox figures.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct ActorLabel {
    pub(super) actor: &'static str,
}

/// `actor` and `message` of `namesrv_mailbox_handle_seconds`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct ActorMessageLabels {
    pub(super) actor: &'static str,
    pub(super) message: &'static str,
}
