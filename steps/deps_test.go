package steps_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

const modulePath = "github.com/custody-sh/custody"

// stepsLayer is where one package below steps/ stands (decision 0230).
type stepsLayer int

const (
	// layerLeaf: a helper below the core that the core and every feature
	// share. It imports nothing of steps/.
	layerLeaf stepsLayer = iota
	// layerBase: a mechanism of the core's kept in its own package below
	// it (quarantine). It imports only leaves; what it needs of the core
	// it is given as values (quarantine.Env).
	layerBase
	// layerCore: the lifecycle (package steps itself). It imports leaves
	// and base packages, never a feature: features are registered by
	// cmd/custody.
	layerCore
	// layerFeature: a feature. It imports the core and leaves, and no
	// other feature except the ones its entry names, each with the reason.
	layerFeature
	// layerRoot: the composition root below steps/ (steps/custody, the
	// façade, decision 0260). It builds the core's Env and registers
	// every feature in it, so it may import the core, leaves and every
	// feature; no package of steps/ imports it (only cmd/custody and
	// programs that embed custody do), so no feature reaches another
	// through it and the core never reaches a feature.
	layerRoot
)

// stepsPackage is one package of steps/ and who it may import.
type stepsPackage struct {
	layer stepsLayer
	// why says what the package holds.
	why string
	// features are the features (by path below steps/) a feature may
	// import, each with the reason the dependency is genuine.
	features map[string]string
}

// stepsPackages lists every package of steps/, by path below the module.
// A package that is not listed fails TestStepsLayers until it is placed.
var stepsPackages = map[string]stepsPackage{
	"steps/beneath":    {layer: layerLeaf, why: "writes that never leave a target directory"},
	"steps/failpoint":  {layer: layerLeaf, why: "the failpoint build's kill and pause points"},
	"steps/quarantine": {layer: layerBase, why: "how every removal deletes a tree: quarantine, checked deletion, put back"},
	"steps":            {layer: layerCore, why: "the worktree lifecycle: env, fire, runner, new, adopt, finish, relocate, plan, apply, remove, quarantine, resume, durable writes, and the seams its features fill"},
	"steps/report":     {layer: layerFeature, why: "the journal report and head signatures"},
	"steps/agents":     {layer: layerFeature, why: "agent hooks and the Claude Code and Codex settings editors"},
	"steps/archive":    {layer: layerFeature, why: "archives: capture, verify, restore, strip, prune, and removal's proof kind archive"},
	"steps/migrate": {layer: layerFeature, why: "migration of a legacy worktree layout",
		features: map[string]string{"steps/archive": "a legacy tree disposed of by archive is captured (or found covered) before it is retired"}},
	"steps/resource": {layer: layerFeature, why: "the resource ledger: provision, ensure, teardown, orphan GC"},
	"steps/land":     {layer: layerFeature, why: "custody land: a tree's branch integrated into its proving remote's default branch without a checkout, pushed under a lease, then the tree removed on the fresh proof"},
	"steps/sweep":    {layer: layerFeature, why: "custody sweep: build output of idle trees discarded, finished work archived through the core's Archives seam, the daily timer"},
	"steps/custody":  {layer: layerRoot, why: "the façade: one repository's custody opened with injected ports, and the one constructor of the core's Env, which registers the features"},
}

// lowerTop are the top-level folders below steps/ that steps may import
// (DESIGN §2): decisions, observations and the store.
var lowerTop = []string{"machine", "observe", "store"}

// goPackage is what go list says of one package.
type goPackage struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// listSteps asks the go command for every package of steps/ with its
// direct imports and its whole dependency graph.
func listSteps(t *testing.T) []goPackage {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found: the layers are checked where go list runs")
	}
	cmd := exec.Command(gobin, "list", "-json=ImportPath,Imports,Deps", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []goPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 2 {
		t.Fatalf("go list listed %d packages of steps/; the check saw nothing", len(pkgs))
	}
	return pkgs
}

// own is path below the module ("" for a package that is not ours).
func own(path string) (string, bool) {
	rel, ok := strings.CutPrefix(path, modulePath+"/")
	return rel, ok
}

// TestStepsLayers: the core lists no feature among its dependencies (not
// even indirectly), a leaf imports nothing of steps/, a feature imports
// no other feature but the ones its entry names, and nothing of steps/
// reaches the composition root, which alone may import every feature. Every package of
// steps/ is placed in stepsPackages, and reaches nothing of ours above the
// lower layers (cmd/custody, fixtures).
func TestStepsLayers(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, p := range listSteps(t) {
		rel, ok := own(p.ImportPath)
		if !ok {
			t.Fatalf("go list named %s, outside the module", p.ImportPath)
		}
		seen[rel] = true
		pl, ok := stepsPackages[rel]
		if !ok {
			t.Errorf("%s is not placed: add it to stepsPackages as a leaf, or a feature with the features it needs", rel)
			continue
		}
		t.Run(strings.ReplaceAll(rel, "/", "_"), func(t *testing.T) {
			// Direct imports: what each layer may name.
			for _, imp := range p.Imports {
				dep, ok := own(imp)
				if !ok || isLower(dep) {
					continue
				}
				dl, placed := stepsPackages[dep]
				switch {
				case !placed:
					t.Errorf("%s imports %s, which is neither a lower layer (%s) nor a placed package of steps/", rel, dep, strings.Join(lowerTop, ", "))
				case dl.layer == layerRoot:
					t.Errorf("%s imports %s, the composition root: nothing in steps/ imports it; the core declares an interface, and the root fills it", rel, dep)
				case pl.layer == layerRoot:
					// The root may import the core, leaves and every feature.
				case pl.layer == layerLeaf:
					t.Errorf("%s imports %s: a leaf imports nothing of steps/", rel, dep)
				case pl.layer == layerBase && dl.layer != layerLeaf:
					t.Errorf("%s imports %s: a base package below the core imports only leaves; the core gives it what it needs as values", rel, dep)
				case pl.layer == layerCore && dl.layer == layerFeature:
					t.Errorf("%s imports the feature %s: the core never imports a feature; declare an interface in the core and let cmd/custody register the feature", rel, dep)
				case pl.layer == layerFeature && dl.layer == layerFeature && pl.features[dep] == "":
					t.Errorf("%s imports the feature %s: a feature imports no other feature unless stepsPackages names the dependency and why", rel, dep)
				}
			}
			// The whole graph: the core reaches no feature even through
			// a leaf or a lower layer, and nothing reaches cmd/ or fixtures/.
			for _, d := range p.Deps {
				dep, ok := own(d)
				if !ok {
					continue
				}
				if strings.HasPrefix(dep, "cmd/") || dep == "fixtures" || strings.HasPrefix(dep, "fixtures/") {
					t.Errorf("%s depends on %s: steps/ never reaches the CLI or the test fixtures", rel, dep)
				}
				if dl, placed := stepsPackages[dep]; placed && dl.layer == layerRoot && dep != rel {
					t.Errorf("%s depends on the composition root %s (go list -deps): nothing in steps/ reaches it", rel, dep)
				}
				if dl, placed := stepsPackages[dep]; placed && dl.layer == layerFeature {
					switch {
					case pl.layer == layerRoot:
						// The root registers every feature.
					case pl.layer != layerFeature:
						t.Errorf("%s depends on the feature %s (go list -deps): the core and its leaves reach no feature", rel, dep)
					case dep != rel && !reaches(rel, dep, map[string]bool{}):
						t.Errorf("%s depends on the feature %s through a package its entry does not name", rel, dep)
					}
				}
			}
		})
	}
	var missing []string
	for rel := range stepsPackages {
		if !seen[rel] {
			missing = append(missing, rel)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("stepsPackages lists packages go list does not: %v (remove them, or the check misses what replaced them)", missing)
	}
}

// isLower reports whether dep (below the module) is in a layer below
// steps/.
func isLower(dep string) bool {
	top, _, _ := strings.Cut(dep, "/")
	return slices.Contains(lowerTop, top)
}

// reaches reports whether feature from may depend on feature to through
// the dependencies its entry names (directly or through theirs).
func reaches(from, to string, visited map[string]bool) bool {
	if visited[from] {
		return false
	}
	visited[from] = true
	for f := range stepsPackages[from].features {
		if f == to || reaches(f, to, visited) {
			return true
		}
	}
	return false
}
