// A concurrent TLS inventory client on Go's crypto/tls, the engine tlsx and zgrab2 are built on,
// for bench/fleet to compare getcert's fleet mode against. Standard library only (Debian's Go
// 1.19). For each target of the list it dials, handshakes, verifies the chain and the name
// against --ca-file, and writes one JSON line with the presented chain as PEM: the work
// `getcert -f LIST -o json --ca-file ROOT` does, minus getcert's extra checks.
//
// Usage: fleet-client -f LIST -ca-file ROOT [-concurrency 50] [-timeout 10s]
// Prints "verified N of M" on stderr; exits 1 when any target did not verify.
package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"
)

type result struct {
	Target string   `json:"target"`
	OK     bool     `json:"ok"`
	Error  string   `json:"error,omitempty"`
	Chain  []string `json:"chain"`
}

func probe(target string, roots *x509.CertPool, timeout time.Duration) result {
	r := result{Target: target, Chain: []string{}}
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	dialer := &net.Dialer{Timeout: timeout}
	conn, err := tls.DialWithDialer(dialer, "tcp", target,
		&tls.Config{RootCAs: roots, ServerName: host})
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer conn.Close()
	for _, c := range conn.ConnectionState().PeerCertificates {
		r.Chain = append(r.Chain, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})))
	}
	r.OK = true
	return r
}

func main() {
	list := flag.String("f", "", "file with one host:port per line")
	caFile := flag.String("ca-file", "", "PEM file of trusted roots")
	concurrency := flag.Int("concurrency", 50, "targets in flight at once")
	timeout := flag.Duration("timeout", 10*time.Second, "per-target dial and handshake timeout")
	flag.Parse()

	pemRoots, err := os.ReadFile(*caFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet-client:", err)
		os.Exit(2)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pemRoots) {
		fmt.Fprintln(os.Stderr, "fleet-client: no certificate in", *caFile)
		os.Exit(2)
	}
	in, err := os.Open(*list)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet-client:", err)
		os.Exit(2)
	}
	var targets []string
	scanner := bufio.NewScanner(in)
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			targets = append(targets, line)
		}
	}
	in.Close()

	jobs := make(chan string)
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	verified := 0
	var wg sync.WaitGroup
	for i := 0; i < *concurrency; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range jobs {
				r := probe(t, roots, *timeout)
				line, _ := json.Marshal(r)
				mu.Lock()
				out.Write(line)
				out.WriteByte('\n')
				if r.OK {
					verified++
				}
				mu.Unlock()
			}
		}()
	}
	for _, t := range targets {
		jobs <- t
	}
	close(jobs)
	wg.Wait()
	out.Flush()
	fmt.Fprintf(os.Stderr, "verified %d of %d\n", verified, len(targets))
	if verified != len(targets) {
		os.Exit(1)
	}
}
