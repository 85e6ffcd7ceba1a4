//! A map built once and then only read: its entries in one vector, sorted by
//! key, found by binary search.
//!
//! A knowledge base's names and ids are written in key order; read back, the
//! vector of entries is the map as it is. A `BTreeMap` built from them sorted
//! them again (a stable sort, with scratch memory) and allocated its nodes,
//! at every start of `kb`.

use std::borrow::Borrow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{Error as _, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Entries sorted by key, each key once.
#[derive(Debug)]
#[cfg_attr(test, derive(PartialEq))]
pub(crate) struct SortedMap<K, V>(Vec<(K, V)>);

impl<K: Ord, V> SortedMap<K, V> {
    /// The map of `entries`, whose keys are distinct.
    pub(crate) fn from_distinct(mut entries: Vec<(K, V)>) -> Self {
        entries.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
        Self(entries)
    }

    /// The value of `key`.
    pub(crate) fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let at = self.0.binary_search_by(|(k, _)| k.borrow().cmp(key)).ok()?;
        self.0.get(at).map(|(_, value)| value)
    }

    /// The keys, in order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &K> {
        self.0.iter().map(|(key, _)| key)
    }

    /// The values, in the order of their keys.
    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        self.0.iter().map(|(_, value)| value)
    }
}

/// Written as a map, in key order: the same bytes a `BTreeMap` writes.
impl<K: Serialize, V: Serialize> Serialize for SortedMap<K, V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(key, value)| (key, value)))
    }
}

/// Read as written; bytes whose keys are out of order or repeated are
/// refused rather than sorted, as no knowledge base writes them.
impl<'de, K, V> Deserialize<'de> for SortedMap<K, V>
where
    K: Deserialize<'de> + Ord,
    V: Deserialize<'de>,
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries<K, V>(PhantomData<(K, V)>);

        impl<'de, K, V> Visitor<'de> for Entries<K, V>
        where
            K: Deserialize<'de> + Ord,
            V: Deserialize<'de>,
        {
            type Value = SortedMap<K, V>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map with its keys in order")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries: Vec<(K, V)> =
                    Vec::with_capacity(map.size_hint().unwrap_or(0).min(4096));
                while let Some((key, value)) = map.next_entry()? {
                    if entries.last().is_some_and(|(last, _)| *last >= key) {
                        return Err(A::Error::custom("map keys out of order or repeated"));
                    }
                    entries.push((key, value));
                }
                Ok(SortedMap(entries))
            }
        }

        deserializer.deserialize_map(Entries(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::SortedMap;

    proptest! {
        /// Finds what a `BTreeMap` of the same entries finds, and is written
        /// as the same bytes.
        #[test]
        fn agrees_with_a_btree_map(
            entries in prop::collection::btree_map("[a-d]{0,3}", any::<u16>(), 0..40),
            probes in prop::collection::vec("[a-d]{0,3}", 0..20),
        ) {
            let tree: BTreeMap<String, u16> = entries;
            let sorted = SortedMap::from_distinct(
                tree.iter().rev().map(|(k, v)| (k.clone(), *v)).collect(),
            );
            for probe in &probes {
                prop_assert_eq!(sorted.get(probe.as_str()), tree.get(probe));
            }
            prop_assert!(sorted.keys().eq(tree.keys()));
            prop_assert!(sorted.values().eq(tree.values()));
            let bytes = postcard::to_stdvec(&sorted).unwrap();
            prop_assert_eq!(&bytes, &postcard::to_stdvec(&tree).unwrap());
            let read: SortedMap<String, u16> = postcard::from_bytes(&bytes).unwrap();
            prop_assert_eq!(read, sorted);
        }
    }

    #[test]
    fn keys_out_of_order_or_repeated_are_refused() {
        for keys in [["b", "a"], ["a", "a"]] {
            let entries: Vec<(&str, u8)> = keys.iter().map(|k| (*k, 0)).collect();
            // Written as a map without sorting, as other bytes might be.
            let bytes = postcard::to_stdvec(&Unsorted(&entries)).unwrap();
            let read = postcard::from_bytes::<SortedMap<String, u8>>(&bytes);
            assert!(read.is_err(), "{keys:?} was accepted");
        }
    }

    struct Unsorted<'a>(&'a [(&'a str, u8)]);

    impl serde::Serialize for Unsorted<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
        }
    }
}
