//! How nsadmin reads fastjson's JSON beyond what serde does by itself: `null` for an empty
//! collection, and objects read as pairs sorted by key (a map of a few entries without a tree
//! node, or one read in place). Whole bodies are read by `wire` (owned) and `in_place`.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde::{Serialize, Serializer};

/// Reads `null` as the type's default, as fastjson does for a missing collection.
pub fn null_default<'de, D: Deserializer<'de>, T: Default + Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A JSON object as pairs sorted by key, the last of a repeated key kept.
struct Pairs<K, V>(Vec<(K, V)>);

impl<'de, K: Deserialize<'de> + Ord, V: Deserialize<'de>> Deserialize<'de> for Pairs<K, V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct PairsVisitor<K, V>(PhantomData<(K, V)>);
        impl<'de, K: Deserialize<'de> + Ord, V: Deserialize<'de>> Visitor<'de> for PairsVisitor<K, V> {
            type Value = Pairs<K, V>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut pairs: Vec<(K, V)> = Vec::new();
                while let Some(pair) = map.next_entry()? {
                    pairs.push(pair);
                }
                // Stable: of equal keys the last read stays last, and takes the first's place.
                pairs.sort_by(|a, b| a.0.cmp(&b.0));
                pairs.dedup_by(|later, kept| {
                    let same = later.0 == kept.0;
                    if same {
                        std::mem::swap(&mut later.1, &mut kept.1);
                    }
                    same
                });
                Ok(Pairs(pairs))
            }
        }
        d.deserialize_map(PairsVisitor(PhantomData))
    }
}

/// Reads a JSON object (or `null`) as pairs sorted by key: a map with few entries each, member
/// addresses by broker id, without a tree node per map.
pub fn sorted_pairs<'de, D, K, V>(d: D) -> Result<Vec<(K, V)>, D::Error>
where
    D: Deserializer<'de>,
    K: Deserialize<'de> + Ord,
    V: Deserialize<'de>,
{
    Ok(Option::<Pairs<K, V>>::deserialize(d)?.map(|p| p.0).unwrap_or_default())
}

/// Writes pairs as a JSON object.
pub fn pairs_as_map<S: Serializer, K: Serialize, V: Serialize>(pairs: &[(K, V)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize, Serialize)]
    struct Members {
        #[serde(default, deserialize_with = "sorted_pairs", serialize_with = "pairs_as_map")]
        addrs: Vec<(i64, String)>,
    }

    #[test]
    fn objects_read_as_pairs_sorted_by_key_keep_the_last_of_a_repeated_key() {
        let read: Members = serde_json::from_str(r#"{"addrs":{"10":"j","2":"b","0":"a","2":"c"}}"#).expect("parses");
        assert_eq!(read.addrs, [(0, "a".to_owned()), (2, "c".to_owned()), (10, "j".to_owned())]);
        assert_eq!(serde_json::to_string(&read).expect("writes"), r#"{"addrs":{"0":"a","2":"c","10":"j"}}"#);
        let none: Members = serde_json::from_str(r#"{"addrs":null}"#).expect("null is empty");
        assert!(none.addrs.is_empty());
        assert!(serde_json::from_str::<Members>(r#"{"addrs":["a"]}"#).is_err(), "an array is no object");
    }
}
