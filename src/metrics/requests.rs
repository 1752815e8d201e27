//! The request figures (a counter per code and result, a histogram per code, each code's
//! handles found by index) and recording handled requests: one at a time
//! ([`Metrics::request`]), or a batch of one code gathered in a [`RequestTally`] without atomics
//! and added at once (the route lane answers queries in batches, and per-query atomics were a
//! measurable share of a route query).

use std::sync::OnceLock;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use super::histogram::{LocalHistogram, SecondsHistogram};
use super::labels::{CodeLabel, RequestLabels};
use super::{controller_code_name, Listener, Metrics};
use crate::protocol::controller::{ControllerRequestCode, ControllerResponseCode};
use crate::protocol::{RequestCode, ResponseCode};

/// The results a request can have: its response code (the NameServer's, then the controller's
/// 2000–2016), or `ONEWAY` when it is not answered. An unknown code counts as `SYSTEM_ERROR`.
const RESULTS: [&str; 25] = [
    "SUCCESS",
    "SYSTEM_ERROR",
    "SYSTEM_BUSY",
    "REQUEST_CODE_NOT_SUPPORTED",
    "NO_PERMISSION",
    "TOPIC_NOT_EXIST",
    "QUERY_NOT_FOUND",
    "CONTROLLER_FENCED_MASTER_EPOCH",
    "CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH",
    "CONTROLLER_INVALID_MASTER",
    "CONTROLLER_INVALID_REPLICAS",
    "CONTROLLER_MASTER_NOT_AVAILABLE",
    "CONTROLLER_INVALID_REQUEST",
    "CONTROLLER_BROKER_NOT_ALIVE",
    "CONTROLLER_NOT_LEADER",
    "CONTROLLER_BROKER_METADATA_NOT_EXIST",
    "CONTROLLER_INVALID_CLEAN_BROKER_METADATA",
    "CONTROLLER_BROKER_NEED_TO_BE_REGISTERED",
    "CONTROLLER_MASTER_STILL_EXIST",
    "CONTROLLER_ELECT_MASTER_FAILED",
    "CONTROLLER_ALTER_SYNC_STATE_SET_FAILED",
    "CONTROLLER_BROKER_ID_INVALID",
    "CONTROLLER_JRAFT_INTERNAL_ERROR",
    "CONTROLLER_BROKER_LIVE_INFO_NOT_EXISTS",
    "ONEWAY",
];

/// The request figures (`namesrv_requests_total` by code and result,
/// `namesrv_request_duration_seconds` by code, and every request's duration), with the handles
/// of each code in a table that [`RequestFigures::code_index`] finds them in.
#[derive(Debug)]
pub(super) struct RequestFigures {
    counts: Family<RequestLabels, Counter>,
    durations: Family<CodeLabel, SecondsHistogram>,
    /// The NameServer's codes, then the controller's, then `UNKNOWN`.
    by_code: Vec<CodeHandles>,
    all: SecondsHistogram,
}

/// The handles of one request code.
#[derive(Debug)]
struct CodeHandles {
    name: &'static str,
    duration: SecondsHistogram,
    results: [OnceLock<Counter>; RESULTS.len()],
}

impl RequestFigures {
    /// The figures, with the handles of every code of both listeners and of `UNKNOWN`.
    pub(super) fn for_every_code() -> Self {
        let durations = Family::<CodeLabel, SecondsHistogram>::default();
        let names = RequestCode::ALL
            .iter()
            .map(|c| c.name())
            .chain(ControllerRequestCode::ALL.iter().map(|c| controller_code_name(*c)))
            .chain(std::iter::once("UNKNOWN"));
        let by_code = names
            .map(|name| CodeHandles {
                name,
                duration: durations.get_or_create(&CodeLabel { code: name }).clone(),
                results: Default::default(),
            })
            .collect();
        RequestFigures { counts: Family::default(), durations, by_code, all: SecondsHistogram::default() }
    }

    /// Registers the two families in `ns` (the `namesrv` prefix).
    pub(super) fn register(&self, ns: &mut Registry) {
        ns.register("requests", "Requests handled, by request code and result", self.counts.clone());
        let durations = self.durations.clone();
        ns.register("request_duration_seconds", "Time from decoded frame to reply queued, by request code", durations);
    }

    /// Every request's duration, whatever its code.
    pub(super) fn all(&self) -> &SecondsHistogram {
        &self.all
    }

    /// The index of `code` of `listener` in `by_code` (the last one: codes not known).
    fn code_index(&self, listener: Listener, code: i32) -> usize {
        let found = match listener {
            Listener::Namesrv => {
                RequestCode::from_i32(code).and_then(|c| RequestCode::ALL.iter().position(|a| *a == c))
            }
            Listener::Controller => ControllerRequestCode::from_i32(code)
                .and_then(|c| ControllerRequestCode::ALL.iter().position(|a| *a == c))
                .map(|i| RequestCode::ALL.len() + i),
        };
        found.unwrap_or(self.by_code.len() - 1)
    }

    /// The counter of `result` for the code of `handles`, made on first use.
    fn result_counter<'m>(&'m self, handles: &'m CodeHandles, result: usize) -> &'m Counter {
        handles.results[result].get_or_init(|| {
            self.counts.get_or_create(&RequestLabels { code: handles.name, result: RESULTS[result] }).clone()
        })
    }
}

/// Requests of one code handled together, counted locally until [`Metrics::add_tally`].
#[derive(Debug, Clone)]
pub struct RequestTally {
    /// The code's index in the metrics' handles.
    index: usize,
    results: [u64; RESULTS.len()],
    durations: LocalHistogram,
}

impl RequestTally {
    /// Records one request: its response code (`None`: oneway) and duration.
    pub fn record(&mut self, response: Option<i32>, nanos: u64) {
        self.results[result_index(response)] += 1;
        self.durations.observe_nanos(nanos);
    }
}

/// The index of `response` in [`RESULTS`].
fn result_index(response: Option<i32>) -> usize {
    match response {
        None => RESULTS.len() - 1,
        Some(code) => match (ResponseCode::from_i32(code), ControllerResponseCode::from_i32(code)) {
            (Some(r), _) => match r {
                ResponseCode::Success => 0,
                ResponseCode::SystemError => 1,
                ResponseCode::SystemBusy => 2,
                ResponseCode::RequestCodeNotSupported => 3,
                ResponseCode::NoPermission => 4,
                ResponseCode::TopicNotExist => 5,
                ResponseCode::QueryNotFound => 6,
            },
            // 2000..=2016 follow in order from index 7.
            (None, Some(c)) => 7 + (c as usize - ControllerResponseCode::FencedMasterEpoch as usize),
            (None, None) => 1,
        },
    }
}

impl Metrics {
    /// Records one handled request of the NameServer port: its code, response code (`None`:
    /// oneway) and duration.
    pub fn request(&self, code: i32, response: Option<i32>, nanos: u64) {
        self.request_on(Listener::Namesrv, code, response, nanos);
    }

    /// Records one handled request of `listener`.
    pub fn request_on(&self, listener: Listener, code: i32, response: Option<i32>, nanos: u64) {
        if !self.on {
            return;
        }
        let figures = &self.requests;
        let handles = &figures.by_code[figures.code_index(listener, code)];
        figures.result_counter(handles, result_index(response)).inc();
        handles.duration.observe_nanos(nanos);
        figures.all.observe_nanos(nanos);
    }

    /// An empty tally of requests of `code` on `listener`.
    pub fn tally(&self, listener: Listener, code: i32) -> RequestTally {
        RequestTally {
            index: self.requests.code_index(listener, code),
            results: [0; RESULTS.len()],
            durations: LocalHistogram::default(),
        }
    }

    /// Adds the requests of `tally`: a few atomic additions for the whole batch.
    pub fn add_tally(&self, tally: &RequestTally) {
        if !self.on {
            return;
        }
        let figures = &self.requests;
        let handles = &figures.by_code[tally.index];
        for (result, n) in tally.results.iter().enumerate().filter(|(_, n)| **n > 0) {
            figures.result_counter(handles, result).inc_by(*n);
        }
        handles.duration.add(&tally.durations);
        figures.all.add(&tally.durations);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::RequestCode;

    /// A batch added through a tally exports what the same requests recorded one by one do.
    #[test]
    fn a_tally_adds_what_single_records_add() {
        let (single, batched) = (Metrics::new(), Metrics::new());
        let code = RequestCode::GetRouteinfoByTopic as i32;
        let requests =
            [(Some(0), 8_000), (Some(0), 120_000), (Some(17), 3_000_000), (None, 5), (Some(0), 20_000_000_000)];
        let mut tally = batched.tally(Listener::Namesrv, code);
        for (response, nanos) in requests {
            single.request(code, response, nanos);
            tally.record(response, nanos);
        }
        batched.add_tally(&tally);
        let requests_only = |m: &Metrics| -> Vec<String> {
            let mut lines: Vec<String> =
                m.encode().lines().filter(|l| l.starts_with("namesrv_request")).map(str::to_owned).collect();
            lines.sort(); // families are exported in no fixed order
            lines
        };
        let (a, b) = (requests_only(&single), requests_only(&batched));
        let success = "namesrv_requests_total{code=\"GET_ROUTEINFO_BY_TOPIC\",result=\"SUCCESS\"} 3";
        assert!(a.iter().any(|l| l == success), "{a:#?}");
        assert!(a.iter().any(|l| l.contains("result=\"TOPIC_NOT_EXIST\"} 1")), "{a:#?}");
        assert_eq!(a, b);
    }

    /// The controller port's codes and answers have their own names; its heartbeat is not the
    /// NameServer's.
    #[test]
    fn controller_codes_and_answers_are_named_apart_from_the_nameserver_s() {
        let m = Metrics::new();
        m.request_on(Listener::Controller, 904, None, 1_000);
        m.request_on(Listener::Controller, 1003, Some(2007), 1_000);
        m.request_on(Listener::Controller, 1002, Some(2016), 1_000);
        m.request_on(Listener::Controller, 1002, Some(2000), 1_000);
        m.request_on(Listener::Controller, 105, Some(3), 1_000);
        m.request(904, None, 1_000);
        let text = m.encode();
        for line in [
            "namesrv_requests_total{code=\"CONTROLLER_BROKER_HEARTBEAT\",result=\"ONEWAY\"} 1",
            "namesrv_requests_total{code=\"BROKER_HEARTBEAT\",result=\"ONEWAY\"} 1",
            "namesrv_requests_total{code=\"CONTROLLER_REGISTER_BROKER\",result=\"CONTROLLER_NOT_LEADER\"} 1",
            "namesrv_requests_total{code=\"CONTROLLER_ELECT_MASTER\",result=\"CONTROLLER_BROKER_LIVE_INFO_NOT_EXISTS\"} 1",
            "namesrv_requests_total{code=\"CONTROLLER_ELECT_MASTER\",result=\"CONTROLLER_FENCED_MASTER_EPOCH\"} 1",
            "namesrv_requests_total{code=\"UNKNOWN\",result=\"REQUEST_CODE_NOT_SUPPORTED\"} 1",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing from\n{text}");
        }
    }
}
