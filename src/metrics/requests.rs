//! Recording handled requests: one at a time ([`Metrics::request`]), or a batch of one code
//! gathered in a [`RequestTally`] without atomics and added at once (the route lane answers
//! queries in batches, and per-query atomics were a measurable share of a route query).

use super::histogram::LocalHistogram;
use super::{CodeHandles, Metrics, RequestLabels, RESULTS};
use crate::protocol::{RequestCode, ResponseCode};

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
        Some(code) => ResponseCode::from_i32(code).map_or(1, |r| match r {
            ResponseCode::Success => 0,
            ResponseCode::SystemError => 1,
            ResponseCode::SystemBusy => 2,
            ResponseCode::RequestCodeNotSupported => 3,
            ResponseCode::NoPermission => 4,
            ResponseCode::TopicNotExist => 5,
            ResponseCode::QueryNotFound => 6,
        }),
    }
}

impl Metrics {
    /// Records one handled request: its code, response code (`None`: oneway) and duration.
    pub fn request(&self, code: i32, response: Option<i32>, nanos: u64) {
        if !self.on {
            return;
        }
        let handles = &self.by_code[self.code_index(code)];
        self.result_counter(handles, result_index(response)).inc();
        handles.duration.observe_nanos(nanos);
        self.all_requests.observe_nanos(nanos);
    }

    /// An empty tally of requests of `code`.
    pub fn tally(&self, code: i32) -> RequestTally {
        RequestTally { index: self.code_index(code), results: [0; RESULTS.len()], durations: LocalHistogram::default() }
    }

    /// Adds the requests of `tally`: a few atomic additions for the whole batch.
    pub fn add_tally(&self, tally: &RequestTally) {
        if !self.on {
            return;
        }
        let handles = &self.by_code[tally.index];
        for (result, n) in tally.results.iter().enumerate().filter(|(_, n)| **n > 0) {
            self.result_counter(handles, result).inc_by(*n);
        }
        handles.duration.add(&tally.durations);
        self.all_requests.add(&tally.durations);
    }

    /// The index of `code` in `by_code` (the last one: codes not known).
    fn code_index(&self, code: i32) -> usize {
        RequestCode::from_i32(code)
            .and_then(|c| RequestCode::ALL.iter().position(|a| *a == c))
            .unwrap_or(self.by_code.len() - 1)
    }

    /// The counter of `result` for the code of `handles`, made on first use.
    fn result_counter<'m>(
        &'m self,
        handles: &'m CodeHandles,
        result: usize,
    ) -> &'m prometheus_client::metrics::counter::Counter {
        handles.results[result].get_or_init(|| {
            self.requests.get_or_create(&RequestLabels { code: handles.name, result: RESULTS[result] }).clone()
        })
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
        let mut tally = batched.tally(code);
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
}
