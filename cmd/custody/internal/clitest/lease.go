package clitest

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
)

// PutLeases writes leases straight into the repository's store.
func PutLeases(t *testing.T, r *fixtures.Repo, leases ...machine.Lease) {
	t.Helper()
	st, err := store.Open(filepath.Join(r.Dir, ".git", "custody", "state.db"), 5*time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leases {
		if err := st.PutLease(l); err != nil {
			t.Fatal(err)
		}
	}
}
