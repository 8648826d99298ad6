//! webpkiverify: judges chains the way a rustls 0.20 client does, through webpki 0.22 (Debian's
//! librust-webpki-dev, the predecessor of rustls-webpki).
//!
//! One process judges a batch: each line of stdin is
//!   CHAIN.pem TAB ROOTS.pem TAB NAME TAB EPOCH TAB PROOFS
//! and gets one line on stdout, "accept" or "reject: REASON". PROOFS is a file of lines
//! "SCHEME HEX-SIGNATURE" over the message below, made with the leaf's private key by
//! run-differential.py: webpki checks no key of the leaf while verifying the chain; rustls then
//! verifies the server's handshake signature with it, and this is that check (a key that fits no
//! signature scheme rustls offers fails the handshake).
//!
//! The checks, in rustls 0.20's order (WebPkiVerifier::verify_server_cert):
//! EndEntityCert::try_from, verify_is_valid_tls_server_cert (serverAuth, at EPOCH, the
//! algorithms rustls allows), verify_is_valid_for_dns_name, then the handshake signature.
//! webpki 0.22 cannot verify an IP address: a NAME that is not a DNS name is rejected, as
//! rustls 0.20 refuses to connect to one.

use std::io::{self, BufRead, Write};

pub const PROOF_MESSAGE: &[u8] = b"getcert differential: the server's handshake signature";

// rustls 0.20's verify.rs SUPPORTED_SIG_ALGS.
static SUPPORTED_SIG_ALGS: &[&webpki::SignatureAlgorithm] = &[
    &webpki::ECDSA_P256_SHA256,
    &webpki::ECDSA_P256_SHA384,
    &webpki::ECDSA_P384_SHA256,
    &webpki::ECDSA_P384_SHA384,
    &webpki::ED25519,
    &webpki::RSA_PSS_2048_8192_SHA256_LEGACY_KEY,
    &webpki::RSA_PSS_2048_8192_SHA384_LEGACY_KEY,
    &webpki::RSA_PSS_2048_8192_SHA512_LEGACY_KEY,
    &webpki::RSA_PKCS1_2048_8192_SHA256,
    &webpki::RSA_PKCS1_2048_8192_SHA384,
    &webpki::RSA_PKCS1_2048_8192_SHA512,
    &webpki::RSA_PKCS1_3072_8192_SHA384,
];

fn b64_decode(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' | b'\n' | b'\r' | b' ' | b'\t' => continue,
            _ => return Err(format!("bad base64 byte {}", c)),
        };
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Ok(out)
}

fn read_pem(path: &str) -> Result<Vec<Vec<u8>>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {}", path, e))?;
    let mut certs = Vec::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("-----BEGIN CERTIFICATE-----") {
        let body = &rest[start + 27..];
        let end = body.find("-----END CERTIFICATE-----").ok_or("unterminated PEM")?;
        certs.push(b64_decode(&body[..end])?);
        rest = &body[end..];
    }
    Ok(certs)
}

fn hex_decode(text: &str) -> Result<Vec<u8>, String> {
    (0..text.len() / 2)
        .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|e| e.to_string()))
        .collect()
}

static ECDSA_SHA256: &[&webpki::SignatureAlgorithm] =
    &[&webpki::ECDSA_P256_SHA256, &webpki::ECDSA_P384_SHA256];
static ECDSA_SHA384: &[&webpki::SignatureAlgorithm] =
    &[&webpki::ECDSA_P256_SHA384, &webpki::ECDSA_P384_SHA384];
static ED25519: &[&webpki::SignatureAlgorithm] = &[&webpki::ED25519];
static RSA_PSS_SHA256: &[&webpki::SignatureAlgorithm] =
    &[&webpki::RSA_PSS_2048_8192_SHA256_LEGACY_KEY];
static RSA_PKCS1_SHA256: &[&webpki::SignatureAlgorithm] = &[&webpki::RSA_PKCS1_2048_8192_SHA256];

/// The algorithms webpki may verify a handshake signature of SCHEME with.
fn scheme_algs(scheme: &str) -> &'static [&'static webpki::SignatureAlgorithm] {
    match scheme {
        "ecdsa-sha256" => ECDSA_SHA256,
        "ecdsa-sha384" => ECDSA_SHA384,
        "ed25519" => ED25519,
        "rsa-pss-sha256" => RSA_PSS_SHA256,
        "rsa-pkcs1-sha256" => RSA_PKCS1_SHA256,
        _ => &[],
    }
}

fn judge(fields: &[&str]) -> Result<(), String> {
    if fields.len() != 5 {
        return Err(format!("expected 5 tab-separated fields, got {}", fields.len()));
    }
    let chain = read_pem(fields[0])?;
    let roots = read_pem(fields[1])?;
    let name = fields[2];
    let at: u64 = fields[3].parse().map_err(|e| format!("bad EPOCH: {}", e))?;
    if chain.is_empty() {
        return Err("empty chain".into());
    }
    let mut anchors = Vec::new();
    for der in &roots {
        // rustls skips a root webpki cannot read (RootCertStore::add_parsable_certificates).
        if let Ok(a) = webpki::TrustAnchor::try_from_cert_der(der) {
            anchors.push(a);
        }
    }
    let ee = webpki::EndEntityCert::try_from(chain[0].as_slice())
        .map_err(|e| format!("leaf: {:?}", e))?;
    let intermediates: Vec<&[u8]> = chain[1..].iter().map(|c| c.as_slice()).collect();
    ee.verify_is_valid_tls_server_cert(
        SUPPORTED_SIG_ALGS,
        &webpki::TlsServerTrustAnchors(&anchors),
        &intermediates,
        webpki::Time::from_seconds_since_unix_epoch(at),
    )
    .map_err(|e| format!("chain: {:?}", e))?;
    let dns = webpki::DnsNameRef::try_from_ascii_str(name)
        .map_err(|_| format!("'{}' is not a DNS name (webpki 0.22 verifies no IP address)", name))?;
    ee.verify_is_valid_for_dns_name(dns).map_err(|e| format!("name: {:?}", e))?;
    let proofs = std::fs::read_to_string(fields[4]).map_err(|e| format!("{}: {}", fields[4], e))?;
    let mut last = String::from("no TLS signature scheme rustls offers fits the leaf's key");
    for line in proofs.lines() {
        let mut parts = line.split(' ');
        let (scheme, sig) = (parts.next().unwrap_or(""), hex_decode(parts.next().unwrap_or(""))?);
        for alg in scheme_algs(scheme) {
            match ee.verify_signature(alg, PROOF_MESSAGE, &sig) {
                Ok(()) => return Ok(()),
                Err(webpki::Error::UnsupportedSignatureAlgorithmForPublicKey) => {}
                Err(e) => last = format!("handshake signature ({}): {:?}", scheme, e),
            }
        }
    }
    Err(last)
}

fn main() {
    let stdin = io::stdin();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    for line in stdin.lock().lines() {
        let line = line.expect("stdin");
        let fields: Vec<&str> = line.split('\t').collect();
        let answer = match judge(&fields) {
            Ok(()) => "accept".to_string(),
            Err(why) => format!("reject: {}", why),
        };
        writeln!(out, "{}", answer).expect("stdout");
        out.flush().expect("stdout");
    }
}
