package pgtest

import (
	"io"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// Proxy stands between a ledger and the test server, on a loopback TCP
// port of its own: Cut drops every connection through it (as a broken
// network or a killed server does, in the middle of a reply), Stop refuses
// new ones too — an outage for the ledger behind it, while the shared test
// server runs on undisturbed.
type Proxy struct {
	ln     net.Listener
	target func() (net.Conn, error)
	mu     sync.Mutex
	conns  []net.Conn
}

// NewProxy starts a proxy to the server of raw and returns it and raw's
// URL through it. It stops when the test ends.
func NewProxy(t testing.TB, raw string) (*Proxy, string) {
	t.Helper()
	cfg, err := pgconn.ParseConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	network, addr := "tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	if strings.HasPrefix(cfg.Host, "/") {
		network, addr = "unix", filepath.Join(cfg.Host, ".s.PGSQL."+strconv.Itoa(int(cfg.Port)))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: func() (net.Conn, error) { return net.Dial(network, addr) }}
	t.Cleanup(p.Stop)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := p.target()
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { io.Copy(s, c); s.Close() }()
			go func() { io.Copy(c, s); c.Close() }()
		}
	}()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Del("host")
	q.Set("sslmode", "disable")
	u.RawQuery, u.Host = q.Encode(), ln.Addr().String()
	return p, u.String()
}

// Addr is the proxy's address (in the URL NewProxy returned).
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut drops every connection through the proxy; new ones are taken.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Stop refuses new connections and drops the ones open.
func (p *Proxy) Stop() { p.ln.Close(); p.Cut() }
