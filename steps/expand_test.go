package steps

import (
	"os/exec"
	"testing"
)

// TestExpandInsideDoubleQuotes: a token expands to its value wherever a
// person writes it, including inside double quotes, the usual way to quote
// a path in sh: `mkdir "$HOME/dbs/@resource@"` makes the directory an
// unquoted destroy of @resource@ removes, so the resource does not leak.
func TestExpandInsideDoubleQuotes(t *testing.T) {
	t.Parallel()
	vals := map[string]string{"dir": "/srv/a b", "resource": "shop-x-1a2b3c-db"}
	cmd := expand(`printf '%s|%s' "@dir@/cache" "/var/lib/@resource@"`, vals)
	out, err := exec.Command("/bin/sh", "-c", cmd).Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "/srv/a b/cache|/var/lib/shop-x-1a2b3c-db"; string(out) != want {
		t.Errorf("sh -c %q printed %q, want %q", cmd, out, want)
	}
}
