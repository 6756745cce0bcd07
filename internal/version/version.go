// Package version says which build of krl is running: the release version
// the release script stamps in, and what the Go toolchain and the Kafka
// client record about the build itself.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// Version is the release, set with -ldflags "-X
// github.com/kafka-recovery-lab/krl/internal/version.Version=V" by
// scripts/release.sh; "dev" for any other build.
var Version = "dev"

// Info is what `krl --version` prints.
type Info struct {
	Version    string
	Commit     string // vcs.revision, "unknown" when the build did not stamp it
	CommitTime string // vcs.time
	Modified   bool   // vcs.modified: built from a tree with uncommitted changes
	Go         string
	Librdkafka string
	Platform   string
}

// Read collects the Info of the running binary.
func Read() Info {
	info := Info{Version: Version, Commit: "unknown", CommitTime: "unknown", Go: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	_, info.Librdkafka = kafka.LibraryVersion()
	if bi, ok := debug.ReadBuildInfo(); ok {
		info.apply(bi.Settings)
	}
	return info
}

// apply reads the vcs.* settings the go command stamps with -buildvcs.
func (i *Info) apply(settings []debug.BuildSetting) {
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			i.Commit = s.Value
		case "vcs.time":
			i.CommitTime = s.Value
		case "vcs.modified":
			i.Modified = s.Value == "true"
		}
	}
}

// String is the text of `krl --version`: one fact a line.
func (i Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "krl %s\n", i.Version)
	commit := i.Commit
	if i.Modified {
		commit += " (with uncommitted changes)"
	}
	fmt.Fprintf(&b, "commit      %s\n", commit)
	fmt.Fprintf(&b, "commit date %s\n", i.CommitTime)
	fmt.Fprintf(&b, "go          %s %s\n", i.Go, i.Platform)
	fmt.Fprintf(&b, "librdkafka  %s\n", i.Librdkafka)
	return b.String()
}
