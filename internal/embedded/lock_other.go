//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package embedded

// lockDir is a no-op where flock is unavailable: the data dir is then not
// protected against a second process.
func lockDir(string) (func(), error) { return func() {}, nil }
