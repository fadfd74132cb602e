//! rtnetlink (links, addresses, routes, change events) and the DHCPv4 client
//! socket. Messages are encoded and decoded by hand (`message.rs`) to keep the
//! addon small; each object kind has one module with its pure codec and the
//! few calls that use a socket.

pub mod addr;
pub mod dhcp_socket;
pub mod events;
pub mod link;
pub mod link_kind;
pub mod message;
pub mod route;
pub mod socket;
