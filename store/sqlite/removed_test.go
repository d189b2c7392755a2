package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/store"
)

// A ledger file removed while a store has it open is never made again
// under its name: every pooled connection opens an existing ledger with
// mode=rw, so a connection the pool opens after the removal fails instead
// of creating an empty database there. Before, a console left open on a
// removed ledger made a new 4096-byte file (and its -wal, -shm) on its next
// read, and every later command and agent's call was refused: "not a
// retrysafe ledger".
func TestARemovedLedgerIsNeverRecreatedByAnOpenStore(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts store.Options
	}{
		{"writable", store.Options{}},
		{"read-only", store.Options{ReadOnly: true}},
		{"reads on the writer", store.Options{ReadOnWriter: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "ledger.db")
			made, err := Open(path, store.Options{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := made.WithTx(ctx, func(tx store.Tx) error { return insertOp(tx, "before") }); err != nil {
				t.Fatal(err)
			}
			made.Close()
			s, err := Open(path, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Get(ctx, "t", "before"); err != nil {
				t.Fatal(err)
			}
			for _, suffix := range []string{"", "-wal", "-shm"} {
				if err := os.Remove(path + suffix); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
			}
			// The pools' idle connections still hold the old file: drop
			// them, so that every read and write below opens a new one,
			// as a long-lived console's pool does in time.
			s.r.SetMaxIdleConns(0)
			s.r.SetMaxIdleConns(4)
			s.r.SetConnMaxLifetime(time.Nanosecond)
			ops := []struct {
				name string
				run  func() error
			}{
				{"get", func() error { _, err := s.Get(ctx, "t", "before"); return err }},
				{"detail", func() error { _, err := s.Detail(ctx, "t", "before"); return err }},
				{"list", func() error { _, err := s.List(ctx, store.ListQuery{Limit: 10}); return err }},
				{"counts", func() error { _, err := s.Counts(ctx, ""); return err }},
				{"watch", func() error {
					w, err := s.Watch(ctx)
					if err == nil {
						_, err = w.Changed(ctx)
						w.Close()
					}
					return err
				}},
			}
			if !tc.opts.ReadOnly {
				ops = append(ops, struct {
					name string
					run  func() error
				}{"write", func() error {
					return s.WithTx(ctx, func(tx store.Tx) error { return insertOp(tx, "after") })
				}})
			}
			for _, op := range ops {
				err := op.run()
				for _, suffix := range []string{"", "-wal", "-shm"} {
					if _, serr := os.Stat(path + suffix); serr == nil {
						t.Fatalf("%s after the ledger was removed (err %v) made %s again", op.name, err, filepath.Base(path+suffix))
					}
				}
			}
		})
	}
}
