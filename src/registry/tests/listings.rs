//! Topic listings are built at most once per change of the tables, and follow every change.

use std::sync::Arc;

use super::*;
use crate::registry::admin::UnitFilter;
use crate::registry::listings::Listings;

#[test]
fn listings_asked_again_without_a_change_are_not_built_again() {
    let mut t = tables();
    register(&mut t, &broker("b1", "a:1", &["T2", "T1"]), 0);
    let mut listings = Listings::default();
    let sorted = listings.sorted_topics(&t);
    assert_eq!(sorted.iter().map(|s| &**s).collect::<Vec<_>>(), ["T1", "T2"]);
    let by_cluster = listings.by_cluster(&t, "c");
    let unit = listings.unit(&t, UnitFilter::Unit);
    assert_eq!(listings.builds(), 3);
    for _ in 0..100 {
        assert!(Arc::ptr_eq(&listings.sorted_topics(&t), &sorted));
        assert_eq!(listings.by_cluster(&t, "c"), by_cluster);
        assert_eq!(listings.unit(&t, UnitFilter::Unit), unit);
    }
    assert_eq!(listings.builds(), 3, "pipelined listings cost a lookup each, not a scan");

    // A heartbeat that changes nothing keeps them; a new topic rebuilds them.
    register(&mut t, &broker("b1", "a:1", &["T2", "T1"]), 10);
    listings.sorted_topics(&t);
    assert_eq!(listings.builds(), 3);
    register(&mut t, &Reg { counter: 2, ..broker("b1", "a:1", &["T2", "T1", "T0"]) }, 20);
    assert_eq!(listings.sorted_topics(&t).iter().map(|s| &**s).collect::<Vec<_>>(), ["T0", "T1", "T2"]);
    let body = listings.by_cluster(&t, "c");
    assert!(String::from_utf8_lossy(&body).contains("T0"), "{body:?}");
    assert_eq!(listings.builds(), 5);
}
