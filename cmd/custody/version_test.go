package main

import (
	"debug/buildinfo"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

func TestVersionText(t *testing.T) {
	t.Parallel()
	info := func(mod string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/custody-sh/custody", Version: mod}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	for _, tt := range []struct {
		name    string
		version string
		info    *debug.BuildInfo
		want    string
	}{
		{"set at build time wins", "v1.2.0", info("v0.9.0", "vcs.revision", "abc"), "v1.2.0"},
		{"no build info", "dev", nil, "dev"},
		{"go install of a tagged module", "dev", info("v0.4.1"), "v0.4.1"},
		{"a local build with VCS", "dev", info("(devel)", "vcs.revision", "95ec64d1", "vcs.modified", "false"), "dev (revision 95ec64d1)"},
		{"a local build with changes", "dev", info("(devel)", "vcs.revision", "95ec64d1", "vcs.modified", "true"), "dev (revision 95ec64d1, modified)"},
		{"a pseudo-version with VCS", "dev", info("v0.0.0-20261201142734-95ec64d1e2f3+dirty", "vcs.revision", "95ec64d1e2f3", "vcs.modified", "true"),
			"v0.0.0-20261201142734-95ec64d1e2f3+dirty (revision 95ec64d1e2f3, modified)"},
		{"no VCS recorded", "dev", info("(devel)", "vcs", "git"), "dev"},
	} {
		if got := versionText(tt.version, tt.info); got != tt.want {
			t.Errorf("%s: versionText(%q) = %q, want %q", tt.name, tt.version, got, tt.want)
		}
	}
}

// TestVersionFlag: the binary's --version is what its own build
// information says (read from the file, as `go version -m` does).
func TestVersionFlag(t *testing.T) {
	t.Parallel()
	bi, err := buildinfo.ReadFile(clitest.Bin())
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(clitest.Bin(), "--version").Output()
	if err != nil {
		t.Fatalf("custody --version: %v", err)
	}
	if got, want := strings.TrimSpace(string(out)), "custody "+versionText("dev", bi); got != want {
		t.Errorf("custody --version = %q, want %q", got, want)
	}
}

// TestVersionFromVCS builds custody with VCS stamping on, from this
// checkout, and checks --version names the commit it was built from.
func TestVersionFromVCS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds custody again")
	}
	t.Parallel()
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not built from a git checkout (%v): no revision to stamp", err)
	}
	bin := filepath.Join(t.TempDir(), "custody")
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -buildvcs=true: %v\n%s", err, out)
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	stamped := false
	for _, s := range bi.Settings {
		stamped = stamped || s.Key == "vcs.revision"
	}
	if !stamped {
		// The go command finds no repository where .git is a file (a
		// linked worktree of this repository).
		t.Skip("go build stamped no VCS revision here: nothing to check --version against")
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("custody --version: %v", err)
	}
	want := regexp.MustCompile(`\Acustody \S+ \(revision ` + strings.TrimSpace(string(head)) + `(, modified)?\)\n\z`)
	if !want.Match(out) {
		t.Errorf("custody --version = %q, want it to match %s", out, want)
	}
}
