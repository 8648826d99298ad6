#!/usr/bin/env bash
# make-test-pki.sh OUTDIR
#
# Generates the complete getcert test PKI (root CA, intermediate CA, a set of
# server/client leaves with various properties, an unrelated "untrusted" CA)
# into OUTDIR. See testcerts/README.md and the generated OUTDIR/README.txt.
#
# - Needs only `openssl` (3.0+) and coreutils. Set OPENSSL=/path/to/openssl to
#   pick a specific binary.
# - Everything is generated in a temporary directory next to OUTDIR and renamed
#   into place at the end; an existing OUTDIR is replaced. OUTDIR/.complete is
#   written last, so its presence means the PKI is whole.
# - Never reads stdin, never prompts; safe to run as root without a TTY.
set -euo pipefail

prog=${0##*/}
die() { printf '%s: %s\n' "$prog" "$*" >&2; exit 1; }

[[ $# -eq 1 && -n $1 ]] || { printf 'usage: %s OUTDIR\n' "$prog" >&2; exit 2; }

OPENSSL=${OPENSSL:-openssl}
command -v "$OPENSSL" >/dev/null 2>&1 || die "openssl not found (set OPENSSL=...)"

umask 077
exec </dev/null

# ---------------------------------------------------------------------------
# Output / temp directory handling
# ---------------------------------------------------------------------------
out=$1
while [[ $out == */ && $out != / ]]; do out=${out%/}; done
[[ $out != / && $out != . && $out != .. ]] || die "refusing to use '$1' as OUTDIR"
parent=$(dirname -- "$out")
base=$(basename -- "$out")
mkdir -p -- "$parent"

tmp=$(mktemp -d -- "$parent/.$base.tmp.XXXXXX")
old=""
# shellcheck disable=SC2317  # invoked via trap
cleanup() {
    rm -rf -- "$tmp"
    [[ -z $old ]] || rm -rf -- "$old"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

work=$tmp/.work          # CA database, CSRs, extension files; removed before rename
mkdir -p "$work/newcerts"
: >"$work/index.txt"
log=$work/log

# Keep OpenSSL from touching anything outside the temp dir.
export RANDFILE=$work/.rnd
unset SSLKEYLOGFILE 2>/dev/null || true

# run CMD...: run quietly; on failure show the command and its output.
run() {
    if ! "$@" >"$log" 2>&1; then
        printf '%s: command failed: %s\n' "$prog" "$*" >&2
        cat "$log" >&2
        exit 1
    fi
}

# ---------------------------------------------------------------------------
# Dates (openssl ca -startdate/-enddate, YYYYMMDDHHMMSSZ, UTC)
# ---------------------------------------------------------------------------
now=$(date -u +%s)
day=86400
ts() { date -u -d "@$(( now + $1 * day ))" +%Y%m%d%H%M%SZ; }   # ts DAYS_FROM_NOW

# ---------------------------------------------------------------------------
# OpenSSL configuration: a minimal `openssl ca` setup plus all extension
# sections. copy_extensions = none and -extfile mean every certificate carries
# exactly the extensions of its section, nothing else.
# ---------------------------------------------------------------------------
AIA_URL="http://127.0.0.1:18080/intermediate.der"
OCSP_URL="http://127.0.0.1:18081"
CRL_URL="http://127.0.0.1:18080/intermediate.crl"
cnf=$work/openssl.cnf
ext=$work/ext.cnf

cat >"$cnf" <<EOF
[ ca ]
default_ca = CA_default

[ CA_default ]
dir             = $work
database        = \$dir/index.txt
new_certs_dir   = \$dir/newcerts
serial          = \$dir/serial
crlnumber       = \$dir/crlnumber
default_crl_days = 30
default_md      = sha256
default_days    = 365
policy          = policy_any
unique_subject  = no
email_in_dn     = no
copy_extensions = none
preserve        = yes

[ policy_any ]
commonName             = optional
organizationName       = optional

[ req ]
distinguished_name = req_dn
string_mask        = utf8only
prompt             = no

[ req_dn ]
CN = unused
EOF

cat >"$ext" <<EOF
[ v3_root ]
basicConstraints       = critical, CA:TRUE
keyUsage               = critical, keyCertSign, cRLSign
subjectKeyIdentifier   = hash

[ v3_intermediate ]
basicConstraints       = critical, CA:TRUE, pathlen:0
keyUsage               = critical, keyCertSign, cRLSign
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid:always
EOF

# add_leaf_section NAME KEYUSAGE EKU SAN(empty = none) AIA(yes|no|revocation)
#   revocation: AIA with CA Issuers + OCSP responder, and a CRL distribution point
add_leaf_section() {
    local name=$1 ku=$2 eku=$3 san=$4 aia=$5
    {
        printf '\n[ v3_%s ]\n' "$name"
        printf 'basicConstraints       = critical, CA:FALSE\n'
        printf 'keyUsage               = critical, %s\n' "$ku"
        printf 'extendedKeyUsage       = %s\n' "$eku"
        printf 'subjectKeyIdentifier   = hash\n'
        printf 'authorityKeyIdentifier = keyid:always\n'
        [[ $aia != yes ]] || printf 'authorityInfoAccess    = caIssuers;URI:%s\n' "$AIA_URL"
        if [[ $aia == revocation ]]; then
            printf 'authorityInfoAccess    = caIssuers;URI:%s, OCSP;URI:%s\n' "$AIA_URL" "$OCSP_URL"
            printf 'crlDistributionPoints  = URI:%s\n' "$CRL_URL"
        fi
        [[ -z $san ]] || printf 'subjectAltName         = %s\n' "$san"
    } >>"$ext"
}

# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------
# genkey NAME TYPE   (TYPE: ec | rsa | ed25519) -> $tmp/NAME.key (PKCS#8 PEM)
genkey() {
    local f=$tmp/$1.key
    case $2 in
        ec)      run "$OPENSSL" genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
                                        -pkeyopt ec_param_enc:named_curve -out "$f" ;;
        rsa)     run "$OPENSSL" genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$f" ;;
        ed25519) run "$OPENSSL" genpkey -algorithm ED25519 -out "$f" ;;
        *)       die "genkey: unknown key type $2" ;;
    esac
    chmod 0600 "$f"
}

# csr NAME SUBJECT -> $work/NAME.csr
csr() {
    run "$OPENSSL" req -new -config "$cnf" -key "$tmp/$1.key" -subj "$2" \
        -utf8 -out "$work/$1.csr"
}

# sign NAME ISSUER(name of CA file stem, or "self") EXTSECTION START_DAYS END_DAYS
#   -> $tmp/NAME.pem
sign() {
    local name=$1 issuer=$2 section=$3 start=$4 end=$5
    local -a who
    if [[ $issuer == self ]]; then
        who=(-selfsign -keyfile "$tmp/$name.key")
    else
        who=(-cert "$tmp/$issuer.pem" -keyfile "$tmp/$issuer.key")
    fi
    run "$OPENSSL" ca -batch -config "$cnf" "${who[@]}" \
        -in "$work/$name.csr" -out "$work/$name.crt" -notext -rand_serial \
        -md sha256 -preserveDN -utf8 \
        -extfile "$ext" -extensions "$section" \
        -startdate "$(ts "$start")" -enddate "$(ts "$end")"
    # Normalise to a plain PEM (no text dump, no trailing junk).
    run "$OPENSSL" x509 -in "$work/$name.crt" -out "$tmp/$name.pem"
    chmod 0644 "$tmp/$name.pem"
}

ROOT_SUBJ="/O=getcert tests/CN=getcert Test Root CA"
INT_SUBJ="/O=getcert tests/CN=getcert Test Intermediate CA"
UNTRUSTED_SUBJ="/O=elsewhere/CN=getcert Untrusted Root"

# ---------------------------------------------------------------------------
# CAs
# ---------------------------------------------------------------------------
genkey root ec
csr root "$ROOT_SUBJ"
sign root self v3_root -1 3650

genkey intermediate ec
csr intermediate "$INT_SUBJ"
sign intermediate root v3_intermediate -1 1825
run "$OPENSSL" x509 -in "$tmp/intermediate.pem" -outform DER -out "$tmp/intermediate.der"
chmod 0644 "$tmp/intermediate.der"

genkey untrusted-root ec
csr untrusted-root "$UNTRUSTED_SUBJ"
sign untrusted-root self v3_root -1 3650

# ---------------------------------------------------------------------------
# Leaves
# ---------------------------------------------------------------------------
KU_EC="digitalSignature"
KU_RSA="digitalSignature, keyEncipherment"

# leaf NAME KEYTYPE CN SAN START END [ISSUER=intermediate] [EKU=serverAuth]
leaf() {
    local name=$1 ktype=$2 cn=$3 san=$4 start=$5 end=$6
    local issuer=${7:-intermediate} eku=${8:-serverAuth}
    local ku=$KU_EC aia=no
    [[ $ktype != rsa ]] || ku=$KU_RSA
    [[ $issuer != intermediate ]] || aia=yes
    add_leaf_section "$name" "$ku" "$eku" "$san" "$aia"
    genkey "$name" "$ktype"
    csr "$name" "/CN=$cn"
    sign "$name" "$issuer" "v3_$name" "$start" "$end"
    case $issuer in
        self)         cat "$tmp/$name.pem" >"$tmp/$name-chain.pem" ;;
        *)            cat "$tmp/$name.pem" "$tmp/$issuer.pem" >"$tmp/$name-chain.pem" ;;
    esac
    chmod 0644 "$tmp/$name-chain.pem"
}

leaf rsa        rsa     rsa.test             "DNS:localhost, DNS:rsa.test, IP:127.0.0.1, IP:::1"      -1 365
leaf ecdsa      ec      ecdsa.test           "DNS:localhost, DNS:ecdsa.test, IP:127.0.0.1, IP:::1"    -1 365
leaf ed25519    ed25519 ed25519.test         "DNS:localhost, DNS:ed25519.test, IP:127.0.0.1, IP:::1"  -1 365
leaf wildcard   ec      '*.wild.test'        "DNS:*.wild.test"                                        -1 365
leaf ipsan      ec      127.0.0.1            "IP:127.0.0.1, IP:::1"                                   -1 365
leaf wronghost  ec      other.example        "DNS:other.example"                                      -1 365
leaf expired    ec      expired.test         "DNS:localhost, DNS:expired.test, IP:127.0.0.1"          -400 -12
leaf notyet     ec      notyet.test          "DNS:localhost, DNS:notyet.test, IP:127.0.0.1"           30 400
leaf expiring   ec      expiring.test        "DNS:localhost, DNS:expiring.test, IP:127.0.0.1"         -1 5
leaf sni-a      ec      a.sni.test           "DNS:a.sni.test"                                         -1 365
leaf sni-b      ec      b.sni.test           "DNS:b.sni.test"                                         -1 365
leaf client     ec      'getcert test client' ""                                                      -1 365 intermediate clientAuth
leaf selfsigned ec      selfsigned.test      "DNS:localhost, DNS:selfsigned.test, IP:127.0.0.1"       -1 365 self
leaf untrusted  ec      untrusted.test       "DNS:localhost, DNS:untrusted.test, IP:127.0.0.1"        -1 365 untrusted-root

# ---------------------------------------------------------------------------
# Revocation: leaves that name an OCSP responder and a CRL; one revoked, one the
# CA database does not know; the CRL, the responder's index, and pre-made OCSP
# responses for stapling (good, revoked, unknown, and one signed by the wrong key).
# ---------------------------------------------------------------------------
# rleaf NAME -> a P-256 leaf for localhost/127.0.0.1 with revocation pointers
rleaf() {
    local name=$1
    add_leaf_section "$name" "$KU_EC" serverAuth \
        "DNS:localhost, DNS:$name.test, IP:127.0.0.1" revocation
    genkey "$name" ec
    csr "$name" "/CN=$name.test"
}
rleaf good
sign good intermediate v3_good -1 365
rleaf revoked
sign revoked intermediate v3_revoked -1 365
# "unknown" is signed outside the CA database, so the responder has never heard of it.
rleaf unknown
run "$OPENSSL" x509 -req -in "$work/unknown.csr" -CA "$tmp/intermediate.pem" \
    -CAkey "$tmp/intermediate.key" -set_serial 0x0badc0de -days 365 -sha256 \
    -extfile "$ext" -extensions v3_unknown -out "$tmp/unknown.pem"
for n in good revoked unknown; do
    cat "$tmp/$n.pem" "$tmp/intermediate.pem" >"$tmp/$n-chain.pem"
    chmod 0644 "$tmp/$n.pem" "$tmp/$n-chain.pem"
done
echo 1000 >"$work/crlnumber"
run "$OPENSSL" ca -batch -config "$cnf" -cert "$tmp/intermediate.pem" \
    -keyfile "$tmp/intermediate.key" -revoke "$tmp/revoked.pem" -crl_reason keyCompromise
run "$OPENSSL" ca -batch -config "$cnf" -cert "$tmp/intermediate.pem" \
    -keyfile "$tmp/intermediate.key" -gencrl -out "$tmp/intermediate-crl.pem"
run "$OPENSSL" crl -in "$tmp/intermediate-crl.pem" -outform DER -out "$tmp/intermediate.crl"
cp "$work/index.txt" "$tmp/ocsp-index.txt"

# ocsp_response CERT OUT [SIGNER]: what the intermediate's responder says about CERT.
ocsp_response() {
    local cert=$1 out=$2 signer=${3:-intermediate}
    run "$OPENSSL" ocsp -issuer "$tmp/intermediate.pem" -cert "$tmp/$cert.pem" -no_nonce \
        -reqout "$work/$out.req"
    run "$OPENSSL" ocsp -index "$tmp/ocsp-index.txt" -CA "$tmp/intermediate.pem" \
        -rsigner "$tmp/$signer.pem" -rkey "$tmp/$signer.key" -reqin "$work/$out.req" \
        -respout "$tmp/$out" -ndays 7
}
ocsp_response good good-ocsp.der
ocsp_response revoked revoked-ocsp.der
ocsp_response unknown unknown-ocsp.der
ocsp_response good wrongkey-ocsp.der untrusted-root
chmod 0644 "$tmp"/*.der "$tmp"/*.crl "$tmp/intermediate-crl.pem" "$tmp/ocsp-index.txt"

# ---------------------------------------------------------------------------
# Trust stores
# ---------------------------------------------------------------------------
cp "$tmp/root.pem" "$tmp/ca-bundle.pem"
mkdir "$tmp/ca-dir"
cp "$tmp/root.pem" "$tmp/ca-dir/root.pem"
run "$OPENSSL" rehash "$tmp/ca-dir"
hashlink=""
for f in "$tmp"/ca-dir/????????.0; do if [[ -L $f ]]; then hashlink=${f##*/}; fi; done
[[ -n $hashlink ]] || die "openssl rehash created no hash link"
chmod 0755 "$tmp/ca-dir"
chmod 0644 "$tmp/ca-bundle.pem" "$tmp/ca-dir/root.pem"

# ---------------------------------------------------------------------------
# README.txt (one line per file; dates are the real ones from the certs)
# ---------------------------------------------------------------------------
validity() {
    local nb na
    nb=$("$OPENSSL" x509 -in "$tmp/$1.pem" -noout -startdate -dateopt iso_8601)
    na=$("$OPENSSL" x509 -in "$tmp/$1.pem" -noout -enddate -dateopt iso_8601)
    printf '%s .. %s' "${nb#notBefore=}" "${na#notAfter=}"
}

{
    echo "getcert test PKI -- generated $(date -u +%Y-%m-%dT%H:%M:%SZ) by testcerts/make-test-pki.sh. TEST USE ONLY, keys are not secret."
    echo "All files PEM unless noted; keys are unencrypted PKCS#8. Leaves have basicConstraints critical CA:FALSE, keyUsage critical digitalSignature (+keyEncipherment for RSA),"
    echo "EKU serverAuth (client: clientAuth), SKI, AKI; intermediate-issued leaves also carry AIA caIssuers;URI:$AIA_URL. NAME-chain.pem = leaf + issuing CA (what a server sends; never the root)."
    echo
    echo "root.key               P-256 key of the test root CA"
    echo "root.pem               CN=getcert Test Root CA,O=getcert tests; self-signed; CA:TRUE critical; KU critical keyCertSign,cRLSign; SKI; $(validity root)"
    echo "intermediate.key       P-256 key of the intermediate CA"
    echo "intermediate.pem       CN=getcert Test Intermediate CA,O=getcert tests; issued by root; CA:TRUE,pathlen:0 critical; KU critical keyCertSign,cRLSign; SKI+AKI; $(validity intermediate)"
    echo "intermediate.der       intermediate.pem in DER (served at $AIA_URL for AIA tests)"
    echo "untrusted-root.key     P-256 key of the unrelated CA"
    echo "untrusted-root.pem     CN=getcert Untrusted Root,O=elsewhere; self-signed CA, NOT in ca-bundle.pem/ca-dir; $(validity untrusted-root)"
    echo "rsa.{key,pem}          RSA 2048; CN=rsa.test; SAN DNS:localhost,DNS:rsa.test,IP:127.0.0.1,IP:::1; issued by intermediate; $(validity rsa)"
    echo "rsa-chain.pem          rsa.pem + intermediate.pem"
    echo "ecdsa.{key,pem}        P-256; CN=ecdsa.test; SAN DNS:localhost,DNS:ecdsa.test,IP:127.0.0.1,IP:::1; issued by intermediate; $(validity ecdsa)"
    echo "ecdsa-chain.pem        ecdsa.pem + intermediate.pem"
    echo "ed25519.{key,pem}      Ed25519; CN=ed25519.test; SAN DNS:localhost,DNS:ed25519.test,IP:127.0.0.1,IP:::1; issued by intermediate; $(validity ed25519)"
    echo "ed25519-chain.pem      ed25519.pem + intermediate.pem"
    echo "wildcard.{key,pem}     P-256; CN=*.wild.test; SAN DNS:*.wild.test only; issued by intermediate; $(validity wildcard)"
    echo "wildcard-chain.pem     wildcard.pem + intermediate.pem"
    echo "ipsan.{key,pem}        P-256; CN=127.0.0.1; SAN IP:127.0.0.1,IP:::1 only (no DNS); issued by intermediate; $(validity ipsan)"
    echo "ipsan-chain.pem        ipsan.pem + intermediate.pem"
    echo "wronghost.{key,pem}    P-256; CN=other.example; SAN DNS:other.example only (hostname mismatch for localhost/127.0.0.1); $(validity wronghost)"
    echo "wronghost-chain.pem    wronghost.pem + intermediate.pem"
    echo "expired.{key,pem}      P-256; CN=expired.test; SAN DNS:localhost,DNS:expired.test,IP:127.0.0.1; EXPIRED (now-400d .. now-12d): $(validity expired)"
    echo "expired-chain.pem      expired.pem + intermediate.pem"
    echo "notyet.{key,pem}       P-256; CN=notyet.test; SAN DNS:localhost,DNS:notyet.test,IP:127.0.0.1; NOT YET VALID (now+30d .. now+400d): $(validity notyet)"
    echo "notyet-chain.pem       notyet.pem + intermediate.pem"
    echo "expiring.{key,pem}     P-256; CN=expiring.test; SAN DNS:localhost,DNS:expiring.test,IP:127.0.0.1; EXPIRES SOON (now-1d .. now+5d): $(validity expiring)"
    echo "expiring-chain.pem     expiring.pem + intermediate.pem"
    echo "sni-a.{key,pem}        P-256; CN=a.sni.test; SAN DNS:a.sni.test only; issued by intermediate; $(validity sni-a)"
    echo "sni-a-chain.pem        sni-a.pem + intermediate.pem"
    echo "sni-b.{key,pem}        P-256; CN=b.sni.test; SAN DNS:b.sni.test only; issued by intermediate; $(validity sni-b)"
    echo "sni-b-chain.pem        sni-b.pem + intermediate.pem"
    echo "client.{key,pem}       P-256; CN=getcert test client; EKU clientAuth only; no SAN; issued by intermediate; $(validity client)"
    echo "client-chain.pem       client.pem + intermediate.pem"
    echo "selfsigned.{key,pem}   P-256; CN=selfsigned.test; self-signed, CA:FALSE; SAN DNS:localhost,DNS:selfsigned.test,IP:127.0.0.1; no AIA; $(validity selfsigned)"
    echo "selfsigned-chain.pem   selfsigned.pem only"
    echo "untrusted.{key,pem}    P-256; CN=untrusted.test; SAN DNS:localhost,DNS:untrusted.test,IP:127.0.0.1; issued by untrusted-root (no AIA); $(validity untrusted)"
    echo "untrusted-chain.pem    untrusted.pem + untrusted-root.pem"
    echo "good/revoked/unknown.{key,pem}, -chain.pem  P-256; CN=NAME.test; SAN DNS:localhost,DNS:NAME.test,IP:127.0.0.1; AIA caIssuers + OCSP;URI:$OCSP_URL; CRL DP $CRL_URL"
    echo "                       revoked: revoked (keyCompromise) in the CA database and CRL; unknown: signed outside the database"
    echo "intermediate.crl       DER CRL of the intermediate listing 'revoked' (also intermediate-crl.pem); serve at $CRL_URL"
    echo "ocsp-index.txt         CA database for: openssl ocsp -index ocsp-index.txt -CA intermediate.pem -rsigner intermediate.pem -rkey intermediate.key -port 18081"
    echo "good-ocsp.der, revoked-ocsp.der, unknown-ocsp.der   OCSP responses for stapling (s_server -status_file), valid 7 days"
    echo "wrongkey-ocsp.der      OCSP response about 'good' signed by the untrusted root (must be rejected)"
    echo "ca-bundle.pem          copy of root.pem (use as CAfile)"
    echo "ca-dir/                root.pem + hash link $hashlink (use as CApath)"
    echo "README.txt             this file"
    echo ".complete              stamp, written last; present only in a fully generated PKI"
} >"$tmp/README.txt"
chmod 0644 "$tmp/README.txt"

# ---------------------------------------------------------------------------
# Finish: drop scratch files, stamp, rename into place.
# ---------------------------------------------------------------------------
rm -rf -- "$work"
date -u +%Y-%m-%dT%H:%M:%SZ >"$tmp/.complete"
chmod 0644 "$tmp/.complete"
chmod 0755 "$tmp"

if [[ -e $out || -L $out ]]; then
    old=$(mktemp -d -- "$parent/.$base.old.XXXXXX")
    mv -T -- "$out" "$old/$base"
fi
if ! mv -T -- "$tmp" "$out"; then
    # Put the previous OUTDIR back rather than leaving nothing.
    [[ -z $old ]] || mv -T -- "$old/$base" "$out" 2>/dev/null || true
    die "could not move the new PKI into $out"
fi
# $tmp no longer exists; cleanup removes $old (the previous OUTDIR), if any.
exit 0
