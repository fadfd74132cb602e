//! Budgets a client holds against (docs/api.md, "Limits"; the one table is
//! api/edge/budgets.ts): who a client is before it shows a certificate (its
//! source: the IPv4 address, or the IPv6 /64 an attacker gets for free), and
//! a counting budget with a limit overall and per key whose slots are given
//! back when dropped, so no path can leak one.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Arc, Mutex};

/// Where a connection comes from, as budgets count it: an IPv4 address
/// (also when it arrives IPv4-mapped on an IPv6 socket) or an IPv6 /64, since
/// one IPv6 host is usually given a whole /64.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Source(IpAddr);

impl Source {
    pub fn of(ip: IpAddr) -> Source {
        match ip {
            IpAddr::V4(v4) => Source(IpAddr::V4(v4)),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Source(IpAddr::V4(v4)),
                None => {
                    let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                    Source(IpAddr::V6(Ipv6Addr::from(prefix)))
                }
            },
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            IpAddr::V4(v4) => write!(f, "{v4}"),
            IpAddr::V6(v6) => write!(f, "{v6}/64"),
        }
    }
}

/// Which limit a refused newcomer met, and the count it met.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Over {
    /// Every slot of the node is taken.
    Overall { limit: usize },
    /// Every slot of this key (source, certificate) is taken.
    PerKey { limit: usize },
}

struct Counts<K> {
    total: usize,
    per_key: HashMap<K, usize>,
}

/// A count of things held, bounded overall and per key.
pub struct Budget<K: Eq + Hash + Clone> {
    overall: usize,
    per_key: usize,
    counts: Mutex<Counts<K>>,
}

/// One thing held; given back when dropped.
pub struct Slot<K: Eq + Hash + Clone> {
    budget: Arc<Budget<K>>,
    key: K,
}

impl<K: Eq + Hash + Clone> Budget<K> {
    pub fn new(overall: usize, per_key: usize) -> Arc<Budget<K>> {
        Arc::new(Budget {
            overall,
            per_key,
            counts: Mutex::new(Counts {
                total: 0,
                per_key: HashMap::new(),
            }),
        })
    }

    /// A slot for `key`, or which limit refuses it. The per-key limit is
    /// checked first: a client over its own share is told so, not blamed on others.
    pub fn take(self: &Arc<Self>, key: &K) -> Result<Slot<K>, Over> {
        let mut c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let held = c.per_key.get(key).copied().unwrap_or(0);
        if held >= self.per_key {
            return Err(Over::PerKey {
                limit: self.per_key,
            });
        }
        if c.total >= self.overall {
            return Err(Over::Overall {
                limit: self.overall,
            });
        }
        c.total += 1;
        *c.per_key.entry(key.clone()).or_default() += 1;
        Ok(Slot {
            budget: self.clone(),
            key: key.clone(),
        })
    }

    /// Slots held now, overall.
    pub fn held(&self) -> usize {
        self.counts.lock().unwrap_or_else(|p| p.into_inner()).total
    }
}

impl<K: Eq + Hash + Clone> Drop for Slot<K> {
    fn drop(&mut self) {
        let mut c = self.budget.counts.lock().unwrap_or_else(|p| p.into_inner());
        c.total -= 1;
        if let Some(n) = c.per_key.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                c.per_key.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(s: &str) -> Source {
        Source::of(s.parse().unwrap())
    }

    #[test]
    fn ipv6_counts_by_slash_64_and_mapped_ipv4_as_ipv4() {
        assert_eq!(src("2001:db8:1:2:aaaa::1"), src("2001:db8:1:2:ffff:1:2:3"));
        assert_ne!(src("2001:db8:1:2::1"), src("2001:db8:1:3::1"));
        assert_eq!(src("2001:db8:1:2:aaaa::1").to_string(), "2001:db8:1:2::/64");
        assert_eq!(src("::ffff:10.0.0.7"), src("10.0.0.7"));
        assert_eq!(src("::ffff:10.0.0.7").to_string(), "10.0.0.7");
        assert_ne!(src("10.0.0.7"), src("10.0.0.8"));
        assert_eq!(src("::1").to_string(), "::/64");
    }

    #[test]
    fn refuses_at_the_limit_per_key_then_overall_and_drop_gives_back() {
        let b: Arc<Budget<&str>> = Budget::new(3, 2);
        let a1 = b.take(&"a").unwrap();
        let a2 = b.take(&"a").unwrap();
        assert_eq!(b.take(&"a").err(), Some(Over::PerKey { limit: 2 }));
        let b1 = b.take(&"b").unwrap();
        assert_eq!(b.take(&"c").err(), Some(Over::Overall { limit: 3 }));
        assert_eq!(b.held(), 3);
        drop(a1);
        assert_eq!(b.held(), 2);
        let c1 = b.take(&"c").unwrap();
        drop((a2, b1, c1));
        assert_eq!(b.held(), 0);
        assert!(b.counts.lock().unwrap().per_key.is_empty());
        // Every slot back: the full budget again.
        let again: Vec<_> = ["x", "x", "y"].iter().map(|k| b.take(k).unwrap()).collect();
        assert_eq!(again.len(), 3);
    }
}
