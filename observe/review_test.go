package observe

// Review of issue 4: tests named TestReviewBug* fail on the code as
// reviewed and assert the behaviour the issue asks for.

import (
	"errors"
	"testing"
)

// TestReviewBugPortSpanOverflow: port_base + port_span - 1 must fit 65535.
// Observed: a huge port_span overflows the int sum, passes the check, and
// @port@ can then be a number above 65535.
func TestReviewBugPortSpanOverflow(t *testing.T) {
	t.Parallel()
	doc := "[worktree]\nport_base = 20000\nport_span = 9223372036854775807\n"
	c, err := ParseConfig("custody.toml", []byte(doc), "repo")
	if !errors.Is(err, ErrConfig) {
		t.Errorf("ParseConfig accepted port_span = 9223372036854775807 (got %+v, %v); want an error naming worktree.port_span", c, err)
	}
}
