package sandbox

// OpenUnwritable opens path as a process that may not write it does (SQLite
// opens the file read-only), whoever runs the test: root may write any file.
func OpenUnwritable(path string) (*Sandbox, error) { return open(path, true) }
