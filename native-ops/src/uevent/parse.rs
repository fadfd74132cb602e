//! The kernel's uevent datagram: a header `ACTION@DEVPATH`, then `KEY=VALUE`
//! strings, each ending in NUL. Pure and total: a datagram that is empty,
//! larger than [`MAX_MESSAGE`], not NUL-terminated (truncated), without a
//! header, with a line that is not `KEY=VALUE`, with more than [`MAX_KEYS`]
//! keys, or whose ACTION/DEVPATH disagree with its header is refused.

use std::collections::BTreeMap;

/// The largest datagram accepted. The kernel builds a uevent in a 2 KiB
/// environment buffer (UEVENT_BUFFER_SIZE) plus the header; 8 KiB leaves room.
pub const MAX_MESSAGE: usize = 8192;
/// The most keys accepted; the kernel's limit is 64 (UEVENT_NUM_ENVP).
pub const MAX_KEYS: usize = 64;

/// One parsed uevent. The fields the controllers use are typed; every key
/// (including those) is in `vars`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uevent {
    pub action: String,
    pub devpath: String,
    pub subsystem: String,
    pub devname: Option<String>,
    pub devtype: Option<String>,
    pub interface: Option<String>,
    pub ifindex: Option<u32>,
    pub seqnum: Option<u64>,
    pub major: Option<u32>,
    pub minor: Option<u32>,
    pub vars: BTreeMap<String, String>,
}

/// Why a datagram was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    Empty,
    TooLarge(usize),
    Truncated,
    BadHeader,
    BadPair(usize),
    TooManyKeys,
    NotUtf8,
    Missing(&'static str),
    Mismatch(&'static str),
    BadNumber(&'static str),
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Empty => write!(f, "empty uevent"),
            Self::TooLarge(n) => write!(f, "uevent of {n} bytes exceeds {MAX_MESSAGE}"),
            Self::Truncated => write!(f, "uevent not NUL-terminated (truncated)"),
            Self::BadHeader => write!(f, "uevent header is not ACTION@DEVPATH"),
            Self::BadPair(i) => write!(f, "uevent line {i} is not KEY=VALUE"),
            Self::TooManyKeys => write!(f, "uevent has more than {MAX_KEYS} keys"),
            Self::NotUtf8 => write!(f, "uevent is not UTF-8"),
            Self::Missing(k) => write!(f, "uevent lacks {k}"),
            Self::Mismatch(k) => write!(f, "uevent {k} disagrees with its header"),
            Self::BadNumber(k) => write!(f, "uevent {k} is not a number"),
        }
    }
}

/// Parse one datagram as the kernel sends it.
pub fn parse(buf: &[u8]) -> Result<Uevent, ParseError> {
    if buf.is_empty() {
        return Err(ParseError::Empty);
    }
    if buf.len() > MAX_MESSAGE {
        return Err(ParseError::TooLarge(buf.len()));
    }
    if buf[buf.len() - 1] != 0 {
        return Err(ParseError::Truncated);
    }
    let text = std::str::from_utf8(&buf[..buf.len() - 1]).map_err(|_| ParseError::NotUtf8)?;
    let mut lines = text.split('\0');
    let header = lines.next().ok_or(ParseError::BadHeader)?;
    let (h_action, h_devpath) = header.split_once('@').ok_or(ParseError::BadHeader)?;
    if h_action.is_empty() || !h_devpath.starts_with('/') {
        return Err(ParseError::BadHeader);
    }
    let mut vars = BTreeMap::new();
    for (i, line) in lines.enumerate() {
        let (k, v) = line.split_once('=').ok_or(ParseError::BadPair(i + 1))?;
        if k.is_empty() {
            return Err(ParseError::BadPair(i + 1));
        }
        if vars.len() == MAX_KEYS {
            return Err(ParseError::TooManyKeys);
        }
        vars.insert(k.to_string(), v.to_string());
    }
    let action = required(&vars, "ACTION")?;
    let devpath = required(&vars, "DEVPATH")?;
    if action != h_action {
        return Err(ParseError::Mismatch("ACTION"));
    }
    if devpath != h_devpath {
        return Err(ParseError::Mismatch("DEVPATH"));
    }
    Ok(Uevent {
        action,
        devpath,
        subsystem: required(&vars, "SUBSYSTEM")?,
        devname: vars.get("DEVNAME").cloned(),
        devtype: vars.get("DEVTYPE").cloned(),
        interface: vars.get("INTERFACE").cloned(),
        ifindex: number(&vars, "IFINDEX")?,
        seqnum: number(&vars, "SEQNUM")?,
        major: number(&vars, "MAJOR")?,
        minor: number(&vars, "MINOR")?,
        vars,
    })
}

fn required(vars: &BTreeMap<String, String>, key: &'static str) -> Result<String, ParseError> {
    vars.get(key).cloned().ok_or(ParseError::Missing(key))
}

fn number<T: std::str::FromStr>(
    vars: &BTreeMap<String, String>,
    key: &'static str,
) -> Result<Option<T>, ParseError> {
    vars.get(key)
        .map(|v| v.parse().map_err(|_| ParseError::BadNumber(key)))
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(lines: &[&str]) -> Vec<u8> {
        let mut out = Vec::new();
        for l in lines {
            out.extend_from_slice(l.as_bytes());
            out.push(0);
        }
        out
    }

    const LOOP: &[&str] = &[
        "add@/devices/virtual/block/loop0",
        "ACTION=add",
        "DEVPATH=/devices/virtual/block/loop0",
        "SUBSYSTEM=block",
        "MAJOR=7",
        "MINOR=0",
        "DEVNAME=loop0",
        "DEVTYPE=disk",
        "DISKSEQ=12",
        "SEQNUM=4711",
    ];

    #[test]
    fn parses_a_block_add() {
        let ev = parse(&msg(LOOP)).unwrap();
        assert_eq!(ev.action, "add");
        assert_eq!(ev.devpath, "/devices/virtual/block/loop0");
        assert_eq!(ev.subsystem, "block");
        assert_eq!(ev.devname.as_deref(), Some("loop0"));
        assert_eq!(ev.devtype.as_deref(), Some("disk"));
        assert_eq!(
            (ev.major, ev.minor, ev.seqnum),
            (Some(7), Some(0), Some(4711))
        );
        assert_eq!(ev.vars.get("DISKSEQ").map(String::as_str), Some("12"));
        assert_eq!(ev.vars.len(), 9);
    }

    #[test]
    fn parses_a_net_add_and_empty_values() {
        let ev = parse(&msg(&[
            "add@/devices/virtual/net/veth0",
            "ACTION=add",
            "DEVPATH=/devices/virtual/net/veth0",
            "SUBSYSTEM=net",
            "INTERFACE=veth0",
            "IFINDEX=17",
            "EMPTY=",
            "SEQNUM=5",
        ]))
        .unwrap();
        assert_eq!(ev.interface.as_deref(), Some("veth0"));
        assert_eq!(ev.ifindex, Some(17));
        assert_eq!(ev.vars.get("EMPTY").map(String::as_str), Some(""));
        assert_eq!(ev.devname, None);
    }

    #[test]
    fn refuses_truncated_and_oversized() {
        let full = msg(LOOP);
        assert_eq!(parse(&full[..full.len() - 1]), Err(ParseError::Truncated));
        assert_eq!(parse(&full[..10]), Err(ParseError::Truncated));
        assert_eq!(parse(&[]), Err(ParseError::Empty));
        let mut big = msg(LOOP);
        big.extend(msg(&[&format!("PAD={}", "x".repeat(MAX_MESSAGE))]));
        assert_eq!(parse(&big), Err(ParseError::TooLarge(big.len())));
    }

    #[test]
    fn refuses_malformed() {
        assert_eq!(
            parse(&msg(&["add/devices/x", "ACTION=add"])),
            Err(ParseError::BadHeader)
        );
        assert_eq!(parse(&msg(&["@/devices/x"])), Err(ParseError::BadHeader));
        assert_eq!(parse(&msg(&["add@devices"])), Err(ParseError::BadHeader));
        // libudev's re-broadcasts start with a magic, not a header.
        assert_eq!(
            parse(b"libudev\0\xfe\xed\xca\xfe\0"),
            Err(ParseError::NotUtf8)
        );
        let mut no_eq = LOOP.to_vec();
        no_eq.push("GARBAGE");
        assert_eq!(parse(&msg(&no_eq)), Err(ParseError::BadPair(10)));
        let mut empty_key = LOOP.to_vec();
        empty_key.push("=x");
        assert_eq!(parse(&msg(&empty_key)), Err(ParseError::BadPair(10)));
        assert_eq!(
            parse(&msg(&[
                "add@/devices/x",
                "ACTION=add",
                "DEVPATH=/devices/x"
            ])),
            Err(ParseError::Missing("SUBSYSTEM"))
        );
        assert_eq!(
            parse(&msg(&[
                "add@/devices/x",
                "ACTION=remove",
                "DEVPATH=/devices/x",
                "SUBSYSTEM=b"
            ])),
            Err(ParseError::Mismatch("ACTION"))
        );
        assert_eq!(
            parse(&msg(&[
                "add@/devices/x",
                "ACTION=add",
                "DEVPATH=/devices/y",
                "SUBSYSTEM=b"
            ])),
            Err(ParseError::Mismatch("DEVPATH"))
        );
        let mut bad_num = LOOP.to_vec();
        bad_num.push("IFINDEX=-1");
        assert_eq!(parse(&msg(&bad_num)), Err(ParseError::BadNumber("IFINDEX")));
    }

    #[test]
    fn refuses_too_many_keys() {
        let keys: Vec<String> = (0..MAX_KEYS).map(|i| format!("K{i}=v")).collect();
        let mut lines: Vec<&str> = LOOP.to_vec();
        lines.extend(keys.iter().map(String::as_str));
        assert_eq!(parse(&msg(&lines)), Err(ParseError::TooManyKeys));
    }
}
