package observe

import (
	"errors"
	"testing"
)

// TestConfigPortSpanOverflow: port_base + port_span - 1 must fit 65535,
// computed without overflow: a huge port_span is a config error naming
// worktree.port_span, so @port@ is never a number above 65535.
func TestConfigPortSpanOverflow(t *testing.T) {
	t.Parallel()
	doc := "[worktree]\nport_base = 20000\nport_span = 9223372036854775807\n"
	c, err := ParseConfig("custody.toml", []byte(doc), "repo")
	if !errors.Is(err, ErrConfig) {
		t.Errorf("ParseConfig accepted port_span = 9223372036854775807 (got %+v, %v); want an error naming worktree.port_span", c, err)
	}
}
