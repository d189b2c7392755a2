package cli

import (
	"io"
	stdlog "log"
	"log/slog"
	"slices"
	"sync"
)

// stdLogRoute is where the standard library's log goes while serve or mcp
// runs (routeStdLog): the log of the server that started last among those
// running (several run in one process in tests); with none, back where
// it went before the first.
var stdLogRoute struct {
	sync.Mutex
	to     []io.Writer // each running server's, last started last
	prev   io.Writer
	flags  int
	prefix string
}

type stdLogWriter struct{}

func (stdLogWriter) Write(p []byte) (int, error) {
	stdLogRoute.Lock()
	defer stdLogRoute.Unlock()
	if n := len(stdLogRoute.to); n > 0 {
		return stdLogRoute.to[n-1].Write(p)
	}
	return stdLogRoute.prev.Write(p)
}

// routeStdLog sends what the standard library logs through the package
// log — net/http's client prints "Unsolicited response received on idle
// HTTP channel …" when a provider writes on an idle connection — through
// log, at warn: one record of the server's log (sanitized as its others),
// not a raw line on stderr among its JSON. stop ends it: the standard
// library's log goes back where it went before.
func routeStdLog(log *slog.Logger) (stop func()) {
	stdLogRoute.Lock()
	defer stdLogRoute.Unlock()
	w := slog.NewLogLogger(log.Handler(), slog.LevelWarn).Writer()
	if len(stdLogRoute.to) == 0 {
		stdLogRoute.prev, stdLogRoute.flags, stdLogRoute.prefix = stdlog.Writer(), stdlog.Flags(), stdlog.Prefix()
		stdlog.SetFlags(0)
		stdlog.SetPrefix("")
		stdlog.SetOutput(stdLogWriter{})
	}
	stdLogRoute.to = append(stdLogRoute.to, w)
	return func() {
		stdLogRoute.Lock()
		defer stdLogRoute.Unlock()
		i := slices.Index(stdLogRoute.to, w)
		if i < 0 {
			return
		}
		stdLogRoute.to = slices.Delete(stdLogRoute.to, i, i+1)
		if len(stdLogRoute.to) == 0 {
			stdlog.SetOutput(stdLogRoute.prev)
			stdlog.SetFlags(stdLogRoute.flags)
			stdlog.SetPrefix(stdLogRoute.prefix)
		}
	}
}
