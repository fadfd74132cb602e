//! Kernel uevents (NETLINK_KOBJECT_UEVENT): the datagram parser, the bounded
//! queue between the receive thread and TypeScript, and the socket with the
//! thread that drains it. See docs/decisions.md, "Hotplug by uevents".

pub mod parse;
pub mod queue;
pub mod stream;
