//! Block devices: the ioctls machined needs. Partition tables and superblocks
//! are parsed in TypeScript (platform/block/), as pure functions over bytes,
//! so the imager can reuse them without any syscall.

pub mod ioctl;
