// Command goverify verifies a presented chain the way a Go TLS client would: crypto/x509's
// Verify with the server name, the trust anchors, the presented intermediates, a fixed time and
// the serverAuth extended key usage.
//
// Usage: goverify CHAIN.pem ROOTS.pem NAME EPOCH
// Prints "accept" (exit 0) or "reject: REASON" (exit 1); exit 2 on a usage or file error.
package main

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"strconv"
	"time"
)

func readCertificates(path string) ([]*x509.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return certs, nil
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			// A client that cannot parse a certificate rejects the chain.
			return nil, fmt.Errorf("parse: %v", err)
		}
		certs = append(certs, cert)
	}
}

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: goverify CHAIN.pem ROOTS.pem NAME EPOCH")
		os.Exit(2)
	}
	epoch, err := strconv.ParseInt(os.Args[4], 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goverify: bad EPOCH:", err)
		os.Exit(2)
	}
	chain, err := readCertificates(os.Args[1])
	if err != nil || len(chain) == 0 {
		fmt.Println("reject: chain:", err)
		os.Exit(1)
	}
	anchors, err := readCertificates(os.Args[2])
	if err != nil {
		fmt.Println("reject: roots:", err)
		os.Exit(1)
	}
	roots := x509.NewCertPool()
	for _, c := range anchors {
		roots.AddCert(c)
	}
	intermediates := x509.NewCertPool()
	for _, c := range chain[1:] {
		intermediates.AddCert(c)
	}
	_, err = chain[0].Verify(x509.VerifyOptions{
		DNSName:       os.Args[3],
		Roots:         roots,
		Intermediates: intermediates,
		CurrentTime:   time.Unix(epoch, 0),
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		fmt.Println("reject:", err)
		os.Exit(1)
	}
	fmt.Println("accept")
}
