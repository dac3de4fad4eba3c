package machine_test

import (
	"strings"
	"testing"

	"github.com/custody-sh/custody/machine"
)

// TestParseArchiveManifestTrailing: anything after the manifest's object,
// even a stray "}" or "]" that json.Decoder.More lets pass, is refused.
func TestParseArchiveManifestTrailing(t *testing.T) {
	for _, tail := range []string{"}", "]", " {}", "x"} {
		_, r := machine.ParseArchiveManifest("/a", []byte(`{"format":"`+machine.ArchiveFormat+`"}`+tail))
		if r == nil || r.Code != machine.CodeArchiveInvalid || !strings.Contains(r.Message, "trailing data") {
			t.Errorf("manifest followed by %q: %+v, want archive-invalid for trailing data", tail, r)
		}
	}
}
