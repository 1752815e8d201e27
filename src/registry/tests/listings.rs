//! Topic listings are built from the groups' shared topic sets, off the registry thread, and
//! say what a scan of the tables says; the sets are copied only when they change while held.

use std::sync::Arc;

use super::*;
use crate::protocol::reply::body::encode_topic_list;
use crate::registry::admin::UnitFilter;
use crate::registry::listings::{ListingCache, ListingKind};

/// The encoded list of `topics`.
fn list(topics: &[String]) -> Vec<u8> {
    encode_topic_list(topics.iter().map(String::as_str), None)
}

#[test]
fn listings_built_from_the_shared_sets_say_what_a_scan_of_the_tables_says() {
    let mut t = tables();
    register(&mut t, &broker("b1", "a:1", &["T2", "T1"]), 0);
    register(&mut t, &Reg { cluster: "d", conn: 2, ..broker("b2", "b:1", &["T1", "T3"]) }, 0);
    for (kind, scan) in [
        (ListingKind::All, t.all_topics()),
        (ListingKind::ByCluster("c".into()), t.topics_by_cluster("c")),
        (ListingKind::ByCluster("d".into()), t.topics_by_cluster("d")),
        (ListingKind::ByCluster("nope".into()), Vec::new()),
    ] {
        assert_eq!(t.listing_inputs(&kind).build(&kind).to_vec(), list(&scan), "{kind:?}");
    }
    for filter in [UnitFilter::Unit, UnitFilter::HasUnitSub, UnitFilter::HasUnitSubNotUnit] {
        let kind = ListingKind::Unit(filter);
        assert_eq!(t.listing_inputs(&kind).build(&kind).to_vec(), list(&t.unit_topics(filter)), "{kind:?}");
    }
}

#[test]
fn a_held_listing_input_is_not_changed_by_later_registrations_and_the_cache_follows_the_generation() {
    let mut t = tables();
    register(&mut t, &broker("b1", "a:1", &["T2", "T1"]), 0);
    let kind = ListingKind::ByCluster("c".into());
    let held = t.listing_inputs(&kind);
    let cache = ListingCache::default();
    cache.put(kind.clone(), held.generation, held.build(&kind));

    // A heartbeat that changes nothing keeps the generation: the cached listing still serves.
    register(&mut t, &broker("b1", "a:1", &["T2", "T1"]), 10);
    assert!(cache.get(&kind, t.listing_inputs(&kind).generation).is_some());

    register(&mut t, &Reg { counter: 2, ..broker("b1", "a:1", &["T2", "T1", "T0"]) }, 20);
    let fresh = t.listing_inputs(&kind);
    assert_eq!(cache.get(&kind, fresh.generation), None, "a new topic changed the tables");
    assert_eq!(held.groups[0].len(), 2, "the held set was copied, not changed");
    assert!(!Arc::ptr_eq(&held.groups[0], &fresh.groups[0]));
    assert!(String::from_utf8_lossy(&fresh.build(&kind)).contains("T0"));
    t.assert_consistent();
}
