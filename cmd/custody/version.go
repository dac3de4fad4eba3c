package main

import (
	"runtime/debug"
	"strings"
)

// versionText is what --version prints after "custody ": the version set
// at build time (-ldflags "-X main.version=v1.2.3") or, for a "dev"
// build, what the Go toolchain recorded in the binary: the main module's
// version, the VCS revision it was built from, and whether the checkout
// had changes. info is nil when the binary carries no build information.
func versionText(v string, info *debug.BuildInfo) string {
	if v != "dev" || info == nil {
		return v
	}
	words := []string{v}
	if mv := info.Main.Version; mv != "" && mv != "(devel)" {
		words = []string{mv}
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		r := "revision " + rev
		if modified == "true" {
			r += ", modified"
		}
		words = append(words, "("+r+")")
	}
	return strings.Join(words, " ")
}

// buildVersion is versionText for this binary.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return versionText(version, info)
}
