//! Just enough of the protobuf wire format and of gRPC's message framing for
//! the Watch fan-out: which event a `WatchResponse` carries, the identity
//! (namespace, type, id) of the `Resource` in it, and the few messages the
//! edge writes itself (`created` from a kept resource, `bootstrapped`,
//! `overflow{dropped}`). Hand-written so the edge takes no protobuf
//! dependency; every read is bounds-checked and a malformed input is an
//! error, never a panic (tests below).

use bytes::{BufMut, Bytes, BytesMut};

/// Why bytes are not the message they should be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// A varint, length or field ran past the end.
    Truncated,
    /// A varint of more than 10 bytes.
    VarintTooLong,
    /// A wire type protobuf does not define, or a group (never in machined's messages).
    BadWireType(u8),
    /// Field number 0.
    BadFieldNumber,
    /// A gRPC message with the compressed flag (the edge asks machined for identity).
    Compressed,
    /// A gRPC message larger than the bound.
    TooLarge(u64),
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Truncated => write!(f, "truncated message"),
            WireError::VarintTooLong => write!(f, "varint longer than 10 bytes"),
            WireError::BadWireType(t) => write!(f, "unsupported wire type {t}"),
            WireError::BadFieldNumber => write!(f, "field number 0"),
            WireError::Compressed => write!(f, "compressed message"),
            WireError::TooLarge(n) => write!(f, "message of {n} bytes over the bound"),
        }
    }
}

/// Reads a varint at `*at`, advancing it.
pub fn varint(buf: &[u8], at: &mut usize) -> Result<u64, WireError> {
    let mut value = 0u64;
    for i in 0..10 {
        let b = *buf.get(*at).ok_or(WireError::Truncated)?;
        *at += 1;
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(WireError::VarintTooLong)
}

/// One field's value; length-delimited ones borrow the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    Varint(u64),
    Fixed64,
    Len(&'a [u8]),
    Fixed32,
}

/// The fields of one message, in wire order; stops at the first error.
pub struct Fields<'a> {
    buf: &'a [u8],
    at: usize,
    failed: bool,
}

/// Iterates the fields of `buf`.
pub fn fields(buf: &[u8]) -> Fields<'_> {
    Fields {
        buf,
        at: 0,
        failed: false,
    }
}

impl<'a> Fields<'a> {
    fn field(&mut self) -> Result<(u64, Value<'a>), WireError> {
        let tag = varint(self.buf, &mut self.at)?;
        let number = tag >> 3;
        if number == 0 {
            return Err(WireError::BadFieldNumber);
        }
        let value = match (tag & 7) as u8 {
            0 => Value::Varint(varint(self.buf, &mut self.at)?),
            1 => {
                self.skip(8)?;
                Value::Fixed64
            }
            2 => {
                let n = varint(self.buf, &mut self.at)?;
                let start = self.at;
                self.skip(n)?;
                Value::Len(&self.buf[start..self.at])
            }
            5 => {
                self.skip(4)?;
                Value::Fixed32
            }
            t => return Err(WireError::BadWireType(t)),
        };
        Ok((number, value))
    }

    fn skip(&mut self, n: u64) -> Result<(), WireError> {
        let left = (self.buf.len() - self.at) as u64;
        if n > left {
            return Err(WireError::Truncated);
        }
        self.at += n as usize;
        Ok(())
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u64, Value<'a>), WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.at >= self.buf.len() {
            return None;
        }
        let r = self.field();
        self.failed = r.is_err();
        Some(r)
    }
}

/// What one `WatchResponse` says (machine.proto); resources as sub-slices of the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Created(Bytes),
    /// The resource as it is now (ResourceUpdate.resource).
    Updated(Bytes),
    Destroyed(Bytes),
    Bootstrapped,
    Overflow(u64),
    /// No event field the edge knows (passed on, changes nothing).
    Other,
}

/// Decodes the event of a `WatchResponse` (the oneof's last field wins, as in protobuf).
pub fn watch_event(message: &Bytes) -> Result<Event, WireError> {
    let mut event = Event::Other;
    for f in fields(message) {
        event = match f? {
            (1, Value::Len(r)) => Event::Created(message.slice_ref(r)),
            (2, Value::Len(u)) => Event::Updated(message.slice_ref(update_resource(u)?)),
            (3, Value::Len(r)) => Event::Destroyed(message.slice_ref(r)),
            (4, Value::Len(_)) => Event::Bootstrapped,
            (5, Value::Len(o)) => Event::Overflow(overflow_dropped(o)?),
            _ => continue,
        };
    }
    Ok(event)
}

/// ResourceUpdate.resource (field 1); empty when absent.
fn update_resource(update: &[u8]) -> Result<&[u8], WireError> {
    let mut resource: &[u8] = &update[..0];
    for f in fields(update) {
        if let (1, Value::Len(r)) = f? {
            resource = r;
        }
    }
    Ok(resource)
}

fn overflow_dropped(overflow: &[u8]) -> Result<u64, WireError> {
    let mut dropped = 0;
    for f in fields(overflow) {
        if let (1, Value::Varint(n)) = f? {
            dropped = n;
        }
    }
    Ok(dropped)
}

/// A resource's identity, `Resource.metadata`'s namespace, type and id,
/// each length-prefixed so that no two identities share bytes.
pub fn resource_key(resource: &[u8]) -> Result<Vec<u8>, WireError> {
    let mut id: [&[u8]; 3] = [&[], &[], &[]];
    for f in fields(resource) {
        if let (1, Value::Len(metadata)) = f? {
            for m in fields(metadata) {
                if let (n @ 1..=3, Value::Len(s)) = m? {
                    id[n as usize - 1] = s;
                }
            }
        }
    }
    let mut key = Vec::with_capacity(id.iter().map(|s| s.len() + 10).sum());
    for part in id {
        put_varint(&mut key, part.len() as u64);
        key.extend_from_slice(part);
    }
    Ok(key)
}

fn put_varint(out: &mut impl BufMut, mut v: u64) {
    while v >= 0x80 {
        out.put_u8((v as u8) | 0x80);
        v >>= 7;
    }
    out.put_u8(v as u8);
}

fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// A gRPC message (flags 0, big-endian length, bytes) whose body is field
/// `number` (length-delimited) holding `payload`: the shape of every
/// `WatchResponse` the edge writes.
fn frame_with_field(number: u8, payload: &[u8]) -> Bytes {
    let body = 1 + varint_len(payload.len() as u64) + payload.len();
    let mut out = BytesMut::with_capacity(5 + body);
    out.put_u8(0);
    out.put_u32(body as u32);
    out.put_u8((number << 3) | 2);
    put_varint(&mut out, payload.len() as u64);
    out.put_slice(payload);
    out.freeze()
}

/// `WatchResponse{created: resource}` as a gRPC message, as machined encodes it.
pub fn created_frame(resource: &[u8]) -> Bytes {
    frame_with_field(1, resource)
}

/// `WatchResponse{bootstrapped: {}}` as a gRPC message.
pub fn bootstrapped_frame() -> Bytes {
    frame_with_field(4, &[])
}

/// `WatchResponse{overflow: {dropped}}` as a gRPC message (proto3: 0 is omitted).
pub fn overflow_frame(dropped: u64) -> Bytes {
    let mut o = Vec::with_capacity(11);
    if dropped != 0 {
        o.push(0x08);
        put_varint(&mut o, dropped);
    }
    frame_with_field(5, &o)
}

/// Splits a byte stream into whole gRPC messages (5-byte prefix included),
/// without copying a message that arrives in one chunk.
#[derive(Debug)]
pub struct Deframer {
    partial: BytesMut,
    max: u64,
}

impl Deframer {
    /// Messages larger than `max` bytes (after the prefix) are an error.
    pub fn new(max: u64) -> Deframer {
        Deframer {
            partial: BytesMut::new(),
            max,
        }
    }

    /// Bytes held toward an incomplete message.
    #[cfg(test)]
    pub fn pending(&self) -> usize {
        self.partial.len()
    }

    /// Takes `chunk`, appending each completed message to `out`.
    pub fn push(&mut self, mut chunk: Bytes, out: &mut Vec<Bytes>) -> Result<(), WireError> {
        if !self.partial.is_empty() {
            self.partial.extend_from_slice(&chunk);
            while let Some(n) = self.complete(&self.partial)? {
                out.push(self.partial.split_to(n).freeze());
            }
            return Ok(());
        }
        while let Some(n) = self.complete(&chunk)? {
            out.push(chunk.split_to(n));
        }
        self.partial.extend_from_slice(&chunk);
        Ok(())
    }

    /// The length of the whole message at the start of `buf`, once it is all there.
    fn complete(&self, buf: &[u8]) -> Result<Option<usize>, WireError> {
        if buf.len() < 5 {
            return Ok(None);
        }
        if buf[0] & 1 != 0 {
            return Err(WireError::Compressed);
        }
        let len = u64::from(u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]));
        if len > self.max {
            return Err(WireError::TooLarge(len));
        }
        let whole = 5 + len as usize;
        Ok((buf.len() >= whole).then_some(whole))
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A Resource with metadata {namespace, type, id} and a spec field.
    pub fn resource(ns: &str, ty: &str, id: &str, spec: &[u8]) -> Vec<u8> {
        let mut md = Vec::new();
        for (n, s) in [(1u8, ns), (2, ty), (3, id)] {
            md.push((n << 3) | 2);
            put_varint(&mut md, s.len() as u64);
            md.extend_from_slice(s.as_bytes());
        }
        md.extend_from_slice(&[0x20, 0x07]); // version = 7
        let mut r = vec![0x0a];
        put_varint(&mut r, md.len() as u64);
        r.extend_from_slice(&md);
        r.push(0x12);
        put_varint(&mut r, spec.len() as u64);
        r.extend_from_slice(spec);
        r
    }

    fn message(frame: &Bytes) -> Bytes {
        frame.slice(5..)
    }

    #[test]
    fn varints_round_trip_and_are_bounded() {
        for v in [0, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert_eq!(b.len(), varint_len(v));
            let mut at = 0;
            assert_eq!(varint(&b, &mut at), Ok(v));
            assert_eq!(at, b.len());
        }
        assert_eq!(varint(&[0x80, 0x80], &mut 0), Err(WireError::Truncated));
        assert_eq!(varint(&[0xff; 11], &mut 0), Err(WireError::VarintTooLong));
    }

    #[test]
    fn reads_each_event_and_its_resource() {
        let r = resource("runtime", "ControllerStatus", "a", b"spec");
        let created = created_frame(&r);
        assert_eq!(
            watch_event(&message(&created)),
            Ok(Event::Created(Bytes::from(r.clone())))
        );
        let old = resource("runtime", "ControllerStatus", "a", b"old");
        let mut update = vec![0x0a, r.len() as u8];
        update.extend_from_slice(&r);
        update.extend_from_slice(&[0x12, old.len() as u8]);
        update.extend_from_slice(&old);
        let updated = frame_with_field(2, &update);
        assert_eq!(
            watch_event(&message(&updated)),
            Ok(Event::Updated(Bytes::from(r.clone())))
        );
        let destroyed = frame_with_field(3, &r);
        assert_eq!(
            watch_event(&message(&destroyed)),
            Ok(Event::Destroyed(Bytes::from(r.clone())))
        );
        assert_eq!(
            watch_event(&message(&bootstrapped_frame())),
            Ok(Event::Bootstrapped)
        );
        assert_eq!(
            watch_event(&message(&overflow_frame(4097))),
            Ok(Event::Overflow(4097))
        );
        assert_eq!(
            watch_event(&message(&overflow_frame(0))),
            Ok(Event::Overflow(0))
        );
        assert_eq!(watch_event(&Bytes::new()), Ok(Event::Other));
        assert_eq!(
            watch_event(&Bytes::from_static(&[0x30, 1])),
            Ok(Event::Other)
        );
    }

    #[test]
    fn frames_are_what_machined_writes() {
        // machined (bufbuild) encodes {bootstrapped: {}} as 22 00, {overflow: {dropped: 5}} as 2a 02 08 05.
        assert_eq!(&bootstrapped_frame()[..], &[0, 0, 0, 0, 2, 0x22, 0]);
        assert_eq!(&overflow_frame(5)[..], &[0, 0, 0, 0, 4, 0x2a, 2, 8, 5]);
        let big = vec![7u8; 300];
        let f = created_frame(&big);
        assert_eq!(&f[..8], &[0, 0, 0, 1, 47, 0x0a, 0xac, 0x02]);
        assert_eq!(f.len(), 5 + 303);
    }

    #[test]
    fn keys_name_namespace_type_and_id() {
        let a = resource("runtime", "ControllerStatus", "a", b"x");
        let a2 = resource("runtime", "ControllerStatus", "a", b"other spec");
        let b = resource("runtime", "ControllerStatus", "b", b"x");
        let c = resource("runtimeC", "ontrollerStatus", "a", b"x");
        assert_eq!(resource_key(&a), resource_key(&a2));
        assert_ne!(resource_key(&a), resource_key(&b));
        assert_ne!(resource_key(&a), resource_key(&c));
        assert_eq!(resource_key(&[]), Ok(vec![0, 0, 0]));
    }

    #[test]
    fn malformed_input_is_an_error_never_a_panic() {
        let r = resource("ns", "T", "id", b"spec");
        let good = created_frame(&r);
        let msg = message(&good);
        // Every truncation and every single-byte corruption: an answer, no panic.
        for cut in 0..msg.len() {
            let m = msg.slice(..cut);
            let _ = watch_event(&m);
            let _ = resource_key(&m);
        }
        for i in 0..msg.len() {
            for v in [0x00, 0x07, 0x0f, 0x7f, 0x80, 0xff] {
                let mut m = msg.to_vec();
                m[i] = v;
                let m = Bytes::from(m);
                if let Ok(Event::Created(r)) = watch_event(&m) {
                    let _ = resource_key(&r);
                }
            }
        }
        assert_eq!(
            watch_event(&Bytes::from_static(&[0x0a, 0x05, 1])),
            Err(WireError::Truncated)
        );
        assert_eq!(
            watch_event(&Bytes::from_static(&[0x0b])),
            Err(WireError::BadWireType(3))
        );
        assert_eq!(
            watch_event(&Bytes::from_static(&[0x02, 0])),
            Err(WireError::BadFieldNumber)
        );
        // A length near u64::MAX is refused, not added to an index.
        let huge = [
            0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ];
        assert_eq!(
            watch_event(&Bytes::copy_from_slice(&huge)),
            Err(WireError::Truncated)
        );
        assert_eq!(
            resource_key(&[0x0a, 0x03, 0x0a, 0x09, 0x61]),
            Err(WireError::Truncated)
        );
    }

    #[test]
    fn deframes_across_chunks_without_copying_whole_ones() {
        let a = created_frame(&resource("n", "T", "a", b"1"));
        let b = created_frame(&resource("n", "T", "b", &[9u8; 100]));
        let mut stream = a.to_vec();
        stream.extend_from_slice(&b);
        for split in 0..=stream.len() {
            let mut d = Deframer::new(1024);
            let mut out = Vec::new();
            d.push(Bytes::copy_from_slice(&stream[..split]), &mut out)
                .unwrap();
            d.push(Bytes::copy_from_slice(&stream[split..]), &mut out)
                .unwrap();
            assert_eq!(out, vec![a.clone(), b.clone()], "split at {split}");
            assert_eq!(d.pending(), 0);
        }
        let whole = Bytes::from(stream);
        let mut out = Vec::new();
        Deframer::new(1024).push(whole.clone(), &mut out).unwrap();
        assert_eq!(out[0].as_ptr(), whole.as_ptr(), "sliced, not copied");
    }

    #[test]
    fn deframer_refuses_oversized_and_compressed_messages() {
        let mut out = Vec::new();
        let big = Bytes::from_static(&[0, 0, 0, 4, 1]);
        assert_eq!(
            Deframer::new(1024).push(big, &mut out),
            Err(WireError::TooLarge(1025))
        );
        let compressed = Bytes::from_static(&[1, 0, 0, 0, 0]);
        assert_eq!(
            Deframer::new(1024).push(compressed, &mut out),
            Err(WireError::Compressed)
        );
        // An oversized length is refused at its prefix: nothing is buffered toward it.
        let mut d = Deframer::new(16);
        assert!(d
            .push(Bytes::from_static(&[0, 0xff, 0xff, 0xff, 0xff]), &mut out)
            .is_err());
        assert!(out.is_empty());
    }
}
