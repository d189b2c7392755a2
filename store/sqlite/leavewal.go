package sqlite

import (
	"database/sql"
	"errors"
	"os"
	"reflect"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// leaveWALMaxBytes bounds the write-ahead log Close leaves in place
// (store.Options.LeaveWAL); a bigger log is merged into the file as before.
// A log left behind is not free for the next process: the first connection
// to open the ledger rebuilds SQLite's WAL index (-shm) by reading and
// checksumming the whole log. A replay appends about 8 KiB (two frames), so
// a 4 MiB bound made every call of a run of replays read 2 MiB on average
// (~1.5 ms of CPU per call here) to save one checkpoint in 500. At 256 KiB
// a run pays one checkpoint (a few fsyncs) about every 30 replays and reads
// 128 KiB on average.
const leaveWALMaxBytes = 256 << 10

// leaveWAL reports whether Close may skip the checkpoint: asked to, no
// durable commit made, and the log small.
func (s *Store) leaveWAL() bool {
	if !s.leaveWALAsked || s.ro || s.madeDurable.Load() {
		return false
	}
	st, err := os.Stat(s.path + "-wal")
	return err == nil && st.Size() <= leaveWALMaxBytes
}

var errNoDBConfig = errors.New("sqlite: the driver's connection has no handle to configure")

// noCheckpointOnClose makes closing the writer connection leave the WAL as
// it is (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE): no checkpoint, no fsync, no
// unlink. The driver has no API for sqlite3_db_config, so the connection's
// handle is read by name; a driver whose connection no longer looks like
// that gets errNoDBConfig, and Close checkpoints as it always did.
func noCheckpointOnClose(c *sql.Conn) error {
	return c.Raw(func(dc any) error {
		v := reflect.ValueOf(dc)
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			return errNoDBConfig
		}
		db, tlsField := v.Elem().FieldByName("db"), v.Elem().FieldByName("tls")
		if !db.IsValid() || db.Kind() != reflect.Uintptr || db.Uint() == 0 ||
			!tlsField.IsValid() || tlsField.Type() != reflect.TypeFor[*libc.TLS]() {
			return errNoDBConfig
		}
		tls := *(**libc.TLS)(unsafe.Pointer(tlsField.UnsafeAddr()))
		if tls == nil {
			return errNoDBConfig
		}
		// sqlite3_db_config(db, op, int onoff, int *pRes): the varargs
		// laid out as the driver's own dbConfigBool does, 8 bytes a slot.
		va := libc.Xmalloc(tls, types.Size_t(16))
		if va == 0 {
			return errNoDBConfig
		}
		defer libc.Xfree(tls, va)
		if rc := sqlite3.Xsqlite3_db_config(tls, uintptr(db.Uint()), sqlite3.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
			libc.VaList(va, int32(1), uintptr(0))); rc != sqlite3.SQLITE_OK {
			return errNoDBConfig
		}
		return nil
	})
}
