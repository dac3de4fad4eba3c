package steps

// Review of issue 4: tests named TestReviewBug* fail on the code as
// reviewed and assert the behaviour the issue asks for.

import (
	"os/exec"
	"testing"
)

// TestReviewBugExpandInsideDoubleQuotes: a token is expanded to its value
// wherever a person writes it, including inside double quotes, the usual
// way to quote a path in sh. Observed: the single quotes custody adds are
// literal inside double quotes, so `mkdir "$HOME/dbs/@resource@"` makes a
// directory named 'handle' (quotes included) while an unquoted destroy
// removes handle: the resource leaks.
func TestReviewBugExpandInsideDoubleQuotes(t *testing.T) {
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
