//go:build unix

package archive

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps/archive"
)

// amModes are the modes TestArchiveRestoreModes gives a tree: files
// 0600, 0700, 0755, 0644 and 0640, directories 0700, setgid 2775 and
// sticky 1777, an empty directory 0700.
var amModes = []struct {
	path string
	dir  bool
	mode fs.FileMode
}{
	{"secret", true, 0o700},
	{"secret/id_ed25519", false, 0o600},
	{".env.local", false, 0o600},
	{"deploy.sh", false, 0o700},
	{"run.sh", false, 0o755},
	{"README.md", false, 0o644},
	{"group.txt", false, 0o640},
	{"shared", true, 0o775 | fs.ModeSetgid},
	{"shared/notes.md", false, 0o664},
	{"tmp", true, 0o777 | fs.ModeSticky},
	{"tmp/scratch", false, 0o644},
	{"private-empty", true, 0o700},
}

// amMode is the mode of p as a restore is asked to give it back.
func amMode(t *testing.T, p string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode() & (fs.ModePerm | fs.ModeSetgid | fs.ModeSticky | fs.ModeSetuid)
}

// amTree fills wt with amModes (each chmod'ed after it is written, so the
// umask has no say) and returns the tree's own mode, set to 0750.
func amTree(t *testing.T, r *fixtures.Repo, wt string) {
	t.Helper()
	for _, e := range amModes {
		p := filepath.Join(wt, e.path)
		if e.dir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		} else {
			r.WriteFile(wt, e.path, "content of "+e.path+"\n")
		}
	}
	r.GitIn(wt, "add", "README.md", "run.sh")
	r.GitIn(wt, "commit", "-q", "-m", "tracked")
	// Directories last and deepest first, so their bits are the last word.
	for i := len(amModes) - 1; i >= 0; i-- {
		if e := amModes[i]; !e.dir {
			if err := os.Chmod(filepath.Join(wt, e.path), e.mode); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, e := range amModes {
		if e.dir {
			if err := os.Chmod(filepath.Join(wt, e.path), e.mode); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Chmod(wt, 0o750); err != nil {
		t.Fatal(err)
	}
	for _, e := range amModes {
		if got := amMode(t, filepath.Join(wt, e.path)); got != e.mode {
			t.Skipf("this filesystem keeps %s as %v, not %v", e.path, got, e.mode)
		}
	}
}

// TestArchiveRestoreModes: files 0600/0700/0755/0644/0640/0664, a 0700
// directory, a setgid and a sticky directory, an empty 0700 directory and
// the tree's own 0750 come back as captured, whatever the umask; the
// manifest records them and validates against its schema; a chmod after
// the capture makes the archive stale; the same archive with its modes
// taken out (as one made before custody recorded them) restores as
// restores did, and says so.
func TestArchiveRestoreModes(t *testing.T) {
	t.Parallel()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	id, wt := clitest.NewTree(t, r, "modes")
	amTree(t, r, wt)
	a := clitest.CreateArchive(t, r, id)
	body := mustRead(t, filepath.Join(a.Dir, machine.ArchiveManifestName))
	clitest.ValidateSchema(t, "archive-manifest.json", "a manifest with modes", body)
	m, ref := machine.ParseArchiveManifest(a.Dir, body)
	if ref != nil || m.Modes == nil || m.Modes.Root != "0750" {
		t.Fatalf("the manifest records modes %+v (%v), want them with root 0750", m.Modes, ref)
	}

	dst := filepath.Join(t.TempDir(), "restored")
	res := clitest.RunBin(t, clitest.Bin(), r, r.Root, nil, "--json", "archive", "restore", a.Dir, dst)
	out := clitest.DecodeResult[archive.ArchiveRestored](t, res, "archive restore")
	if out.Modes != archive.ModesAsCaptured || len(out.ModesNotKept) != 0 {
		t.Errorf("restore = %+v, want modes as captured, none narrowed", out)
	}
	for _, e := range amModes {
		if got := amMode(t, filepath.Join(dst, e.path)); got != e.mode {
			t.Errorf("%s came back %v, captured %v", e.path, got, e.mode)
		}
	}
	if got := amMode(t, dst); got != 0o750 {
		t.Errorf("the tree's own directory came back %v, captured 0750", got)
	}

	// A chmod after the capture: the archive no longer equals the tree.
	if err := os.Chmod(filepath.Join(wt, ".env.local"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := arVerify(t, r, a.ID); c.Fresh == "equal" || len(c.Problems) == 0 || c.Problems[0].Code != machine.CodeArchiveStale ||
		!strings.Contains(c.Problems[0].Message, ".env.local") {
		t.Errorf("verify after a chmod: %+v, want archive-stale naming .env.local", c)
	}

	// The manifest as an archive made before modes were recorded.
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	delete(raw, "modes")
	old, err := json.MarshalIndent(raw, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(a.Dir, machine.ArchiveManifestName), old, 0o600); err != nil {
		t.Fatal(err)
	}
	dst = filepath.Join(t.TempDir(), "old")
	res = clitest.RunBin(t, clitest.Bin(), r, r.Root, nil, "archive", "restore", a.Dir, dst)
	if res.Code != 0 || !strings.Contains(res.Stdout, "records no permission bits (it was made before custody recorded them)") {
		t.Fatalf("restore of an archive without modes: want exit 0 and a note that it records none\n%s", res)
	}
	for _, e := range amModes {
		if e.dir {
			continue
		}
		want := fs.FileMode(0o644)
		if e.mode&0o100 != 0 {
			want = 0o755
		}
		if got := amMode(t, filepath.Join(dst, e.path)); got != want {
			t.Errorf("old archive: %s came back %v, want %v as restores always gave", e.path, got, want)
		}
	}
}

// TestArchiveRestoreRefusesLinkEscape is the archive at the
// command line: a tree holding the link evil -> an outside directory
// (archived as it is), whose manifest then names the empty directory
// evil/d. The restore exits 1 with one paragraph and its retry, writes
// nothing (the target does not exist), and the outside directory is
// untouched.
func TestArchiveRestoreRefusesLinkEscape(t *testing.T) {
	t.Parallel()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	id, wt := clitest.NewTree(t, r, "escape")
	outside := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(wt, "evil")); err != nil {
		t.Fatal(err)
	}
	a := clitest.CreateArchive(t, r, id)
	p := filepath.Join(a.Dir, machine.ArchiveManifestName)
	var raw map[string]any
	if err := json.Unmarshal(mustRead(t, p), &raw); err != nil {
		t.Fatal(err)
	}
	raw["empty_dirs"] = []string{"evil/d"}
	b, _ := json.MarshalIndent(raw, "", "  ")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "dst")
	res := clitest.RunBin(t, clitest.Bin(), r, r.Root, nil, "archive", "restore", a.Dir, dst)
	want := "custody archive restore [archive-invalid]: archive " + a.ID + " in " + a.Dir +
		` is refused, nothing was written: "evil/d" lies below "evil", a symbolic link; a restore writes only inside its target and through no symbolic link` + "\n" +
		"\tto retry: custody archive verify '" + a.Dir + "'\n"
	if res.Code != 1 || res.Stdout != "" || res.Stderr != want {
		t.Errorf("restore of an escaping archive:\n%s\nwant exit 1 and stderr\n%s", res, want)
	}
	if ents, err := os.ReadDir(outside); err != nil || len(ents) != 0 {
		t.Errorf("the outside directory holds %v (%v)", ents, err)
	}
	if _, err := os.Lstat(dst); !os.IsNotExist(err) {
		t.Errorf("the target was made: %v", err)
	}
}
