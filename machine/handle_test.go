package machine_test

import (
	"testing"

	"github.com/custody-sh/custody/machine"
)

// TestIdentFitsIdentifierLimit: @resource_ident@ is SQL-identifier safe and
// unique across worktrees. PostgreSQL (and a DNS label, for a dev server's
// host name) keeps only 63 bytes, so an ident is at most 63 bytes, and two
// worktrees' idents differ within them, even for a long project slug and
// worktree name.
func TestIdentFitsIdentifierLimit(t *testing.T) {
	t.Parallel()
	slug := machine.SanitizeSlug("acme-enterprise-platform-monorepo")
	name := "implement the new billing pipeline for enterprise customers"
	a := machine.Ident(machine.Handle(slug, machine.WorktreeID(name, [3]byte{1, 2, 3}), "analytics_db"))
	b := machine.Ident(machine.Handle(slug, machine.WorktreeID(name, [3]byte{4, 5, 6}), "analytics_db"))
	if len(a) > 63 {
		t.Errorf("ident %q is %d bytes, more than an SQL identifier or DNS label holds (63)", a, len(a))
	}
	if len(a) > 63 && len(b) > 63 && a[:63] == b[:63] {
		t.Errorf("two worktrees' idents are the same in their first 63 bytes:\n%s\n%s", a, b)
	}
}
