package machine_test

import (
	"testing"

	"github.com/custody-sh/custody/machine"
)

// TestAdminKeyOrID: the stored admin key wins; a record that stores none
// names its admin entry by its id.
func TestAdminKeyOrID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		rec  machine.Record
		want string
	}{
		{"key stored", machine.Record{ID: "x-1a2b3c", AdminKey: "legacy"}, "legacy"},
		{"key equals id", machine.Record{ID: "x-1a2b3c", AdminKey: "x-1a2b3c"}, "x-1a2b3c"},
		{"no key stored", machine.Record{ID: "x-1a2b3c"}, "x-1a2b3c"},
	}
	for _, tt := range tests {
		if got := tt.rec.AdminKeyOrID(); got != tt.want {
			t.Errorf("%s: AdminKeyOrID() = %q, want %q", tt.name, got, tt.want)
		}
	}
}
