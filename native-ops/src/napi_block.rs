//! Thin `#[napi]` wrappers over `block/`; every call runs on a blocking
//! worker thread and returns a Promise.

use crate::block::ioctl;
use crate::error::SysResult;
use napi::bindgen_prelude::spawn_blocking;
use napi_derive::napi;

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> SysResult<T> + Send + 'static,
) -> napi::Result<T> {
    spawn_blocking(f)
        .await
        .map_err(|e| napi::Error::from_reason(format!("worker failed: {e}")))?
        .map_err(napi::Error::from)
}

/// Size and sector sizes of a block device.
#[napi(object)]
pub struct BlockGeometry {
    /// Bytes (BLKGETSIZE64).
    pub size: i64,
    /// BLKSSZGET.
    pub logical_sector_size: u32,
    /// BLKPBSZGET.
    pub physical_sector_size: u32,
    /// BLKROGET.
    pub read_only: bool,
}

/// Read a block device's geometry (ENOTTY on a regular file).
#[napi]
pub async fn block_geometry(path: String) -> napi::Result<BlockGeometry> {
    let g = blocking(move || ioctl::geometry(&path)).await?;
    Ok(BlockGeometry {
        size: g.size as i64,
        logical_sector_size: g.logical_sector_size,
        physical_sector_size: g.physical_sector_size,
        read_only: g.read_only,
    })
}

/// BLKRRPART (EBUSY when a partition is in use).
#[napi]
pub async fn block_reread_partitions(path: String) -> napi::Result<()> {
    blocking(move || ioctl::reread_partitions(&path)).await
}

/// BLKFLSBUF: write back and drop the device's page cache.
#[napi]
pub async fn block_flush_buffers(path: String) -> napi::Result<()> {
    blocking(move || ioctl::flush_buffers(&path)).await
}

/// BLKPG_ADD_PARTITION: `start` and `length` in bytes.
#[napi]
pub async fn block_add_partition(
    path: String,
    number: u32,
    start: i64,
    length: i64,
) -> napi::Result<()> {
    blocking(move || {
        ioctl::blkpg(
            &path,
            ioctl::BLKPG_ADD_PARTITION,
            number,
            start as u64,
            length as u64,
        )
    })
    .await
}

/// BLKPG_DEL_PARTITION.
#[napi]
pub async fn block_delete_partition(path: String, number: u32) -> napi::Result<()> {
    blocking(move || ioctl::blkpg(&path, ioctl::BLKPG_DEL_PARTITION, number, 0, 0)).await
}

/// BLKPG_RESIZE_PARTITION: `start` must stay the same; `length` in bytes.
#[napi]
pub async fn block_resize_partition(
    path: String,
    number: u32,
    start: i64,
    length: i64,
) -> napi::Result<()> {
    blocking(move || {
        ioctl::blkpg(
            &path,
            ioctl::BLKPG_RESIZE_PARTITION,
            number,
            start as u64,
            length as u64,
        )
    })
    .await
}

/// BLKDISCARD of `length` bytes at `offset`.
#[napi]
pub async fn block_discard(path: String, offset: i64, length: i64) -> napi::Result<()> {
    blocking(move || ioctl::discard(&path, offset as u64, length as u64)).await
}
