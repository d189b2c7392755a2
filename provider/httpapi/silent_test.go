package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/provider"
	"github.com/retrysafe/retrysafe/provider/httpapi"
)

// silentServer accepts connections and never answers: it reads what is
// sent (into got) and holds the connection open.
func silentServer(t *testing.T) (addr string, got func() string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		seen  []byte
		conns []net.Conn
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() {
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					mu.Lock()
					seen = append(seen, buf[:n]...)
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String(), func() string { mu.Lock(); defer mu.Unlock(); return string(seen) }
}

// A dispatch that times out before its connection is made — an https URL
// whose server never answers the TLS handshake — sent no byte of the
// request: not applied, "not sent", never unknown. One that timed out
// after the request was written (plain HTTP to the same silent server)
// stays unknown: the server may have acted on it.
func TestATimeoutBeforeTheRequestIsWrittenIsNotApplied(t *testing.T) {
	for _, c := range []struct {
		scheme  string
		unknown bool
	}{
		{"https", false},
		{"http", true},
	} {
		t.Run(c.scheme, func(t *testing.T) {
			ctx := context.Background()
			addr, got := silentServer(t)
			p, err := httpapi.New(httpapi.Config{Name: "mail", Timeout: 300 * time.Millisecond,
				Dispatch: httpapi.Endpoint{URL: c.scheme + "://" + addr + "/send"}})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := p.Dispatch(ctx, provider.Request{DownstreamKey: "k", Args: json.RawMessage(`{}`)})
			if c.unknown {
				if !errors.Is(err, provider.ErrAmbiguous) {
					t.Fatalf("%+v, %v; want ambiguous (unknown)", resp, err)
				}
				return
			}
			if err != nil || resp.Status != provider.NotApplied || !strings.Contains(resp.Detail, "not sent") {
				t.Fatalf("%+v, %v; want not applied, not sent", resp, err)
			}
			if !strings.Contains(resp.Detail, "no connection within the timeout (provider mail's, 300ms)") {
				t.Fatalf("detail %q; want it to say no connection was made in time", resp.Detail)
			}
			if strings.Contains(got(), "POST") {
				t.Fatalf("the server was sent the request: %q", got())
			}
		})
	}
}

// A dispatch whose call's deadline ran out before it started is never
// dialled: not applied, "not sent".
func TestADispatchWhoseDeadlineRanOutIsNotSent(t *testing.T) {
	addr, got := silentServer(t)
	p, err := httpapi.New(httpapi.Config{Name: "mail", Timeout: time.Second, Dispatch: httpapi.Endpoint{URL: "http://" + addr + "/send"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	resp, err := p.Dispatch(ctx, provider.Request{DownstreamKey: "k", Args: json.RawMessage(`{}`)})
	if err != nil || resp.Status != provider.NotApplied || !strings.Contains(resp.Detail, "not sent") {
		t.Fatalf("%+v, %v; want not applied, not sent", resp, err)
	}
	if got() != "" {
		t.Fatalf("the server was sent %q", got())
	}
}
