//! Every key, in the order the settings groups declare them: read off each group's own
//! `Deserialize` impl (serde hands a struct's field names to the deserializer it is given), so
//! a key added to a group is known to the unknown-key check and its message at once.
//!
//! Written here rather than taken from a crate: it is one deserializer that records what serde
//! passes to `deserialize_struct` and stops, and the crates that offer it bring much more.

use std::sync::LazyLock;

use serde::de::{self, Deserialize, Deserializer, Visitor};

use super::{
    AclSettings, ControllerSettings, LimitSettings, ListenSettings, ObserveSettings, RoutingSettings, StateSettings,
    TlsSettings,
};

/// Every key, group by group in the order [`super::Settings`] holds them.
pub static KEY_ORDER: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    [
        fields::<ListenSettings>(),
        fields::<RoutingSettings>(),
        fields::<StateSettings>(),
        fields::<LimitSettings>(),
        fields::<ObserveSettings>(),
        fields::<AclSettings>(),
        fields::<TlsSettings>(),
        fields::<ControllerSettings>(),
    ]
    .concat()
});

/// The field names of the struct `T`, in declaration order.
pub(super) fn fields<T: for<'de> Deserialize<'de>>() -> &'static [&'static str] {
    let mut names: &'static [&'static str] = &[];
    // Always an error: the recorder reads the names and deserializes nothing.
    let _ = T::deserialize(FieldNames(&mut names));
    names
}

/// A deserializer that records the field names serde passes to `deserialize_struct`.
struct FieldNames<'a>(&'a mut &'static [&'static str]);

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("field names only"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = fields;
        Err(de::Error::custom("field names only"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keys_are_each_groups_fields_in_order() {
        assert_eq!(&KEY_ORDER[..2], ["bind_address", "listen_port"]);
        assert!(KEY_ORDER.contains(&"broker_timeout_ms") && KEY_ORDER.contains(&"security_reload_settle_ms"));
        let mut unique = KEY_ORDER.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), KEY_ORDER.len(), "no key in two groups");
    }
}
