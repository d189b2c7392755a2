package lab

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/config"
	"github.com/retrysafe/retrysafe/model"
)

// sandboxServer is a `retrysafe sandbox serve` process a lab run talks to
// over a real socket, with the config that points the demo tools at it.
type sandboxServer struct {
	cmd     *exec.Cmd
	addr    string
	dir     string // holds the config file
	config  string // --config for the workers
	cfg     *config.Config
	stopped bool
}

// startSandboxServer starts the sandbox server over the provider file pdb
// (the same binary as the workers, on a free loopback port) and writes a
// config whose "sandbox" and "sandbox-idem" providers are HTTP providers
// that reach it.
func (r *Runner) startSandboxServer(ctx context.Context, pdb string) (*sandboxServer, error) {
	args := append(append([]string{}, r.ServeArgs...), "--listen", "127.0.0.1:0", "--db", pdb, "--honour-keys", "sandbox-idem")
	if len(r.ServeArgs) == 0 {
		args = append([]string{"sandbox", "serve"}, args...)
	}
	cmd := exec.Command(r.Exe, args...)
	cmd.Env = append(os.Environ(), r.Env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, model.Wrap(model.CodeUnavailable, err, "lab: cannot start the sandbox server: %v", err)
	}
	s := &sandboxServer{cmd: cmd}
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- l
	}()
	select {
	case l := <-line:
		if _, err := fmt.Sscanf(l, "sandbox serving http://%s", &s.addr); err != nil {
			s.stop()
			return nil, model.Errorf(model.CodeUnavailable, "lab: the sandbox server did not start (it said %q)", strings.TrimSpace(l))
		}
	case <-time.After(10 * time.Second):
		s.stop()
		return nil, model.Errorf(model.CodeUnavailable, "lab: the sandbox server did not start within 10s")
	case <-ctx.Done():
		s.stop()
		return nil, ctx.Err()
	}
	if s.dir, err = os.MkdirTemp("", "retrysafe-lab-"); err != nil {
		s.stop()
		return nil, err
	}
	doc := labConfig(s.addr)
	s.config = filepath.Join(s.dir, "lab-tools.toml")
	if err := os.WriteFile(s.config, doc, 0o600); err != nil {
		s.stop()
		return nil, err
	}
	if s.cfg, err = config.Parse(s.config, doc, os.LookupEnv); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// labConfig is the built-in registry's tools with its sandbox providers
// reached over HTTP at addr.
func labConfig(addr string) []byte { return labConfigWith(addr, nil) }

// labConfigWith is labConfig whose dispatches also send headers.
func labConfigWith(addr string, headers map[string]string) []byte {
	var hdr strings.Builder
	if len(headers) > 0 {
		hdr.WriteString("[providers.dispatch.headers]\n")
		names := make([]string, 0, len(headers))
		for k := range headers {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			fmt.Fprintf(&hdr, "%q = %q\n", k, headers[k])
		}
	}
	var b strings.Builder
	for _, p := range []struct {
		name    string
		honours bool
	}{{"sandbox", false}, {"sandbox-idem", true}} {
		fmt.Fprintf(&b, `[[providers]]
name = %[1]q
kind = "http"
honours_keys = %[2]t
timeout = "5s"
[providers.dispatch]
url = "http://%[3]s/v1/%[1]s/deliveries"
ref_pointer = "/id"
%[4]s[providers.lookup]
url = "http://%[3]s/v1/%[1]s/deliveries/{downstream_key}"
ref_pointer = "/id"

`, p.name, p.honours, addr, hdr.String())
	}
	def := string(config.DefaultTOML())
	b.WriteString(def[strings.Index(def, "[[tools]]"):])
	return []byte(b.String())
}

// stop ends the server and removes its config; a second stop does nothing.
func (s *sandboxServer) stop() {
	if s.stopped {
		return
	}
	s.stopped = true
	if s.cmd.Process != nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}
