package cli

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
)

// versionInfo is what `retrysafe version --json` prints.
type versionInfo struct {
	Version  string `json:"version"`            // module version, "(devel)" for a local build
	Commit   string `json:"commit,omitempty"`   // vcs.revision
	Time     string `json:"time,omitempty"`     // vcs.time
	Modified bool   `json:"modified,omitempty"` // built from a tree with uncommitted changes
	Go       string `json:"go"`
}

// buildVersion reads the version the Go toolchain stamped into the binary.
func buildVersion() versionInfo {
	v := versionInfo{Version: "(unknown)"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v.Version, v.Go = bi.Main.Version, bi.GoVersion
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("version", stderr)
	asJSON := fs.Bool("json", false, "print it as one JSON object")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	v := buildVersion()
	if *asJSON {
		fmt.Fprintln(stdout, jsonLine(v))
		return exitOK
	}
	line := "retrysafe " + v.Version
	if v.Commit != "" {
		line += " commit " + v.Commit
		if v.Modified {
			line += " (modified)"
		}
	}
	if v.Time != "" {
		line += " " + v.Time
	}
	fmt.Fprintln(stdout, show(line+" "+v.Go))
	return exitOK
}
