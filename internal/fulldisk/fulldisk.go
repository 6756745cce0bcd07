// Package fulldisk gives tests a disk that fills up: a small tmpfs mounted
// on a directory of theirs, and a file that takes every byte left on it.
// Writes there then fail with ENOSPC, as on any full disk. Mounting needs
// root (CI runs as root); elsewhere the tests skip, saying why.
package fulldisk

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// Disk is a mounted tmpfs.
type Disk struct {
	Dir  string
	fill string
}

// Mount mounts a tmpfs of size bytes on a new directory and unmounts it
// when the test ends (before its temporary directories are removed). It
// skips the test when mounting is not permitted.
func Mount(t testing.TB, size int64) *Disk {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("a full disk needs a tmpfs mount (root): mount failed: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			// Lazily, when a child still holds a file on it.
			if out2, err2 := exec.Command("umount", "-l", dir).CombinedOutput(); err2 != nil {
				t.Errorf("umount %s: %v: %s; %v: %s", dir, err, out, err2, out2)
			}
		}
	})
	return &Disk{Dir: dir, fill: filepath.Join(dir, ".fill")}
}

// Fill writes a file that takes all the space left: writes on the disk
// fail with ENOSPC from now on, until Free.
func (d *Disk) Fill(t testing.TB) {
	t.Helper()
	f, err := os.OpenFile(d.fill, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("fill %s: %v", d.Dir, err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v", d.Dir, err)
			}
			break
		}
	}
	// Byte by byte, the last page's remainder.
	for {
		if _, err := f.Write(chunk[:1]); err != nil {
			return
		}
	}
}

// Free removes the file Fill wrote.
func (d *Disk) Free(t testing.TB) {
	t.Helper()
	if err := os.Remove(d.fill); err != nil {
		t.Fatalf("free %s: %v", d.Dir, err)
	}
}
