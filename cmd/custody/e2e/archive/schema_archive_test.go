//go:build unix

package archive

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestSchemaArchiveManifest validates a real archive's manifest.json (a
// tree with every kind of content: commits, changes, ignored files, a
// nested repository, an empty directory) against
// docs/schemas/archive-manifest.json, and a manifest with a property the
// type does not have against it fails.
func TestSchemaArchiveManifest(t *testing.T) {
	t.Parallel()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	id, wt := clitest.NewTree(t, r, "spike")
	clitest.FillEveryKind(t, r, wt)
	a := clitest.CreateArchive(t, r, id)
	b := mustRead(t, filepath.Join(a.Dir, machine.ArchiveManifestName))
	clitest.ValidateSchema(t, "archive-manifest.json", "a sealed archive's manifest", b)

	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if n, _ := m["nested"].([]any); len(n) == 0 {
		t.Fatalf("the manifest lists no nested repository: the check would not cover its schema:\n%s", b)
	}
	m["surprise"] = true
	forged, _ := json.Marshal(m)
	v, _ := jsonschema.UnmarshalJSON(bytes.NewReader(forged))
	if clitest.CompileSchema(t, "archive-manifest.json").Validate(v) == nil {
		t.Error("a manifest with an unknown property validates")
	}
}
