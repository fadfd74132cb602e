//! The initramfs's boot phases measured into the TPM: `enter-initrd` before
//! the root image is looked at, `leave-initrd` before machined starts, each
//! the SHA-256 of the word extended into PCR 11, as systemd-pcrphase does.
//! With systemd-stub's measurement of the UKI's sections into the same PCR,
//! a host computes the value the node reaches at each phase from the UKI
//! alone (`systemd-measure calculate --phase=...`), so a secret sealed to it
//! opens only inside the initramfs of that UKI, or only after it.
//!
//! No TPM is not an error (most nodes have none); a TPM that refuses is
//! reported on the console and the boot goes on: what was sealed to the PCR
//! then stays sealed, which is the failure a measured boot wants.

use std::io::{Read, Write};

use crate::sha256::Sha256;

/// The PCR systemd-stub measures the UKI into and the phases extend.
pub const PHASE_PCR: u32 = 11;

const TPM_ST_SESSIONS: u16 = 0x8002;
const TPM_CC_PCR_EXTEND: u32 = 0x0000_0182;
const TPM_RS_PW: u32 = 0x4000_0009;
const TPM_ALG_SHA256: u16 = 0x000B;

/// TPM2_PCR_Extend of one SHA-256 digest into `pcr`, with the empty password
/// session (PCRs 0–15 need no other authorisation).
pub fn extend_command(pcr: u32, digest: &[u8; 32]) -> Vec<u8> {
    let mut c = Vec::with_capacity(65);
    c.extend_from_slice(&TPM_ST_SESSIONS.to_be_bytes());
    c.extend_from_slice(&0u32.to_be_bytes()); // size, set below
    c.extend_from_slice(&TPM_CC_PCR_EXTEND.to_be_bytes());
    c.extend_from_slice(&pcr.to_be_bytes());
    c.extend_from_slice(&9u32.to_be_bytes()); // authorization area
    c.extend_from_slice(&TPM_RS_PW.to_be_bytes());
    c.extend_from_slice(&0u16.to_be_bytes()); // nonce
    c.push(0); // session attributes
    c.extend_from_slice(&0u16.to_be_bytes()); // password (empty)
    c.extend_from_slice(&1u32.to_be_bytes()); // TPML_DIGEST_VALUES.count
    c.extend_from_slice(&TPM_ALG_SHA256.to_be_bytes());
    c.extend_from_slice(digest);
    let size = c.len() as u32;
    c[2..6].copy_from_slice(&size.to_be_bytes());
    c
}

/// The response code of a TPM response, or an error for one too short or
/// whose size field disagrees with its length.
pub fn response_code(resp: &[u8]) -> Result<u32, String> {
    if resp.len() < 10 {
        return Err(format!("a {}-byte response", resp.len()));
    }
    let size = u32::from_be_bytes(resp[2..6].try_into().unwrap()) as usize;
    if size != resp.len() {
        return Err(format!(
            "response says {size} bytes, carries {}",
            resp.len()
        ));
    }
    Ok(u32::from_be_bytes(resp[6..10].try_into().unwrap()))
}

/// The digest a phase word extends: SHA-256 of its bytes, no terminator.
pub fn phase_digest(word: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(word.as_bytes());
    h.digest()
}

/// Extend `word` into PCR 11 and say so on the console; nothing when the
/// node has no TPM.
pub fn measure_phase(word: &str) {
    let device = ["/dev/tpmrm0", "/dev/tpm0"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists());
    let Some(device) = device else { return };
    match extend(device, PHASE_PCR, &phase_digest(word)) {
        Ok(()) => crate::console(&format!(
            "machined-init: measured phase={word} pcr={PHASE_PCR} device={device}"
        )),
        Err(e) => crate::console(&format!(
            "machined-init: could not measure phase={word} into PCR {PHASE_PCR}: {e}"
        )),
    }
}

fn extend(device: &str, pcr: u32, digest: &[u8; 32]) -> Result<(), String> {
    let mut tpm = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(device)
        .map_err(|e| format!("open {device}: {e}"))?;
    tpm.write_all(&extend_command(pcr, digest))
        .map_err(|e| format!("write {device}: {e}"))?;
    let mut resp = [0u8; 64];
    let n = tpm
        .read(&mut resp)
        .map_err(|e| format!("read {device}: {e}"))?;
    match response_code(&resp[..n])? {
        0 => Ok(()),
        rc => Err(format!("TPM response code {rc:#x}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extend_command_is_the_tpm2_layout() {
        let c = extend_command(11, &[0xab; 32]);
        assert_eq!(c.len(), 65);
        assert_eq!(&c[0..2], &[0x80, 0x02]);
        assert_eq!(u32::from_be_bytes(c[2..6].try_into().unwrap()), 65);
        assert_eq!(&c[6..10], &[0, 0, 0x01, 0x82]);
        assert_eq!(&c[10..14], &[0, 0, 0, 11]);
        assert_eq!(&c[14..18], &[0, 0, 0, 9]);
        assert_eq!(&c[18..22], &[0x40, 0, 0, 0x09]);
        assert_eq!(&c[27..31], &[0, 0, 0, 1]);
        assert_eq!(&c[31..33], &[0, 0x0B]);
        assert_eq!(&c[33..], &[0xab; 32]);
    }

    #[test]
    fn response_codes_and_short_answers() {
        let ok = [
            0x80, 0x02, 0, 0, 0, 19, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        assert_eq!(response_code(&ok), Ok(0));
        let refused = [0x80, 0x01, 0, 0, 0, 10, 0, 0, 0x01, 0x01];
        assert_eq!(response_code(&refused), Ok(0x101));
        assert!(response_code(&[0x80, 0x01, 0, 0]).is_err());
        assert!(response_code(&[0x80, 0x01, 0, 0, 0, 99, 0, 0, 0, 0]).is_err());
    }

    #[test]
    fn a_phase_digest_is_the_sha256_of_the_word() {
        let hex: String = phase_digest("enter-initrd")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        // printf %s enter-initrd | sha256sum
        assert_eq!(
            hex,
            "51e6b92f405d1f98d96e3de343d61d420ad6923b25de21d766f9298192f14fed"
        );
    }
}
