//! Netlink wire format, without any socket: building requests and parsing
//! replies as byte buffers, so every encoding rule (4-byte alignment, nested
//! attributes, NLMSG_ERROR payloads) is covered by plain cargo tests.

/// Size of `struct nlmsghdr`.
pub const NLMSG_HDRLEN: usize = 16;
/// Size of `struct nlattr` / `struct rtattr`.
pub const NLA_HDRLEN: usize = 4;
/// Attribute type bits (strips NLA_F_NESTED and NLA_F_NET_BYTEORDER).
pub const NLA_TYPE_MASK: u16 = 0x3fff;
/// Flag marking a nested attribute.
pub const NLA_F_NESTED: u16 = 0x8000;

pub const NLMSG_NOOP: u16 = 1;
pub const NLMSG_ERROR: u16 = 2;
pub const NLMSG_DONE: u16 = 3;
pub const NLMSG_OVERRUN: u16 = 4;

pub const NLM_F_REQUEST: u16 = 0x1;
pub const NLM_F_MULTI: u16 = 0x2;
pub const NLM_F_ACK: u16 = 0x4;
pub const NLM_F_DUMP_INTR: u16 = 0x10;
pub const NLM_F_ROOT: u16 = 0x100;
pub const NLM_F_MATCH: u16 = 0x200;
pub const NLM_F_DUMP: u16 = NLM_F_ROOT | NLM_F_MATCH;
pub const NLM_F_REPLACE: u16 = 0x100;
pub const NLM_F_EXCL: u16 = 0x200;
pub const NLM_F_CREATE: u16 = 0x400;
/// Set on an NLMSG_ERROR whose echoed request was cut to its header.
pub const NLM_F_CAPPED: u16 = 0x100;
/// Set on an NLMSG_ERROR that carries extended-ack attributes.
pub const NLM_F_ACK_TLVS: u16 = 0x200;
/// Extended-ack attribute holding the kernel's human-readable message.
pub const NLMSGERR_ATTR_MSG: u16 = 1;

/// Round `n` up to the netlink alignment of 4 bytes.
pub const fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// Builds one netlink message: header, fixed family header, then attributes.
#[derive(Debug, Clone)]
pub struct MsgBuilder {
    buf: Vec<u8>,
    nests: Vec<usize>,
}

impl MsgBuilder {
    /// Start a message of `msg_type` with `flags` (NLM_F_REQUEST is added).
    pub fn new(msg_type: u16, flags: u16) -> Self {
        let mut buf = vec![0u8; NLMSG_HDRLEN];
        buf[4..6].copy_from_slice(&msg_type.to_ne_bytes());
        buf[6..8].copy_from_slice(&(flags | NLM_F_REQUEST).to_ne_bytes());
        Self {
            buf,
            nests: Vec::new(),
        }
    }

    /// Append a fixed-size family header (ifinfomsg, ifaddrmsg, rtmsg...), padded.
    pub fn header(mut self, bytes: &[u8]) -> Self {
        self.buf.extend_from_slice(bytes);
        self.pad();
        self
    }

    /// Append one attribute with a raw payload.
    pub fn attr(mut self, ty: u16, payload: &[u8]) -> Self {
        let len = (NLA_HDRLEN + payload.len()) as u16;
        self.buf.extend_from_slice(&len.to_ne_bytes());
        self.buf.extend_from_slice(&ty.to_ne_bytes());
        self.buf.extend_from_slice(payload);
        self.pad();
        self
    }

    /// Append a native-endian u32 attribute.
    pub fn attr_u32(self, ty: u16, v: u32) -> Self {
        self.attr(ty, &v.to_ne_bytes())
    }

    /// Append a NUL-terminated string attribute.
    pub fn attr_str(self, ty: u16, s: &str) -> Self {
        let mut v = s.as_bytes().to_vec();
        v.push(0);
        self.attr(ty, &v)
    }

    /// Open a nested attribute; close it with [`MsgBuilder::end_nest`].
    pub fn begin_nest(mut self, ty: u16) -> Self {
        self.nests.push(self.buf.len());
        self.buf.extend_from_slice(&0u16.to_ne_bytes());
        self.buf
            .extend_from_slice(&(ty | NLA_F_NESTED).to_ne_bytes());
        self
    }

    /// Close the innermost nested attribute, fixing its length.
    pub fn end_nest(mut self) -> Self {
        if let Some(start) = self.nests.pop() {
            let len = (self.buf.len() - start) as u16;
            self.buf[start..start + 2].copy_from_slice(&len.to_ne_bytes());
        }
        self
    }

    /// Finish with sequence number `seq`; the length field is filled in.
    pub fn finish(mut self, seq: u32) -> Vec<u8> {
        let len = self.buf.len() as u32;
        self.buf[0..4].copy_from_slice(&len.to_ne_bytes());
        self.buf[8..12].copy_from_slice(&seq.to_ne_bytes());
        self.buf
    }

    fn pad(&mut self) {
        let n = align4(self.buf.len());
        self.buf.resize(n, 0);
    }
}

/// One parsed netlink message borrowing its payload from the receive buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NlMsg<'a> {
    pub msg_type: u16,
    pub flags: u16,
    pub seq: u32,
    pub pid: u32,
    pub payload: &'a [u8],
}

/// A malformed buffer: the kernel never sends one, so this means a bug or a
/// truncated read, reported as EBADMSG by the socket layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub &'static str);

/// Split a receive buffer into messages.
pub fn parse_messages(mut buf: &[u8]) -> Result<Vec<NlMsg<'_>>, Malformed> {
    let mut out = Vec::new();
    while buf.len() >= NLMSG_HDRLEN {
        let len = u32_at(buf, 0) as usize;
        if len < NLMSG_HDRLEN || len > buf.len() {
            return Err(Malformed("nlmsg_len out of range"));
        }
        out.push(NlMsg {
            msg_type: u16_at(buf, 4),
            flags: u16_at(buf, 6),
            seq: u32_at(buf, 8),
            pid: u32_at(buf, 12),
            payload: &buf[NLMSG_HDRLEN..len],
        });
        buf = &buf[align4(len).min(buf.len())..];
    }
    Ok(out)
}

/// Iterate `(type, payload)` over a run of attributes; the type is masked with
/// [`NLA_TYPE_MASK`]. Stops quietly at a truncated tail.
pub fn attrs(buf: &[u8]) -> AttrIter<'_> {
    AttrIter { buf }
}

/// Iterator returned by [`attrs`].
pub struct AttrIter<'a> {
    buf: &'a [u8],
}

impl<'a> Iterator for AttrIter<'a> {
    type Item = (u16, &'a [u8]);
    fn next(&mut self) -> Option<Self::Item> {
        if self.buf.len() < NLA_HDRLEN {
            return None;
        }
        let len = u16_at(self.buf, 0) as usize;
        if len < NLA_HDRLEN || len > self.buf.len() {
            return None;
        }
        let ty = u16_at(self.buf, 2) & NLA_TYPE_MASK;
        let payload = &self.buf[NLA_HDRLEN..len];
        self.buf = &self.buf[align4(len).min(self.buf.len())..];
        Some((ty, payload))
    }
}

/// The errno (positive; 0 = ACK) and the kernel's extended-ack message of an
/// NLMSG_ERROR payload.
pub fn parse_error(msg: &NlMsg<'_>) -> Result<(i32, Option<String>), Malformed> {
    if msg.payload.len() < 4 {
        return Err(Malformed("short NLMSG_ERROR"));
    }
    let errno = -(u32_at(msg.payload, 0) as i32);
    let mut text = None;
    if msg.flags & NLM_F_ACK_TLVS != 0 && msg.payload.len() >= 4 + NLMSG_HDRLEN {
        let echoed_len = if msg.flags & NLM_F_CAPPED != 0 {
            NLMSG_HDRLEN
        } else {
            u32_at(msg.payload, 4) as usize
        };
        let start = align4(4 + echoed_len);
        if start <= msg.payload.len() {
            for (ty, v) in attrs(&msg.payload[start..]) {
                if ty == NLMSGERR_ATTR_MSG {
                    text = Some(c_string(v));
                }
            }
        }
    }
    Ok((errno, text))
}

/// Read a native-endian u16 at `off` (caller checks bounds).
pub fn u16_at(b: &[u8], off: usize) -> u16 {
    u16::from_ne_bytes([b[off], b[off + 1]])
}

/// Read a native-endian u32 at `off` (caller checks bounds).
pub fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_ne_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

/// A u32 attribute payload, if it has the right size.
pub fn as_u32(v: &[u8]) -> Option<u32> {
    (v.len() >= 4).then(|| u32_at(v, 0))
}

/// A NUL-terminated string attribute payload.
pub fn c_string(v: &[u8]) -> String {
    let end = v.iter().position(|&b| b == 0).unwrap_or(v.len());
    String::from_utf8_lossy(&v[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_aligned_message() {
        let msg = MsgBuilder::new(16, NLM_F_ACK)
            .header(&[1, 2, 3])
            .attr_str(3, "eth0")
            .attr_u32(4, 1500)
            .finish(7);
        // 16 header + 4 (3 padded) + 4+5 -> 12 + 8
        assert_eq!(msg.len(), 16 + 4 + 12 + 8);
        assert_eq!(u32_at(&msg, 0) as usize, msg.len());
        assert_eq!(u16_at(&msg, 6), NLM_F_ACK | NLM_F_REQUEST);
        assert_eq!(u32_at(&msg, 8), 7);
        let parsed = parse_messages(&msg).unwrap();
        assert_eq!(parsed.len(), 1);
        let a: Vec<_> = attrs(&parsed[0].payload[4..]).collect();
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].0, 3);
        assert_eq!(c_string(a[0].1), "eth0");
        assert_eq!(as_u32(a[1].1), Some(1500));
    }

    #[test]
    fn nests_attributes() {
        let msg = MsgBuilder::new(16, 0)
            .begin_nest(18)
            .attr_str(1, "veth")
            .end_nest()
            .finish(1);
        let parsed = parse_messages(&msg).unwrap();
        let (ty, inner) = attrs(parsed[0].payload).next().unwrap();
        assert_eq!(ty, 18);
        let (ity, v) = attrs(inner).next().unwrap();
        assert_eq!(ity, 1);
        assert_eq!(c_string(v), "veth");
    }

    #[test]
    fn splits_multiple_messages_and_rejects_bad_length() {
        let mut buf = MsgBuilder::new(16, 0).header(&[0; 16]).finish(1);
        buf.extend(MsgBuilder::new(NLMSG_DONE, 0).header(&[0; 4]).finish(1));
        let parsed = parse_messages(&buf).unwrap();
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed[1].msg_type, NLMSG_DONE);
        buf[0] = 255; // length beyond the buffer
        assert!(parse_messages(&buf).is_err());
    }

    #[test]
    fn decodes_error_with_extended_ack() {
        let echoed = MsgBuilder::new(20, 0).finish(9);
        let mut payload = (-libc::EEXIST).to_ne_bytes().to_vec();
        payload.extend_from_slice(&echoed[..NLMSG_HDRLEN]);
        let tlv = MsgBuilder::new(0, 0).attr_str(NLMSGERR_ATTR_MSG, "already there");
        let tlv = tlv.finish(0);
        payload.extend_from_slice(&tlv[NLMSG_HDRLEN..]);
        let mut msg = MsgBuilder::new(NLMSG_ERROR, 0).header(&payload).finish(9);
        msg[6..8].copy_from_slice(&(NLM_F_CAPPED | NLM_F_ACK_TLVS).to_ne_bytes());
        let parsed = parse_messages(&msg).unwrap();
        let (errno, text) = parse_error(&parsed[0]).unwrap();
        assert_eq!(errno, libc::EEXIST);
        assert_eq!(text.as_deref(), Some("already there"));
    }

    #[test]
    fn ack_is_errno_zero() {
        let mut payload = 0i32.to_ne_bytes().to_vec();
        payload.extend_from_slice(&[0; NLMSG_HDRLEN]);
        let msg = MsgBuilder::new(NLMSG_ERROR, 0).header(&payload).finish(3);
        let parsed = parse_messages(&msg).unwrap();
        assert_eq!(parse_error(&parsed[0]).unwrap(), (0, None));
    }
}
