package observe_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const modulePath = "github.com/custody-sh/custody"

// layers says which packages of this module each package under observe/
// may import directly, and why. A package not listed here fails the test
// until it is placed.
var layers = map[string]struct {
	may []string
	why string
}{
	"observe/safefile":   {nil, "reads one file safely; a leaf"},
	"observe/writable":   {nil, "asks whether a directory can be written; a leaf"},
	"observe/lockholder": {nil, "reads the kernel's table of file locks: who holds a lock; a leaf"},
	"observe/hostio": {[]string{"machine", "observe/safefile"},
		"the primitives every observation stands on (the one runner, git's environment, a repository's identity, lstat identity, process liveness); it knows nothing of git's files or remotes"},
	"observe/gitfiles": {[]string{"machine", "observe/hostio", "observe/safefile"},
		"reads git's own files and answers exactly as git would, or says ask git; it knows nothing of remotes or proofs"},
	"observe/proof": {[]string{"machine", "observe/hostio", "observe/gitfiles", "observe/safefile"},
		"the proof search against remotes; it reads git's files only through gitfiles"},
	"observe": {[]string{"machine", "machine/bytejson", "observe/hostio", "observe/gitfiles", "observe/proof", "observe/safefile", "observe/writable"},
		"composes a tree's observation; the subpackages never import it"},
	"observe/internal/realgit": {nil, "runs the real git for the parser tests; a leaf"},
	"observe/internal/gitsandbox": {[]string{"machine", "observe/hostio", "observe/gitfiles", "observe/proof", "fixtures/testsize"},
		"the tests' git sandbox"},
	// Test-only packages (no code of their own, so no imports to list):
	// tests of observe and observe/proof split off so that no package's
	// tests outlast go test's package timeout on a busy machine.
	"observe/tests/hidden":          {nil, "tests of observe.HiddenState"},
	"observe/tests/knownclean":      {nil, "tests of observe's known-clean fast path and list's glance against git status"},
	"observe/proof/tests/histories": {nil, "tests of the proof search over awkward histories"},
	"observe/proof/tests/remotes":   {nil, "tests of the reading of remotes"},
}

// TestObserveLayers lists the direct imports of every package under
// observe/ (tests excluded) and fails on one its layer does not allow: a
// subpackage importing observe, or gitfiles importing proof, would be a
// cycle or a layer crossed.
func TestObserveLayers(t *testing.T) {
	t.Parallel()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	cmd := exec.Command(gobin, "list", "-json=ImportPath,Imports", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	seen := map[string]bool{}
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(p.ImportPath, modulePath+"/")
		seen[name] = true
		layer, ok := layers[name]
		if !ok {
			t.Errorf("%s is not placed in a layer: add it to layers with what it may import and why", name)
			continue
		}
		for _, imp := range p.Imports {
			own, ok := strings.CutPrefix(imp, modulePath+"/")
			if !ok {
				continue
			}
			allowed := false
			for _, m := range layer.may {
				allowed = allowed || m == own
			}
			if !allowed {
				t.Errorf("%s imports %s; it may import only %v: %s", name, own, layer.may, layer.why)
			}
		}
	}
	var missing []string
	for name := range layers {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("go list did not list %v: the check saw less than the layers name", missing)
	}
}
